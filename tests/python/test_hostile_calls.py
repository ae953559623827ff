# SPDX-License-Identifier: Apache-2.0
"""Hostile calls: every wrong type or shape of argument is a ppsim.InputError that names the function
and the keyword, one line of at most 400 characters, never a TypeError, AttributeError,
RecursionError or IndexError from deep inside, nor a megabyte of pybind11's text.

Run by ctest as test_module.py is (tests/CMakeLists.txt).
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

import ppsim

PPSIM = os.environ["PPSIM"]
SOURCE = os.environ["PPSIM_SOURCE_DIR"]
STUDY = os.path.join(SOURCE, "configs", "studies", "m_vs_p_bubble.json")
SMALL_STUDY = {"fixed": {"forward": 1, "backward": 2}, "axes": {"schedule": ["1f1b"], "p": [2], "m": [4]}}
MEGABYTE = "x" * 1_000_000


def nested(depth):
    value = 1.0
    for _ in range(depth):
        value = [value]
    return value


def cyclic():
    value = []
    value.append(value)
    return value


class Unprintable:
    pass


Unprintable.__name__ = "Bad\tType\n" + "y" * 500  # a type name may be as long and odd as this

# (function, keyword, the call): the message must start "ppsim.<function>: <keyword>:".
HOSTILE_CALLS = [
    ("run", "weight", lambda: ppsim.run(p=2, weight=nested(2000))),
    ("run", "latency", lambda: ppsim.run(latency=cyclic())),
    ("run", "config", lambda: ppsim.run(config=0)),
    ("run", "config", lambda: ppsim.run(config="base\0/../etc/passwd")),
    ("run", "svg", lambda: ppsim.run(svg=3.5)),
    ("run", "html", lambda: ppsim.run(html=["page.html"])),
    ("run", "trace", lambda: ppsim.run(trace=b"trace\0.json")),
    ("run", "expect", lambda: ppsim.run(expect=5)),
    ("run", "expect", lambda: ppsim.run(expect=["fits", 3])),
    ("run", "forward", lambda: ppsim.run(forward=float("nan"))),
    ("run", "straggler", lambda: ppsim.run(straggler={"1:1.5"})),
    ("run", "model", lambda: ppsim.run(model={1: "llama3.1-8b"})),
    ("run", "p", lambda: ppsim.run(p=10**30)),
    ("run", "schedule", lambda: ppsim.run(schedule="1f1b\0zbv")),
    ("run", "schedule", lambda: ppsim.run(schedule="\udc80")),
    ("run", "forward", lambda: ppsim.run(forward=object())),
    ("run", "x" * 80 + "...", lambda: ppsim.run(**{MEGABYTE: object()})),
    ("run", "backward", lambda: ppsim.run(backward=[1, Unprintable()])),
    ("compare", "schedules", lambda: ppsim.compare(5)),
    ("compare", "schedules", lambda: ppsim.compare(["1f1b", None])),
    ("compare", "config", lambda: ppsim.compare(config=object())),
    ("compare", "expect", lambda: ppsim.compare(expect=b"fits")),
    ("sweep", "study", lambda: ppsim.sweep(None)),
    ("sweep", "study", lambda: ppsim.sweep(3)),
    ("sweep", "study", lambda: ppsim.sweep("study\0.json")),
    ("sweep", "study", lambda: ppsim.sweep({"axes": nested(100)})),
    ("sweep", "study", lambda: ppsim.sweep({1: 2})),
    ("sweep", "shard", lambda: ppsim.sweep(STUDY, shard=(1,))),
    ("sweep", "shard", lambda: ppsim.sweep(STUDY, shard=(0, "3"))),
    ("sweep", "shard", lambda: ppsim.sweep(STUDY, shard=(True, 3))),
    ("sweep", "shard", lambda: ppsim.sweep(STUDY, shard="a/b")),
    ("sweep", "shard", lambda: ppsim.sweep(STUDY, shard=1)),
    ("sweep", "shard", lambda: ppsim.sweep(STUDY, shard=MEGABYTE)),
    ("sweep", "jobs", lambda: ppsim.sweep(STUDY, jobs=-1)),
    ("sweep", "jobs", lambda: ppsim.sweep(STUDY, jobs=10**6)),
    ("sweep", "jobs", lambda: ppsim.sweep(STUDY, jobs=True)),
    ("sweep", "jobs", lambda: ppsim.sweep(STUDY, jobs=MEGABYTE)),
    ("sweep", "simulate_all", lambda: ppsim.sweep(STUDY, simulate_all="yes")),
    ("sweep", "output", lambda: ppsim.sweep(STUDY, output=3)),
    ("sweep", "expect", lambda: ppsim.sweep(STUDY, expect=[None])),
    ("merge", "output", lambda: ppsim.merge(1, [2])),
    ("merge", "output", lambda: ppsim.merge("merged\0.csv", ["shard0.csv"])),
    ("merge", "files", lambda: ppsim.merge("merged.csv", 5)),
    ("merge", "files", lambda: ppsim.merge("merged.csv", ["shard0.csv", None])),
    ("trace", "files", lambda: ppsim.trace(3)),
    ("trace", "files", lambda: ppsim.trace(["a.json", None])),
    ("trace", "calibrate", lambda: ppsim.trace("a.json", calibrate=7)),
    ("trace", "svg", lambda: ppsim.trace("a.json", svg="x\0.svg")),
    ("trace", "schedule", lambda: ppsim.trace("a.json", schedule=1)),
    ("trace", "step", lambda: ppsim.trace("a.json", step=-1)),
    ("trace", "p", lambda: ppsim.trace("a.json", p=10**12)),
    ("trace", "m", lambda: ppsim.trace("a.json", m=True)),
    ("trace", "v", lambda: ppsim.trace("a.json", v=1.5)),
    ("formulas", "check", lambda: ppsim.formulas(check="no")),
    ("formulas", "check", lambda: ppsim.formulas(check=1)),
    ("formulas", "p", lambda: ppsim.formulas(p=nested(65))),
    ("export", "schedule", lambda: ppsim.export(None, 4, 8)),
    ("export", "p", lambda: ppsim.export("1f1b", "4", 8)),
    ("export", "m", lambda: ppsim.export("1f1b", 4, 8.0)),
    ("export", "v", lambda: ppsim.export("1f1b", 4, 8, v=True)),
    ("export", "lowered", lambda: ppsim.export("1f1b", 4, 8, lowered=None)),
    ("synth", "memory_limit", lambda: ppsim.synth([1])),
    ("synth", "memory_limit", lambda: ppsim.synth(None)),
    ("synth", "memory_limit", lambda: ppsim.synth(float("inf"))),
    ("synth", "memory_limit", lambda: ppsim.synth(True)),
    ("synth", "memory_limit", lambda: ppsim.synth("4 GiB\0")),
    ("synth", "placement", lambda: ppsim.synth("4 GiB", placement=3)),
    ("synth", "time_limit", lambda: ppsim.synth("4 GiB", time_limit=[1])),
    ("synth", "output", lambda: ppsim.synth("4 GiB", output=1.5)),
    ("check", "baseline", lambda: ppsim.check(0)),
    ("check", "baseline", lambda: ppsim.check(None)),
    ("check", "baseline", lambda: ppsim.check("base\0line.json")),
    ("check", "rtol", lambda: ppsim.check("base.json", rtol="1e-3")),
    ("check", "atol", lambda: ppsim.check("base.json", atol=None)),
    ("check", "rtol", lambda: ppsim.check("base.json", rtol=10**400)),
    ("check", "only", lambda: ppsim.check("base.json", only=5)),
    ("check", "only", lambda: ppsim.check("base.json", only=["makespan", 3])),
    ("plan", "gpus", lambda: ppsim.plan(cyclic())),
    ("plan", "html", lambda: ppsim.plan(16, html=3)),
    ("plan", "top", lambda: ppsim.plan(16, top=float("nan"))),
    ("records", "results", lambda: ppsim.records(3)),
    ("records", "results", lambda: ppsim.records([3])),
    ("records", "results", lambda: ppsim.records({"per_device": 5})),
]


def assert_one_bounded_line(text):
    assert len(text) <= 400, len(text)
    assert "\0" not in text and "\n" not in text and "\r" not in text, repr(text)


@pytest.mark.parametrize("function, keyword, call", HOSTILE_CALLS,
                         ids=[f"{function}-{keyword[:12]}-{index}" for index, (function, keyword, _) in
                              enumerate(HOSTILE_CALLS)])
def test_a_hostile_argument_is_an_input_error_naming_its_function_and_keyword(function, keyword, call):
    with pytest.raises(Exception) as raised:
        call()
    assert type(raised.value) is ppsim.InputError, f"{type(raised.value).__name__}: {str(raised.value)[:300]}"
    text = str(raised.value)
    assert text.startswith(f"ppsim.{function}: {keyword}:"), text
    assert_one_bounded_line(text)


def test_every_public_function_has_hostile_calls():
    functions = {name for name in ppsim.__all__ if callable(getattr(ppsim, name)) and not name[0].isupper()}
    assert functions - {"schedules", "models"} == {function for function, _, _ in HOSTILE_CALLS}


def test_a_deeply_nested_setting_is_an_input_error_naming_its_keyword():
    with pytest.raises(ppsim.InputError) as raised:
        ppsim.run(p=2, weight=nested(2000))
    assert str(raised.value) == "ppsim.run: weight: nests deeper than 64 levels of lists and dicts"
    # 64 levels are still a value the library may judge, in its own words.
    with pytest.raises(ppsim.InputError, match=r"^ppsim\.run: weight\[0\]: "):
        ppsim.run(p=2, weight=nested(64))


def test_a_nul_in_a_path_is_shown_escaped_not_cut_short():
    with pytest.raises(ppsim.InputError) as raised:
        ppsim.run(config="base\0/../etc/passwd")
    assert str(raised.value) == r"ppsim.run: config: holds a NUL character: 'base\x00/../etc/passwd'"


def test_a_bare_only_string_is_one_figure_name_not_its_characters(tmp_path):
    path = tmp_path / "base.json"
    path.write_text(subprocess.run([PPSIM, "run", "-s", "1f1b", "-p", "4", "-m", "8", "--format", "json"],
                                   capture_output=True, text=True, check=True).stdout)
    stored = json.loads(path.read_text())
    stored["makespan"] = 30.0
    path.write_text(json.dumps(stored))
    assert ppsim.check(path, only="makespan") == ppsim.check(path, only=["makespan"])
    assert ppsim.check(path, only="makespan")["moved"][0]["figure"] == "[1f1b] makespan"


def test_a_study_dict_keeps_the_study_files_own_keys():
    # bubble_target and memory_limit are a study file's keys with underscores: not dashed as settings are.
    study = dict(SMALL_STUDY, bubble_target=0.5)
    assert [row["bubble_target"] for row in ppsim.sweep(study, jobs=1)["choose_m"]] == [0.5]


def test_jobs_take_the_command_lines_range_and_int_subclasses():
    class Count(int):
        pass

    assert len(ppsim.sweep(SMALL_STUDY, jobs=4096)["points"]) == 1
    assert len(ppsim.sweep(SMALL_STUDY, jobs=Count(1))["points"]) == 1
    with pytest.raises(ppsim.InputError, match=r"^ppsim\.sweep: jobs: must be 0 \(every core\) to 4096 threads, got 4097$"):
        ppsim.sweep(SMALL_STUDY, jobs=4097)


def test_paths_may_be_path_objects_or_bytes(tmp_path):
    config = os.path.join(SOURCE, "configs", "examples", "1f1b_p8_m32.json")
    expected = ppsim.run(config=config)
    assert ppsim.run(config=os.fsencode(config)) == expected
    ppsim.run(config=config, svg=tmp_path / "run.svg")
    assert (tmp_path / "run.svg").read_text().lstrip().startswith("<")


def test_the_librarys_own_messages_stay_one_bounded_line():
    with pytest.raises(ppsim.InputError) as raised:
        ppsim.run(p=MEGABYTE)
    assert str(raised.value).startswith("ppsim.run: p: ")
    assert_one_bounded_line(str(raised.value))
    with pytest.raises(ppsim.InputError) as raised:
        ppsim.run(schedule="1f1b", p=4, m=8, expect=MEGABYTE + "\n<")
    assert_one_bounded_line(str(raised.value))


def test_an_input_error_from_the_library_is_escaped_and_cut_to_400_characters():
    def library(*_):
        raise ppsim.InputError("base\0" + "\n" * 10 + "z" * 1_000_000)

    with pytest.raises(ppsim.InputError) as raised:
        ppsim._core_call("ppsim.run", library)
    text = str(raised.value)
    assert text.startswith(r"base\x00\x0a\x0a") and text.endswith("z...")
    assert_one_bounded_line(text)


def test_pybind11s_long_type_error_becomes_a_short_input_error():
    with pytest.raises(ppsim.InputError) as raised:
        ppsim._core_call("ppsim.sweep", ppsim._core.sweep, MEGABYTE, 1)
    text = str(raised.value)
    assert text.startswith("ppsim.sweep: the library refused the arguments' types: ")
    assert "incompatible function arguments" in text
    assert_one_bounded_line(text)


def test_input_error_is_still_a_value_error():
    assert issubclass(ppsim.InputError, ValueError)


def test_importing_without_the_extension_says_how_to_build_it(tmp_path):
    package = tmp_path / "ppsim"
    package.mkdir()
    shutil.copy(os.path.join(SOURCE, "tools", "python", "ppsim", "__init__.py"), package / "__init__.py")
    done = subprocess.run([sys.executable, "-c", "import ppsim"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ppsim: the extension ppsim._core is not built"), done.stderr
    assert "cmake --build build --target ppsim_python" in last and "PYTHONPATH=build/tools/python" in last
    assert "pybind11-dev and python3-dev" in last
    # The original error is chained, and quoted.
    assert "The above exception was the direct cause" in done.stderr
    assert "cannot import name '_core'" in last
