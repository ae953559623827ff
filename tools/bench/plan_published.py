#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where NVIDIA's published, tuned layouts land in `ppsim plan`.

For every Megatron-LM, NeMo and Megatron-Bridge H100 run in configs/validation/cases.json on 16 to
1,024 GPUs, plans the same model, hardware, sequence, global batch and precision with every layout
axis open (Megatron-LM's layouts only, as those runs are Megatron's), runs NVIDIA's own layout, and
prints NVIDIA's rank among the plan's layouts and its step against the plan's best.

usage: tools/bench/plan_published.py [PPSIM] > table.md
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PPSIM = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "tools", "ppsim", "ppsim")
VALIDATION = os.path.join(ROOT, "configs", "validation")
# The axes plan chooses; the rest of a run's config is what the plan keeps fixed.
LAYOUT_KEYS = {"t", "p", "v", "d", "m", "context-parallel", "e", "expert-tensor-parallel", "micro-batch", "recompute",
               "recompute-modules", "distributed-optimizer", "fsdp", "data-parallel-replicate", "schedule",
               "layers-per-stage", "sequence-parallel", "overlap-p2p-comm", "comm", "microbatch-group-size",
               "hierarchical-context-parallel-sizes", "overlap-param-gather"}
NVIDIA = ("Megatron-Core README", "NeMo", "Megatron-Bridge", "Megatron-MoE-ModelZoo")


def ppsim(*args):
    return json.loads(subprocess.run([PPSIM, *args], capture_output=True, text=True, check=True).stdout)


def absolute(config, key):
    value = config.get(key)
    if isinstance(value, str) and value.endswith(".json") and not os.path.isabs(value):
        config[key] = os.path.join(VALIDATION, value)


def main():
    cases = json.load(open(os.path.join(VALIDATION, "cases.json")))["cases"]
    print("| run | GPUs | NVIDIA's layout | its step (s) | plan's best | best step (s) | NVIDIA's rank | behind best |")
    print("| --- | ---: | --- | ---: | --- | ---: | ---: | ---: |")
    for case in cases:
        if not case["source"].startswith(NVIDIA) or "H100" not in case["source"]:
            continue
        config = json.load(open(os.path.join(VALIDATION, case["config"])))
        absolute(config, "model")
        absolute(config, "hardware")
        gpus = config.get("t", 1) * config.get("context-parallel", 1) * config.get("p", 1) * config.get("d", 1)
        if not 16 <= gpus <= 1024:
            continue
        with tempfile.TemporaryDirectory() as directory:
            own = os.path.join(directory, "own.json")
            json.dump(dict(config, format="json"), open(own, "w"))
            theirs = ppsim("run", "-c", own)["training"]
            plan_file = os.path.join(directory, "plan.json")
            fixed = {key: value for key, value in config.items() if key not in LAYOUT_KEYS}
            json.dump(dict(fixed, gpus=gpus, top=5, framework="megatron", format="json"), open(plan_file, "w"))
            plan = ppsim("plan", plan_file)
        # Each layout's best step: the search's, or the finalist's after its split search.
        best_of = {}
        for point in plan["points"]:
            if point["fits"]:
                best_of[point["layout"]] = min(point["step_time"], best_of.get(point["layout"], float("inf")))
        for layout in plan["layouts"]:
            label = layout["layout"]["label"]
            best_of[label] = min(layout["step_time"], best_of.get(label, float("inf")))
        steps = sorted(best_of.values())
        step = theirs["step_time"]
        if not theirs["fits"]:
            rank = "over memory"
        else:
            rank = str(1 + sum(1 for other in steps if other < step * (1 - 1e-9)))
        best = plan["layouts"][0] if plan["layouts"] else None
        label = ("t{t} c{c} e{e} p{p} v{v} d{d} b{b} {r}".format(
            t=config.get("t", 1), c=config.get("context-parallel", 1), e=config.get("e", 1), p=config.get("p", 1),
            v=config.get("v", 1), d=config.get("d", 1), b=config.get("micro-batch", 1),
            r=config.get("recompute", "none")) + " " + config.get("schedule", "1f1b"))
        print(f"| {case['name']} | {gpus} | {label} | {step:.3f} | {best['layout']['label'] if best else '-'} | "
              f"{best['step_time'] if best else float('nan'):.3f} | {rank} | "
              f"{(step / best['step_time'] - 1) * 100 if best else float('nan'):+.1f}% |", flush=True)


if __name__ == "__main__":
    main()
