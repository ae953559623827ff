# SPDX-License-Identifier: Apache-2.0
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

Every argument is validated here before the library sees it: a wrong type or shape (a number where
a path goes, a setting that is not JSON or nests deeper than 64 levels, a NUL character, ``jobs``
outside 0..4096) is an ``InputError`` that names the function and the keyword, as
``ppsim.run: weight: ...``; the library's own messages name the keyword too, as
``ppsim.run: micro_batch: ...`` (a config file's, its JSON path). Every message is one line of at
most 400 characters, echoed values cut to 80 with "...", as the command line's are.
"""

import json
import numbers
import os
import re

try:
    from . import _core
except ImportError as error:
    raise ImportError(
        "ppsim: the extension ppsim._core is not built, or not for this Python (the package needs it beside "
        "its __init__.py): `tools/quickstart.sh run` builds it when Debian's pybind11-dev and python3-dev are "
        "installed, as `cmake --build build --target ppsim_python` does; then import ppsim with "
        f"PYTHONPATH=build/tools/python (the import said: {error})",
        name=f"{__name__}._core",
    ) from error
from ._core import InputError, ScheduleError

__version__ = _core.__version__
__git_revision__ = _core.__git_revision__  # the commit it was built from, as `ppsim --version` says
__all__ = ["run", "compare", "plan", "sweep", "merge", "export", "synth", "check", "formulas", "trace", "schedules", "models",
           "records",
           "InputError", "ScheduleError", "ExpectationError"]

# The command line's bounds (study/common/errors.hpp, schedules/excerpt.hpp): a message is one line of at
# most 400 characters, and a value it echoes is cut to 80 with "...".
_MAX_MESSAGE_CHARS = 400
_MAX_ECHOED_CHARS = 80
# Lists and dicts within each other deeper than this are no setting; json.dumps would recurse
# towards Python's recursion limit on them.
_MAX_DEPTH = 64
# `ppsim sweep -j`'s ceiling (kMaxJobs, tools/ppsim/sweep_cli.hpp).
_MAX_JOBS = 4096


class ExpectationError(AssertionError):
    """An ``expect`` that the figures miss (``--expect``'s exit 1): one line per failure, as the
    command line prints them; ``result`` holds what was computed."""

    def __init__(self, failures, result):
        super().__init__("\n".join(failures))
        self.failures = failures
        self.result = result


# --- Bounded messages ---------------------------------------------------------------------------

def _escaped(text, keep_non_ascii):
    # Control characters (a NUL and line breaks among them) as \xNN, as the CLI writes them; beyond
    # ASCII, what does not print (U+2028, a lone surrogate) as \uNNNN.
    out = []
    for char in text:
        code = ord(char)
        if 0x20 <= code < 0x7F or (keep_non_ascii and code > 0x7F and char.isprintable()):
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


def _bounded(text, limit, keep_non_ascii, ellipsis_within=True):
    # At most `limit` characters, then "..." where cut (within the limit, or past it as an echoed
    # value's is); never an escape cut in two.
    out = _escaped(text[:limit], keep_non_ascii)
    if len(out) <= limit and len(text) <= limit:
        return out
    keep = limit - 3 if ellipsis_within else limit
    backslash = out.rfind("\\", max(0, keep - 9), keep)
    if backslash >= 0 and out[backslash + 1:backslash + 2] in ("x", "u", "U"):
        width = {"x": 4, "u": 6, "U": 10}[out[backslash + 1]]
        if backslash + width > keep:
            keep = backslash
    return out[:keep] + "..."


def _excerpt(text):
    """`text` as a message echoes it: printable ASCII, cut at 80 characters with "..." after them."""
    return _bounded(str(text), _MAX_ECHOED_CHARS, False, ellipsis_within=False)


def _one_line(text):
    """A whole message: one line of at most 400 characters, "..." included."""
    return _bounded(text, _MAX_MESSAGE_CHARS, True)


def _kind(value):
    # A value's type for a message; the name itself may be hostile.
    return _excerpt(type(value).__name__)


def _fail(origin, keyword, detail):
    raise InputError(_one_line(f"{origin}: {_excerpt(keyword)}: {detail}"))


def _as_keywords(message, origin):
    """The library names a setting as the command line and a config do: `origin: $.micro-batch` for
    what the call gave, `--micro-batch:` or `-p:` for a default. Python's caller wrote keywords, so
    the message names them so: `micro_batch`. A config file's own paths ("cfg.json: $.p") stay."""
    leading = re.match(r"--?([a-z][a-z0-9-]*):", message)
    if leading:  # a message about a flag's default, which names no origin: the call's
        message = f"{origin}: {leading.group(1).replace('-', '_')}:{message[leading.end():]}"
    prefix = re.escape(origin) + r": \$\.([A-Za-z0-9_-]+)"
    message = re.sub(prefix, lambda found: f"{origin}: {found.group(1).replace('-', '_')}", message)
    message = re.sub(r"(?<![\w`-])--([a-z][a-z0-9-]*)(?=:)", lambda found: found.group(1).replace("-", "_"), message)
    message = re.sub(r"(?<![\w`-])-([a-z])(?=:)", r"\1", message)
    # The other keyword of a setting given twice ("sets \"t\" again, as $.t did").
    message = re.sub(r"as \$\.([A-Za-z0-9_-]+) did", lambda found: f"as {found.group(1).replace('-', '_')} did", message)
    # A suggestion for a setting the call misspelled is a keyword too.
    return re.sub(r'\(did you mean "([a-z0-9-]+)"\?\)', lambda found: f'(did you mean "{found.group(1).replace("-", "_")}"?)',
                  message)


def _core_call(origin, function, *args):
    """Calls the library; its InputError arrives bounded, and pybind11's long "incompatible function
    arguments" TypeError (the validation here should leave none) becomes a short InputError."""
    try:
        return function(*args)
    except InputError as error:
        raise InputError(_one_line(_as_keywords(str(error), origin))) from None
    except TypeError as error:
        first = str(error).split("\n", 1)[0]
        raise InputError(_one_line(f"{origin}: the library refused the arguments' types: {_excerpt(first)}")) from None


# --- Arguments ----------------------------------------------------------------------------------

def _text(value, origin, keyword, what="a string", at=""):
    """A str for the library: no NUL (C++ would cut there) and no lone surrogate (not UTF-8).
    `at` places an item within the keyword's value: "[2]", "['fixed']"."""
    item = f"the item at {at} " if at else ""
    if not isinstance(value, str):
        _fail(origin, keyword, f"{item}must be {what}, got {_kind(value)}")
    if "\0" in value:
        _fail(origin, keyword, f"{item}holds a NUL character: '{_excerpt(value)}'")
    if not _encodes(value):
        _fail(origin, keyword, f"{item}is not valid Unicode text (a lone surrogate): '{_excerpt(value)}'")
    return str(value)


def _encodes(text):
    # Whether `text` is UTF-8 for the library: a lone surrogate is not.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _path(value, origin, keyword, optional=True, at=""):
    """A path (str, bytes or os.PathLike) for the library; None, and "" where optional, is no file."""
    if value is None and optional:
        return ""
    item = f"the item at {at} " if at else ""
    try:
        path = os.fspath(value)
    except TypeError:
        _fail(origin, keyword, f"{item}must be a path (str, bytes or os.PathLike), got {_kind(value)}")
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if "\0" in path:
        _fail(origin, keyword, f"{item}holds a NUL character: '{_excerpt(path)}'")
    if not path and not optional:
        _fail(origin, keyword, f"{item}must not be empty")
    if not _encodes(path):
        return os.fsencode(path)  # a name of bytes that are not UTF-8: passed on as the file system holds it
    return path


def _paths(value, origin, keyword):
    # A list of paths; one path alone is a list of one, not of its characters.
    if isinstance(value, (str, bytes, os.PathLike)):
        return [_path(value, origin, keyword, optional=False)]
    if not isinstance(value, (list, tuple)):
        _fail(origin, keyword, f"must be a list of paths, got {_kind(value)}")
    return [_path(item, origin, keyword, optional=False, at=f"[{index}]") for index, item in enumerate(value)]


def _texts(value, origin, keyword):
    # A string or a list of strings; a bare string is one, never read character by character.
    if isinstance(value, str):
        return [_text(value, origin, keyword)]
    if not isinstance(value, (list, tuple)):
        _fail(origin, keyword, f"must be a string or a list of strings, got {_kind(value)}")
    return [_text(item, origin, keyword, at=f"[{index}]") for index, item in enumerate(value)]


def _flag(value, origin, keyword):
    if not isinstance(value, bool):
        _fail(origin, keyword, f"must be True or False, got {_kind(value)}")
    return value


def _integer(value, origin, keyword):
    # An int, numpy's among them; never a bool, which is an int to Python but no count to anyone.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        _fail(origin, keyword, f"must be an integer, got {_kind(value)}")
    return int(value)


def _number(value, origin, keyword):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        _fail(origin, keyword, f"must be a number, got {_kind(value)}")
    try:
        return float(value)
    except (OverflowError, ValueError, TypeError):
        _fail(origin, keyword, "must be a number a float can hold")


def _quantity(value, origin, keyword):
    # A size or a time: a number (base units) or text with a unit ("6 GiB", "1.5 ms").
    if isinstance(value, str):
        return _text(value, origin, keyword)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        _fail(origin, keyword, f"must be a number or text such as '6 GiB', got {_kind(value)}")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    number = _number(value, origin, keyword)
    if number != number or number in (float("inf"), float("-inf")):
        _fail(origin, keyword, f"must be a finite number, got {number}")
    return repr(number)


def _json_value(value, origin, keyword, where, depth):
    """`value` as JSON takes it, checked before json.dumps recurses: None, bool, int (64 bits),
    finite float, str, list or tuple, dict with string keys, at most _MAX_DEPTH levels deep."""
    if depth > _MAX_DEPTH:
        _fail(origin, keyword, f"nests deeper than {_MAX_DEPTH} levels of lists and dicts")
    at = f" at {where}" if where else ""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _text(value, origin, keyword, at=where)
    if isinstance(value, numbers.Integral):
        number = int(value)
        if number.bit_length() > 64:
            _fail(origin, keyword, f"holds{at} an integer of more than 64 bits")
        return number
    if isinstance(value, numbers.Real):
        number = _number(value, origin, keyword)
        if number != number or number in (float("inf"), float("-inf")):
            _fail(origin, keyword, f"must be a finite number{at}, got {number}")
        return number
    if isinstance(value, (list, tuple)):
        return [_json_value(item, origin, keyword, f"{where}[{index}]", depth + 1) for index, item in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                _fail(origin, keyword, f"holds{at} a key of type {_kind(key)}; keys are strings")
            if "\0" in key or not _encodes(key):
                _fail(origin, keyword, f"holds{at} a key with a NUL or a lone surrogate: '{_excerpt(key)}'")
            out[key] = _json_value(item, origin, keyword, f"{where}['{_excerpt(key)}']", depth + 1)
        return out
    _fail(origin, keyword, f"holds{at} a value of type {_kind(value)}; settings are numbers, strings, booleans, "
                           "None, and lists and dicts of them")


def _settings_text(settings, origin):
    # Python's names cannot hold a dash; the config file's keys do, and never an underscore.
    document = {}
    for keyword, value in settings.items():  # **settings: Python has made every key a str
        key = _text(keyword, origin, keyword).replace("_", "-")
        document[key] = _json_value(value, origin, keyword, "", 0)
    return _dumps(document, origin, "settings")


def _dumps(document, origin, keyword):
    try:
        return json.dumps(document, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as error:  # checked above; the last guard
        _fail(origin, keyword, _excerpt(error))


def _checked(answer):
    result, failures = answer  # built as Python objects by the module, as json.loads would
    if failures:
        raise ExpectationError(failures, result)
    return result


def _pictures(origin, svg, html, trace):
    return [_path(svg, origin, "svg"), _path(html, origin, "html"), _path(trace, origin, "trace")]


# --- The operations -----------------------------------------------------------------------------

def run(*, config=None, svg=None, html=None, trace=None, expect=(), **settings):
    """One schedule, as ``ppsim run --format json``; ``config`` is read first, as ``-c``, and
    ``expect`` (``["bubble_ratio <= 0.1", "fits"]``) raises ExpectationError as --expect exits 1."""
    origin = "ppsim.run"
    config = _path(config, origin, "config")
    pictures = _pictures(origin, svg, html, trace)
    expectations = _texts(expect, origin, "expect")
    text = _settings_text(settings, origin)
    return _checked(_core_call(origin, _core.run, text, origin, config, *pictures, False, expectations))


def compare(schedules=None, *, config=None, svg=None, html=None, trace=None, expect=(), **settings):
    """Several schedules side by side (GPipe and 1F1B without ``schedules``), as ``ppsim compare``:
    a list with one result per schedule; every schedule must meet each of ``expect``."""
    origin = "ppsim.compare"
    if schedules is not None:
        names = _texts(schedules, origin, "schedules")
        if "schedule" in settings:
            _fail(origin, "schedule", "conflicts with schedules (the first argument): give the schedules once")
        settings["schedule"] = schedules if isinstance(schedules, str) else names
    config = _path(config, origin, "config")
    pictures = _pictures(origin, svg, html, trace)
    expectations = _texts(expect, origin, "expect")
    text = _settings_text(settings, origin)
    return _checked(_core_call(origin, _core.run, text, origin, config, *pictures, True, expectations))


def _shard(shard, origin):
    if shard is None:
        return ""
    if isinstance(shard, tuple):
        if len(shard) != 2:
            _fail(origin, "shard", f"must be (I, N) with 0 <= I < N, got a tuple of {len(shard)}")
        index, count = (_integer(part, origin, "shard") for part in shard)
        shard = f"{index}/{count}"
    else:
        shard = _text(shard, origin, "shard", "'I/N' (e.g. '0/4') or a tuple (I, N)")
    index, slash, count = shard.partition("/")
    if not (slash and index.isascii() and index.isdigit() and count.isascii() and count.isdigit()):
        _fail(origin, "shard", f"must be I/N with 0 <= I < N (e.g. 0/4), got '{_excerpt(shard)}'")
    return shard  # its range the library checks, in the command line's words


def sweep(study, jobs=0, simulate_all=False, *, shard=None, output=None, html=None, summary=None, expect=()):
    """Every point of a study (a dict, or the path of a study file) on ``jobs`` threads (0: every
    core, at most 4096): ``points`` as the .jsonl file holds them, the ``top`` and ``pareto_front``
    points, ``choose_m`` (per schedule, p and v: the ``point`` with the smallest m at the bubble
    target, or the ``best`` that ran) and the ``summary`` text ``ppsim sweep`` prints. As ``ppsim
    sweep``: ``shard="I/N"`` (or the tuple ``(I, N)``) runs one shard, ``output`` writes the points
    (.csv or .jsonl), ``html`` the page, ``summary`` the tables as JSON, and ``expect`` must hold for
    the top point. A dict's keys are the study file's (``fixed``, ``axes``, ``bubble_target``...)."""
    origin = "ppsim.sweep"
    if isinstance(study, (str, bytes, os.PathLike)):
        text, path = "", _path(study, origin, "study", optional=False)
    elif isinstance(study, dict):
        # A study file's own keys, as they are: its top level holds bubble_target and memory_limit.
        text, path = _dumps(_json_value(study, origin, "study", "", 0), origin, "study"), ""
    else:
        _fail(origin, "study", f"must be a study (a dict) or the path of a study file, got {_kind(study)}")
    jobs = _integer(jobs, origin, "jobs")
    if not 0 <= jobs <= _MAX_JOBS:
        _fail(origin, "jobs", f"must be 0 (every core) to {_MAX_JOBS} threads, got {jobs}")
    simulate_all = _flag(simulate_all, origin, "simulate_all")
    shard = _shard(shard, origin)
    files = [_path(output, origin, "output"), _path(html, origin, "html"), _path(summary, origin, "summary")]
    expectations = _texts(expect, origin, "expect")
    return _checked(_core_call(origin, _core.sweep, text, path, jobs, simulate_all, shard, *files, expectations))


def merge(output, files):
    """``ppsim merge``: joins the files of a sharded sweep into ``output``."""
    origin = "ppsim.merge"
    output = _path(output, origin, "output", optional=False)
    _core_call(origin, _core.merge, output, _paths(files, origin, "files"))


def formulas(check=False, **settings):
    """``ppsim formulas [--check]``: ``report``, the text the command prints, and ``agreed``
    (whether every closed form matched the simulation; with ``check``, over its grid, narrowed by
    ``schedule``, ``p``, ``v`` and ``m``)."""
    origin = "ppsim.formulas"
    check = _flag(check, origin, "check")
    return json.loads(_core_call(origin, _core.formulas, _settings_text(settings, origin), check))


def _bounded_integer(value, origin, keyword, low, high):
    value = _integer(value, origin, keyword)
    if not low <= value <= high:
        _fail(origin, keyword, f"must be from {low} to {high}, got {value}")
    return value


def trace(files, *, calibrate=None, svg=None, schedule=None, step=None, p=None, m=None, v=None):
    """``ppsim trace --format json``: a real run read from ``files`` (torch.profiler traces, one per
    rank, or their directory; ppsim's own ``--trace``; a Megatron-LM timer log), its step
    (``recorded``, ``replayed``, ``modelled``), each device's ``idle`` time by cause, each rank's
    kernels and the ``calibration``. ``calibrate`` writes the calibration for ``run(calibrated_from=...)``,
    ``svg`` the picture of the idle time; ``schedule`` and ``step`` choose what to read, and ``p``, ``m``
    and ``v`` say what a timer log does not."""
    origin = "ppsim.trace"
    files = _paths(files, origin, "files")
    calibrate = _path(calibrate, origin, "calibrate")
    svg = _path(svg, origin, "svg")
    schedule = "" if schedule is None else _text(schedule, origin, "schedule", "a schedule's name")
    step = -1 if step is None else _bounded_integer(step, origin, "step", 0, 10**9)
    sizes = [0 if value is None else _bounded_integer(value, origin, name, 1, high)
             for name, value, high in (("p", p, 65536), ("m", m, 10**7), ("v", v, 64))]
    return json.loads(_core_call(origin, _core.trace, files, calibrate, svg, schedule, step, *sizes))


def export(schedule, p, m, v=None, lowered=False, **settings):
    """A schedule's per-device actions, as ``ppsim export --format json``; with ``lowered``, in
    torch's lowered format (``ppsim export --lowered``): SEND/RECV and FSDP actions among them."""
    origin = "ppsim.export"
    settings.update(schedule=_text(schedule, origin, "schedule", "a schedule's name"), p=_integer(p, origin, "p"),
                    m=_integer(m, origin, "m"))
    if v is not None:
        settings["v"] = _integer(v, origin, "v")
    lowered = _flag(lowered, origin, "lowered")
    return json.loads(_core_call(origin, _core.export_schedule, _settings_text(settings, origin), lowered))


def synth(memory_limit, *, placement=None, time_limit=None, output=None, **settings):
    """``ppsim synth --format json``: the figures of the best order found under ``memory_limit``
    (bytes, or text such as ``"6 GiB"``) per device, with ``synth`` (the search: origin, replays, the
    registry schedules within the limit); ``output`` writes the order as torch's CSV."""
    origin = "ppsim.synth"
    memory_limit = _quantity(memory_limit, origin, "memory_limit")
    placement = "" if placement is None else _text(placement, origin, "placement", "a placement's name")
    time_limit = "" if time_limit is None else _quantity(time_limit, origin, "time_limit")
    output = _path(output, origin, "output")
    text = _settings_text(settings, origin)
    return json.loads(_core_call(origin, _core.synth, text, memory_limit, placement, time_limit, output))


def plan(gpus, *, html=None, **settings):
    """``ppsim plan --format json``: the best layouts of the model for ``gpus`` GPUs. Its own keywords
    are ``top``, ``objective`` (``"step_time"``, ``"p99_step_time"``, ``"goodput"`` or
    ``"tokens_per_second_per_gpu"``), ``jobs``, ``framework`` (``"megatron"``, ``"torchtitan"`` or
    ``"both"``) and ``split_budget``; every other keyword is a setting, as for ``run``
    (``model``, ``global_batch`` and ``seq`` at least), a layout setting pinning its axis. ``html``
    writes the page with the Pareto front."""
    origin = "ppsim.plan"
    settings["gpus"] = gpus
    html = _path(html, origin, "html")
    return json.loads(_core_call(origin, _core.plan, _settings_text(settings, origin), html))


def check(baseline, rtol=1e-9, atol=0.0, only=None):
    """``ppsim check``: re-runs the scenario stored in a ``--format json`` output (a path) and
    returns ``results`` and ``figures`` compared, the ``moved`` ones (figure, baseline, now,
    change) and the ``report`` the command prints; nothing moved when ``moved`` is empty. ``only``
    names the figures to compare: one name, or a list of them."""
    origin = "ppsim.check"
    baseline = _path(baseline, origin, "baseline", optional=False)
    rtol, atol = _number(rtol, origin, "rtol"), _number(atol, origin, "atol")
    only = [] if only is None else _texts(only, origin, "only")
    return json.loads(_core_call(origin, _core.check, baseline, rtol, atol, only))


def schedules():
    """The registry, as ``ppsim schedules --format json``."""
    return json.loads(_core_call("ppsim.schedules", _core.schedules))


def models():
    """The model and hardware presets, as ``ppsim models --format json``."""
    return json.loads(_core_call("ppsim.models", _core.models))


def records(results):
    """One flat dict per device of one result or a list of them (run or compare), for
    ``pandas.DataFrame(ppsim.records(...))``: the schedule's figures, its training figures with a
    model, and the device's figures (``device_busy``, ...), under the sweep CSV's column names."""
    origin = "ppsim.records"
    results = [results] if isinstance(results, dict) else results
    if not isinstance(results, (list, tuple)):
        _fail(origin, "results", f"must be a result (a dict) or a list of them, got {_kind(results)}")
    rows = []
    for index, result in enumerate(results):
        if not isinstance(result, dict):
            _fail(origin, "results", f"[{index}] must be a result (a dict), got {_kind(result)}")
        per_device = result.get("per_device", [])
        if not isinstance(per_device, (list, tuple)) or not all(isinstance(figures, dict) for figures in per_device):
            _fail(origin, "results", f"[{index}]['per_device'] must be a list of dicts, one per device")
        shared = {key: value for key, value in result.items() if not isinstance(value, (dict, list))}
        training = result.get("training")
        if isinstance(training, dict):
            # The layout columns the sweep CSV has with a model, then the training figures.
            scenario = result.get("scenario") if isinstance(result.get("scenario"), dict) else {}
            for key in ("t", "d", "micro-batch", "global-batch", "recompute"):
                if key in scenario:
                    shared[key.replace("-", "_")] = scenario[key]
            shared.update({key: value for key, value in training.items()
                           if not isinstance(value, (dict, list)) and key not in shared})
        for device, figures in enumerate(per_device):
            row = dict(shared, device=device)
            row.update({f"device_{key}": value for key, value in figures.items()
                        if not isinstance(value, (dict, list)) and key != "device"})
            rows.append(row)
    return rows


def _settings_doc():
    # Every setting, generated from the table behind `ppsim run --help`: what help(ppsim.run) lists.
    lines = ["", "", "Settings (keywords; the config file's keys with underscores for dashes, as `ppsim run --help`):"]
    for key, flag, value, text in _core.settings():
        name = key.replace("-", "_")
        spelled = f"{name}={value}" if value else f"{name}=True|False"
        lines.append(f"    {spelled}")
        lines.append(f"        {text}")
    return "\n".join(lines)


run.__doc__ += _settings_doc()
compare.__doc__ += _settings_doc()
