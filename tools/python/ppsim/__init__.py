"""ppsim from Python: the simulator of pipeline-parallel training schedules, without a subprocess.

Every function calls the library the ``ppsim`` command line calls (study/api.hpp) and returns what
the command's ``--format json`` output holds, as dicts and lists:

    >>> import ppsim
    >>> ppsim.run(schedule="1f1b", p=4, m=8)["bubble_ratio"]
    0.2727272727272727

Settings are the config file's keys (``ppsim run --help`` lists them); write them with underscores
or, through a dict, with dashes: ``activation_bytes="2 GiB"`` is ``{"activation-bytes": "2 GiB"}``.
Bad input raises ``InputError`` (a ``ValueError``), a schedule that is invalid or deadlocks
``ScheduleError`` (its ``grid`` shows where), with the command line's one-line messages.
"""

import json
import os

from . import _core
from ._core import InputError, ScheduleError

__version__ = _core.__version__
__git_revision__ = _core.__git_revision__  # the commit it was built from, as `ppsim --version` says
__all__ = ["run", "compare", "sweep", "merge", "export", "synth", "check", "formulas", "schedules", "models", "records",
           "InputError", "ScheduleError", "ExpectationError"]


class ExpectationError(AssertionError):
    """An ``expect`` that the figures miss (``--expect``'s exit 1): one line per failure, as the
    command line prints them; ``result`` holds what was computed."""

    def __init__(self, failures, result):
        super().__init__("\n".join(failures))
        self.failures = failures
        self.result = result


def _checked(answer):
    text, failures = answer
    result = json.loads(text)
    if failures:
        raise ExpectationError(failures, result)
    return result


def _settings_text(settings, origin):
    # Python's names cannot hold a dash; the config file's keys do, and never an underscore.
    try:
        return json.dumps({key.replace("_", "-"): value for key, value in settings.items()}, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InputError(f"{origin}: {error}") from None


def _texts(expect):
    return [expect] if isinstance(expect, str) else list(expect)


def _pictures(svg, html, trace):
    return [os.fspath(path) if path is not None else "" for path in (svg, html, trace)]


def run(*, config=None, svg=None, html=None, trace=None, expect=(), **settings):
    """One schedule, as ``ppsim run --format json``; ``config`` is read first, as ``-c``, and
    ``expect`` (``["bubble_ratio <= 0.1", "fits"]``) raises ExpectationError as --expect exits 1."""
    text = _settings_text(settings, "ppsim.run")
    pictures = _pictures(svg, html, trace)
    return _checked(_core.run(text, "ppsim.run", os.fspath(config or ""), *pictures, False, _texts(expect)))


def compare(schedules=None, *, config=None, svg=None, html=None, trace=None, expect=(), **settings):
    """Several schedules side by side (GPipe and 1F1B without ``schedules``), as ``ppsim compare``:
    a list with one result per schedule; every schedule must meet each of ``expect``."""
    if schedules is not None:
        settings["schedule"] = schedules if isinstance(schedules, str) else list(schedules)
    text = _settings_text(settings, "ppsim.compare")
    pictures = _pictures(svg, html, trace)
    return _checked(_core.run(text, "ppsim.compare", os.fspath(config or ""), *pictures, True, _texts(expect)))


def sweep(study, jobs=0, simulate_all=False, *, shard=None, output=None, html=None, summary=None, expect=()):
    """Every point of a study (a dict, or the path of a study file) on ``jobs`` threads (0: every
    core): ``points`` as the .jsonl file holds them, the ``top`` and ``pareto_front`` points,
    ``choose_m`` (per schedule, p and v: the ``point`` with the smallest m at the bubble target,
    or the ``best`` that ran) and the ``summary`` text ``ppsim sweep`` prints. As ``ppsim sweep``:
    ``shard="I/N"`` (or ``(I, N)``) runs one shard, ``output`` writes the points (.csv or .jsonl),
    ``html`` the page, ``summary`` the tables as JSON, and ``expect`` must hold for the top point."""
    if isinstance(shard, tuple):
        shard = f"{shard[0]}/{shard[1]}"
    files = [os.fspath(path) if path is not None else "" for path in (output, html, summary)]
    if isinstance(study, (str, os.PathLike)):
        text, path = "", os.fspath(study)
    else:
        text, path = _settings_text(study, "ppsim.sweep"), ""
    return _checked(_core.sweep(text, path, jobs, simulate_all, shard or "", *files, _texts(expect)))


def merge(output, files):
    """``ppsim merge``: joins the files of a sharded sweep into ``output``."""
    _core.merge(os.fspath(output), [os.fspath(path) for path in files])


def formulas(check=False, **settings):
    """``ppsim formulas [--check]``: ``report``, the text the command prints, and ``agreed``
    (whether every closed form matched the simulation; with ``check``, over its grid, narrowed by
    ``schedule``, ``p``, ``v`` and ``m``)."""
    return json.loads(_core.formulas(_settings_text(settings, "ppsim.formulas"), bool(check)))


def export(schedule, p, m, v=None, lowered=False, **settings):
    """A schedule's per-device actions, as ``ppsim export --format json``; with ``lowered``, in
    torch's lowered format (``ppsim export --lowered``): SEND/RECV and FSDP actions among them."""
    settings.update(schedule=schedule, p=p, m=m)
    if v is not None:
        settings["v"] = v
    return json.loads(_core.export_schedule(_settings_text(settings, "ppsim.export"), bool(lowered)))


def synth(memory_limit, *, placement=None, time_limit=None, output=None, **settings):
    """``ppsim synth --format json``: the figures of the best order found under ``memory_limit``
    (bytes, or text such as ``"6 GiB"``) per device, with ``synth`` (the search: origin, replays, the
    registry schedules within the limit); ``output`` writes the order as torch's CSV."""
    return json.loads(
        _core.synth(
            _settings_text(settings, "ppsim.synth"),
            str(memory_limit),
            placement or "",
            "" if time_limit is None else str(time_limit),
            "" if output is None else os.fspath(output),
        )
    )


def check(baseline, rtol=1e-9, atol=0.0, only=None):
    """``ppsim check``: re-runs the scenario stored in a ``--format json`` output (a path) and
    returns ``results`` and ``figures`` compared, the ``moved`` ones (figure, baseline, now,
    change) and the ``report`` the command prints; nothing moved when ``moved`` is empty."""
    return json.loads(_core.check(os.fspath(baseline), float(rtol), float(atol), list(only or [])))


def schedules():
    """The registry, as ``ppsim schedules --format json``."""
    return json.loads(_core.schedules())


def models():
    """The model and hardware presets, as ``ppsim models --format json``."""
    return json.loads(_core.models())


def records(results):
    """One flat dict per device of one result or a list of them (run or compare), for
    ``pandas.DataFrame(ppsim.records(...))``: the schedule's figures beside the device's."""
    results = [results] if isinstance(results, dict) else results
    rows = []
    for result in results:
        shared = {key: value for key, value in result.items() if not isinstance(value, (dict, list))}
        for device, figures in enumerate(result.get("per_device", [])):
            row = dict(shared, device=device)
            row.update({f"device_{key}": value for key, value in figures.items() if not isinstance(value, (dict, list))})
            rows.append(row)
    return rows
