# SPDX-License-Identifier: Apache-2.0
"""The Python module against the command line: the same library, so the same figures and errors.

Run by ctest (tests/CMakeLists.txt) with PYTHONPATH at the build tree's package, PPSIM at the
ppsim binary and PPSIM_SOURCE_DIR at the checkout.
"""

import glob
import json
import os
import subprocess
import threading

import pytest

import ppsim

PPSIM = os.environ["PPSIM"]
SOURCE = os.environ["PPSIM_SOURCE_DIR"]
EXAMPLES = sorted(glob.glob(os.path.join(SOURCE, "configs", "examples", "*.json")))


def cli(*args, check=True):
    done = subprocess.run([PPSIM, *args], capture_output=True, text=True)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def cli_json(*args):
    return json.loads(cli(*args).stdout)


def cli_error(*args):
    done = cli(*args, check=False)
    prefix = "ppsim: error: "
    assert done.stderr.startswith(prefix), done.stderr
    return done.returncode, done.stderr.splitlines()[0][len(prefix):], done.stderr


@pytest.mark.parametrize("schedule", [info["name"] for info in ppsim.schedules() if info["name"] != "custom"])
def test_every_schedule_runs_to_the_figures_of_ppsim_run(schedule):
    # p=4, m=8 suits every registry schedule at its default v; B = 2F, W = B/2 and a slow link.
    settings = {"p": 4, "m": 8, "latency": 0.1, "bandwidth": "1 GB/s", "message_bytes": "50 MB"}
    expected = cli_json("run", "-s", schedule, "-p", "4", "-m", "8", "--latency", "0.1", "--bandwidth", "1 GB/s",
                        "--message-bytes", "50 MB", "--format", "json")
    assert ppsim.run(schedule=schedule, **settings) == expected


@pytest.mark.parametrize("args,settings", [
    (["run", "-s", "zbv", "-p", "4", "-m", "8", "--samples", "20", "--jitter", "0.1"],
     {"schedule": "zbv", "p": 4, "m": 8, "samples": 20, "jitter": 0.1}),
    (["compare", "-s", "1f1b,dualpipev", "-p", "4", "-m", "8"], {"schedule": "1f1b,dualpipev", "p": 4, "m": 8}),
    (["compare", "-s", "chimera,bitpipe,seq1f1b", "-p", "4", "-m", "8", "--sequence-splits", "2"],
     {"schedule": "chimera,bitpipe,seq1f1b", "p": 4, "m": 8, "sequence_splits": 2}),
    (["run", "--model", "llama3.1-8b", "-p", "2", "--global-batch", "8", "--seq", "1024", "--mtbf", "50000 h",
      "--train-steps", "1000"],
     {"model": "llama3.1-8b", "p": 2, "global_batch": 8, "seq": 1024, "mtbf": "50000 h", "train_steps": 1000}),
])
def test_a_result_built_as_python_objects_is_the_clis_json_key_for_key_and_type_for_type(args, settings):
    # Built from the JSON value, not its text: == ignores key order and 1 == 1.0, json.dumps does not.
    call = ppsim.compare if args[0] == "compare" else ppsim.run
    assert json.dumps(call(**settings)) == json.dumps(cli_json(*args, "--format", "json"))


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_every_example_config_compares_to_the_figures_of_ppsim_compare(path):
    assert ppsim.compare(config=path) == cli_json("compare", "-c", path, "--format", "json")


def test_settings_override_a_config_file_as_flags_do():
    path = os.path.join(SOURCE, "configs", "examples", "1f1b_p8_m32.json")
    assert ppsim.run(config=path, m=64, activation_bytes="2 GiB") == cli_json(
        "run", "-c", path, "-m", "64", "--activation-bytes", "2 GiB", "--format", "json")


def test_per_stage_lists_and_dashed_keys_are_the_config_files():
    settings = {"forward": [1, 1, 1, 1.5], "backward": [2, 2, 2, 3], "p": 4, "m": 8}
    assert ppsim.run(schedule="1f1b", **settings) == ppsim.run(**{"schedule": "1f1b", **settings})
    assert ppsim.run(**{"schedule": "1f1b", "p": 4, "m": 8, "activation-bytes": "1 GiB"}) == ppsim.run(
        schedule="1f1b", p=4, m=8, activation_bytes="1 GiB")


def test_a_transformer_study_gives_ppsim_runs_step():
    expected = cli_json("run", "-s", "1f1b", "--model", "llama3.1-8b", "--hardware", "h200-sxm-141gb", "-p", "4", "-m", "8",
                        "--format", "json")
    result = ppsim.run(schedule="1f1b", model="llama3.1-8b", hardware="h200-sxm-141gb", p=4, m=8)
    assert result == expected
    assert result["training"]["step_time"] > result["makespan"] > 0


def test_fsdp_runs_as_ppsim_run_fsdp_does():
    expected = cli_json("run", "-s", "zbv", "--model", "llama3.1-8b", "-p", "4", "-m", "8", "-d", "8", "--fsdp",
                        "--format", "json")
    result = ppsim.run(schedule="zbv", model="llama3.1-8b", p=4, m=8, d=8, fsdp=True)
    assert result == expected
    assert result["training"]["fsdp_reduce_time"] > 0
    assert result["training"]["dp_reduce_time"] == 0


def test_context_parallelism_runs_as_ppsim_run_context_parallel_does():
    expected = cli_json("run", "-s", "interleaved-1f1b", "--model", "llama3.1-70b", "-p", "4", "-v", "5", "-t", "4",
                        "--sequence-parallel", "--context-parallel", "4", "--cp-comm", "a2a+p2p",
                        "--hierarchical-context-parallel-sizes", "2,2", "-d", "1", "--global-batch", "32", "--seq",
                        "16384", "--format", "json")
    result = ppsim.run(schedule="interleaved-1f1b", model="llama3.1-70b", p=4, v=5, t=4, sequence_parallel=True,
                       context_parallel=4, cp_comm="a2a+p2p", hierarchical_context_parallel_sizes="2,2", d=1,
                       global_batch=32, seq=16384)
    assert result == expected
    assert result["training"]["gpus"] == 64


def test_fsdp_per_block_settings_run_as_their_flags_do():
    expected = cli_json("run", "--model", "llama3.1-8b", "-p", "1", "-d", "8", "--global-batch", "8", "--seq", "8192",
                        "--fsdp", "--fsdp-unit", "block", "--reshard-after-forward", "never", "--precision", "fp8",
                        "--fsdp-float8-all-gather", "--grad-reduce-dtype", "bf16", "--format", "json")
    result = ppsim.run(model="llama3.1-8b", p=1, d=8, global_batch=8, seq=8192, fsdp=True, fsdp_unit="block",
                       reshard_after_forward="never", precision="fp8", fsdp_float8_all_gather=True,
                       grad_reduce_dtype="bf16")
    assert result == expected
    assert result["scenario"]["reshard-after-forward"] == "never"
    with pytest.raises(ppsim.InputError, match=r"ppsim.run: fsdp_unit: must be block or stage, got .layer."):
        ppsim.run(model="llama3.1-8b", fsdp=True, fsdp_unit="layer")


def test_an_automatic_layer_split_runs_as_layers_per_stage_auto_does():
    expected = cli_json("run", "--model", "llama3.1-8b", "-p", "4", "-m", "8", "--layers-per-stage", "auto",
                        "--format", "json")
    result = ppsim.run(model="llama3.1-8b", p=4, m=8, layers_per_stage="auto")
    assert result == expected
    assert sum(result["scenario"]["layers-per-stage"]) == 32
    assert result["training"]["layer_split"]["pipeline_model_parallel_layout"].startswith("E")


def test_a_plan_is_the_command_lines_and_names_its_keywords_in_errors():
    model = os.path.join(SOURCE, "tests", "data", "models", "llama-12-layers.json")
    expected = cli_json("plan", "--model", model, "--gpus", "16", "--global-batch", "64", "--seq", "4096",
                        "--top", "2", "--framework", "megatron", "--format", "json")
    result = ppsim.plan(16, model=model, global_batch=64, seq=4096, top=2, framework="megatron")
    assert result == expected
    assert len(result["layouts"]) == 2
    assert result["layouts"][0]["launch"]["megatron"].startswith("--tensor-model-parallel-size")
    with pytest.raises(ppsim.InputError, match=r"ppsim.plan: gpus: needs 1 to"):
        ppsim.plan(0, model=model, global_batch=64)
    with pytest.raises(ppsim.InputError, match=r"ppsim.plan: objective: 'fast' is not"):
        ppsim.plan(16, model=model, global_batch=64, objective="fast")


def test_samples_stragglers_and_failures_run_as_the_cli_does():
    expected = cli_json("run", "-s", "zbv", "-p", "4", "-m", "8", "--samples", "50", "--jitter", "0.1", "--seed", "3",
                        "--straggler", "1:1.5", "--format", "json")
    result = ppsim.run(schedule="zbv", p=4, m=8, samples=50, jitter=0.1, seed=3, straggler=["1:1.5"])
    assert result == expected
    assert result["samples"]["makespan"]["p99"] >= result["samples"]["makespan"]["p50"]
    run = ppsim.run(schedule="1f1b", model="llama3.1-8b", p=4, m=8, d=8, mtbf="50680 h", train_time="54 d")
    assert 0 < run["reliability"]["goodput"] < 1
    with pytest.raises(ppsim.InputError, match="jitter: a coefficient of variation must not be negative"):
        ppsim.run(samples=5, jitter=-1)


def test_compare_defaults_to_gpipe_and_1f1b_and_ties_their_bubbles():
    gpipe, one_f_one_b = ppsim.compare(p=4, m=8)
    assert (gpipe["schedule"], one_f_one_b["schedule"]) == ("gpipe", "1f1b")
    # With uniform costs and free links both are (p-1)/(m+p-1): 1F1B wins on memory, not bubble.
    assert gpipe["bubble_ratio"] == one_f_one_b["bubble_ratio"] == pytest.approx(3 / 11, rel=1e-15)


def test_bad_input_raises_input_error_with_the_clis_message(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"schedule": "1f1b", "p": 4, "m": "eight"}')
    path = str(path)
    with pytest.raises(ppsim.InputError) as raised:
        ppsim.run(config=path)
    status, message, _ = cli_error("run", "-c", path)
    assert status == 2
    assert str(raised.value) == message
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"p": 0}, "ppsim.run: p: must be a positive integer, got 0"),
        ({"micro_batch": 0}, "ppsim.run: micro_batch: must be a positive integer, got 0"),
        ({"forward": "1ms"}, "ppsim.run: backward: its default has no unit, but ppsim.run: forward has one: give every "
                             "time a unit (1ms, 2ms) or none (set it, with a unit)"),
        ({"schedule": "zbv", "v": 3}, None),
        ({"forward": float("nan")}, None),
        ({"colour": "red"}, None),
    ],
)
def test_settings_errors_name_their_keyword(settings, message):
    with pytest.raises(ppsim.InputError) as raised:
        ppsim.run(**settings)
    text = str(raised.value)
    assert text.startswith("ppsim.run: ")
    assert "\n" not in text
    if message is not None:
        assert text == message


def test_a_keyword_that_conflicts_with_an_argument_is_refused():
    with pytest.raises(ppsim.InputError, match="ppsim.compare: schedule: conflicts with schedules"):
        ppsim.compare(["1f1b"], schedule="zbv")
    with pytest.raises(ppsim.InputError) as raised:
        ppsim.run(t=2, tensor_parallel=4)
    assert str(raised.value) == 'ppsim.run: tensor_parallel: sets "t" again, as t did'



def test_help_lists_every_setting_from_the_clis_table():
    for key, flag, value, text in ppsim._core.settings():
        assert f"    {key.replace('-', '_')}=" in ppsim.run.__doc__
    assert "micro_batch=N" in ppsim.run.__doc__ and "sequences per micro-batch" in ppsim.run.__doc__
    assert "recompute=MODE" in ppsim.compare.__doc__
    help_text = cli("run", "--help").stdout
    assert "--micro-batch N" in help_text  # the same table


def test_the_type_stubs_name_every_public_function():
    stubs = open(os.path.join(os.path.dirname(ppsim.__file__), "__init__.pyi")).read()
    for name in ppsim.__all__:
        assert f"def {name}(" in stubs or f"class {name}(" in stubs, name


def test_run_takes_one_schedule_as_the_cli_does():
    with pytest.raises(ppsim.InputError, match="run simulates one schedule; use `ppsim compare -s gpipe,1f1b`"):
        ppsim.run(schedule=["gpipe", "1f1b"])


def test_a_deadlocking_schedule_raises_schedule_error_with_its_grid():
    path = os.path.join(SOURCE, "tests", "data", "schedule_files", "deadlock_p2_m2.csv")
    with pytest.raises(ppsim.ScheduleError) as raised:
        ppsim.run(schedule_file=path)
    status, message, stderr = cli_error("run", "--schedule-file", path)
    assert status == 3
    assert str(raised.value) == message
    assert raised.value.grid == stderr.split("\n", 1)[1]
    assert "<-- here" in raised.value.grid


def test_sweep_gives_the_points_and_summary_of_ppsim_sweep(tmp_path):
    study = os.path.join(SOURCE, "configs", "studies", "m_vs_p_bubble.json")
    out = tmp_path / "points.jsonl"
    summary = cli("sweep", study, "-j", "2", "-o", str(out)).stdout
    result = ppsim.sweep(study, jobs=3)
    assert result["points"] == [json.loads(line) for line in out.read_text().splitlines()]
    assert result["summary"] == summary
    assert result["top"] and result["choose_m"]
    assert all(point in result["points"] and point["status"] == "run" for point in result["top"])
    for row in result["choose_m"]:
        # The point reached has a bubble at most the target; the one it printed in the summary.
        if row["point"] is not None:
            assert row["point"]["bubble_ratio"] <= row["bubble_target"]
            assert row["point"]["schedule"] == row["schedule"] and row["point"]["p"] == row["p"]


def test_a_sweep_study_may_be_a_dict():
    study = {"fixed": {"forward": 1, "backward": 2}, "axes": {"schedule": ["gpipe", "1f1b"], "p": [2, 4], "m": [4, 8]}}
    result = ppsim.sweep(study, jobs=1)
    assert len(result["points"]) == 8
    for point in result["points"]:
        p, m = point["p"], point["m"]
        assert point["bubble_ratio"] == pytest.approx((p - 1) / (m + p - 1), rel=1e-15)


def test_export_lists_ppsim_exports_actions():
    assert ppsim.export("1f1b", 4, 8) == cli_json("export", "-s", "1f1b", "-p", "4", "-m", "8", "--format", "json")
    assert ppsim.export("interleaved-1f1b", 2, 4, v=2)["actions"][0][:3] == ["0F0", "0F1", "2F0"]


def test_synth_is_the_clis(tmp_path):
    settings = dict(p=4, m=8, forward="1,1,1,1.5", backward="2,2,2,3", activation_bytes="1GiB")
    found = ppsim.synth("4 GiB", output=tmp_path / "found.csv", **settings)
    flags = ["-p", "4", "-m", "8", "--forward", "1,1,1,1.5", "--backward", "2,2,2,3", "--activation-bytes", "1GiB"]
    by_cli = cli_json("synth", *flags, "--memory-limit", "4 GiB", "-o", str(tmp_path / "cli.csv"), "--format", "json")
    # Each result names the schedule file it wrote, so that ppsim check can re-run it; the rest is equal.
    assert found["scenario"].pop("schedule-file") == str(tmp_path / "found.csv")
    assert by_cli["scenario"].pop("schedule-file") == str(tmp_path / "cli.csv")
    assert found == by_cli
    assert (tmp_path / "found.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()
    assert ppsim.run(schedule_file=str(tmp_path / "found.csv"), **settings)["makespan"] == found["synth"]["makespan"]
    with pytest.raises(ppsim.InputError, match="^ppsim.synth: memory_limit: "):
        ppsim.synth("1 B", **settings)


def test_lists_equal_the_clis_json_lists():
    assert ppsim.schedules() == cli_json("schedules", "--format", "json")
    assert ppsim.models() == cli_json("models", "--format", "json")
    assert {"gpipe", "1f1b", "zbv"} <= {info["name"] for info in ppsim.schedules()}


def test_version_is_the_clis():
    assert cli("--version").stdout.strip() == f"ppsim {ppsim.__version__} (git {ppsim.__git_revision__})"


def test_records_flatten_one_row_per_device():
    rows = ppsim.records(ppsim.compare(["gpipe", "1f1b"], p=4, m=8))
    assert len(rows) == 8
    assert rows[0]["schedule"] == "gpipe" and rows[0]["device"] == 0 and "device_busy" in rows[0]
    assert "device_device" not in rows[0]


def test_records_carry_the_training_figures_under_the_sweep_csv_names():
    result = ppsim.run(model="llama3.1-8b", p=2, m=4)
    rows = ppsim.records(result)
    assert len(rows) == 2
    for name in ("t", "d", "micro_batch", "global_batch", "recompute", "step_time", "tokens_per_second", "mfu"):
        assert name in rows[1], name
    assert rows[1]["step_time"] == result["training"]["step_time"]
    assert rows[1]["micro_batch"] == 1 and rows[1]["global_batch"] == 4
    assert all("-" not in key for key in rows[1])  # snake_case, as the sweep CSV's columns


def test_threads_may_call_the_module_at_once():
    # Each call holds no Python state while C++ runs; results do not depend on what runs beside them.
    expected = ppsim.run(schedule="zbv", p=8, m=64)
    results = [None] * 4

    def work(i):
        results[i] = ppsim.run(schedule="zbv", p=8, m=64)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4


def test_check_re_runs_a_baseline_as_ppsim_check_does(tmp_path):
    path = tmp_path / "base.json"
    path.write_text(cli("compare", "-s", "gpipe,1f1b", "-p", "4", "-m", "8", "--format", "json").stdout)
    passed = ppsim.check(path)
    assert passed["moved"] == [] and passed["results"] == 2 and passed["figures"] > 100
    assert passed["report"] == cli("check", str(path)).stdout
    stored = json.loads(path.read_text())
    stored[1]["makespan"] = 30.0
    path.write_text(json.dumps(stored))
    moved = ppsim.check(path, only=["makespan"])
    assert moved["moved"] == [{"figure": "[1f1b] makespan", "baseline": "30.0", "now": "33.0", "change": "+10%"}]
    assert moved["report"] == cli("check", str(path), "--only", "makespan", check=False).stdout
    with pytest.raises(ppsim.InputError, match="^ppsim.check: rtol: must be a finite number >= 0"):
        ppsim.check(path, rtol=-1)


def test_expect_raises_as_the_cli_exits_1_with_its_lines():
    assert ppsim.run(schedule="1f1b", p=4, m=8, expect=["bubble_ratio < 0.3", "fits"])["makespan"] == 33
    with pytest.raises(ppsim.ExpectationError) as raised:
        ppsim.compare(["1f1b", "zb-h1"], p=4, m=8, expect="bubble_ratio <= 0.2")
    done = cli("compare", "-s", "1f1b,zb-h1", "-p", "4", "-m", "8", "--expect", "bubble_ratio <= 0.2", check=False)
    assert done.returncode == 1
    assert raised.value.failures == [line[len("ppsim: "):] for line in done.stderr.splitlines()]
    assert [r["schedule"] for r in raised.value.result] == ["1f1b", "zb-h1"]
    with pytest.raises(ppsim.InputError, match="expect: unknown figure 'bubbel_ratio'"):
        ppsim.run(schedule="1f1b", p=4, m=8, expect=["bubbel_ratio < 1"])


def test_a_sharded_sweep_writes_and_merges_the_files_ppsim_sweep_does(tmp_path):
    study = os.path.join(SOURCE, "configs", "studies", "schedule_shootout.json")
    whole = tmp_path / "whole.csv"
    cli("sweep", study, "-j", "2", "-o", str(whole))
    shards = [tmp_path / f"shard{i}.csv" for i in range(3)]
    for i, path in enumerate(shards):
        result = ppsim.sweep(study, jobs=2, shard=(i, 3), output=path)
        assert result["summary"] == cli("sweep", study, "-j", "1", "--shard", f"{i}/3").stdout
    ppsim.merge(tmp_path / "merged.csv", shards)
    assert (tmp_path / "merged.csv").read_bytes() == whole.read_bytes()
    page = tmp_path / "page.html"
    result = ppsim.sweep(study, html=page, summary=tmp_path / "tables.json")
    cli("sweep", study, "--summary", str(tmp_path / "cli_tables.json"))
    assert (tmp_path / "tables.json").read_bytes() == (tmp_path / "cli_tables.json").read_bytes()
    tables = json.loads((tmp_path / "tables.json").read_text())
    assert tables["top"] == result["top"] and "points" not in tables
    assert page.read_text().startswith("<!DOCTYPE html>")
    with pytest.raises(ppsim.InputError, match="^ppsim.sweep: shard: must be I/N"):
        ppsim.sweep(study, shard="3/3")


def test_formulas_print_and_check_as_ppsim_formulas_does():
    printed = ppsim.formulas(p=8, m=32)
    assert printed["agreed"] and printed["report"] == cli("formulas", "-p", "8", "-m", "32").stdout
    checked = ppsim.formulas(check=True, schedule="zb-h1", p=8)
    assert checked["agreed"] and checked["report"] == cli("formulas", "--check", "-s", "zb-h1", "-p", "8").stdout
    with pytest.raises(ppsim.InputError, match="no closed form holds"):
        ppsim.formulas(check=True, schedule="custom")


def test_trace_reads_replays_and_calibrates_as_ppsim_trace_does(tmp_path):
    traced = tmp_path / "t.json"
    ppsim.run(schedule="1f1b", p=4, m=8, forward=[1, 1, 1, 1.5], backward=[2, 2, 2, 3], trace=traced)
    result = ppsim.trace(traced, calibrate=tmp_path / "c.json", svg=tmp_path / "idle.svg")
    assert result == json.loads(cli("trace", str(traced), "--format", "json").stdout)
    assert result["step"]["recorded"] == result["step"]["replayed"] == result["step"]["modelled"]
    for device in result["idle"]:
        parts = sum(device[cause] for cause in ("bubble", "straggler", "message", "collective", "launch"))
        assert parts == pytest.approx(device["idle"])
    # Calibrated from the trace, another schedule runs on the measured costs.
    predicted = ppsim.run(calibrated_from=str(tmp_path / "c.json"), schedule="zbv")
    assert predicted["makespan"] == ppsim.run(calibrated_from=str(traced), schedule="zbv")["makespan"]
    assert predicted["provenance"]["costs"]["format"] == "ppsim --trace"
    with pytest.raises(ppsim.InputError, match="^ppsim.trace: m: a Megatron-LM timer log does not say"):
        ppsim.trace(os.path.join(SOURCE, "tests", "data", "timers", "megatron_minmax.log"), p=4)
