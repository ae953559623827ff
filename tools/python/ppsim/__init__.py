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
__all__ = ["run", "compare", "sweep", "export", "check", "schedules", "models", "records", "InputError", "ScheduleError"]


def _settings_text(settings, origin):
    # Python's names cannot hold a dash; the config file's keys do, and never an underscore.
    try:
        return json.dumps({key.replace("_", "-"): value for key, value in settings.items()}, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InputError(f"{origin}: {error}") from None


def _pictures(svg, html, trace):
    return [os.fspath(path) if path is not None else "" for path in (svg, html, trace)]


def run(*, config=None, svg=None, html=None, trace=None, **settings):
    """One schedule, as ``ppsim run --format json``; ``config`` is read first, as ``-c``."""
    text = _settings_text(settings, "ppsim.run")
    return json.loads(_core.run(text, "ppsim.run", os.fspath(config or ""), *_pictures(svg, html, trace), False))


def compare(schedules=None, *, config=None, svg=None, html=None, trace=None, **settings):
    """Several schedules side by side (GPipe and 1F1B without ``schedules``), as ``ppsim compare``:
    a list with one result per schedule."""
    if schedules is not None:
        settings["schedule"] = schedules if isinstance(schedules, str) else list(schedules)
    text = _settings_text(settings, "ppsim.compare")
    return json.loads(_core.run(text, "ppsim.compare", os.fspath(config or ""), *_pictures(svg, html, trace), True))


def sweep(study, jobs=0, simulate_all=False):
    """Every point of a study (a dict, or the path of a study file) on ``jobs`` threads (0: every
    core): ``points`` as the .jsonl file holds them, the ``top`` and ``pareto_front`` points,
    ``choose_m`` (per schedule, p and v: the ``point`` with the smallest m at the bubble target,
    or the ``best`` that ran) and the ``summary`` text ``ppsim sweep`` prints."""
    if isinstance(study, (str, os.PathLike)):
        return json.loads(_core.sweep("", os.fspath(study), jobs, simulate_all))
    return json.loads(_core.sweep(_settings_text(study, "ppsim.sweep"), "", jobs, simulate_all))


def export(schedule, p, m, v=None, **settings):
    """A schedule's per-device actions, as ``ppsim export --format json``."""
    settings.update(schedule=schedule, p=p, m=m)
    if v is not None:
        settings["v"] = v
    return json.loads(_core.export_schedule(_settings_text(settings, "ppsim.export")))


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
