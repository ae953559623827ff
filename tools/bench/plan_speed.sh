#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ppsim plan's speed on one core: Llama 3.1 70B on 64 H100s, 405B on 1,024 and on 16,384, every axis
# open. Prints the wall time, the counts of the search, and, with --callgrind, the instructions per
# simulated layout (the plan's total less `ppsim --version`'s, over the layouts simulated).
# usage: tools/bench/plan_speed.sh [PPSIM] [--callgrind]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ppsim="${1:-$root/build/tools/ppsim/ppsim}"
callgrind="${2:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
run() {
  local name="$1"
  shift
  local start end
  start=$(date +%s.%N)
  "$ppsim" plan "$@" -j 1 --format json > "$work/$name.json"
  end=$(date +%s.%N)
  python3 - "$work/$name.json" "$name" "$start" "$end" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
c = plan["counts"]
best = plan["layouts"][0]
print(f"{sys.argv[2]}: {float(sys.argv[4]) - float(sys.argv[3]):.2f} s; {c['enumerated']} enumerated, {c['refused']} refused, "
      f"{c['over_memory']} over memory, {c['pruned']} pruned, {c['simulated']} simulated in {c['pipelines']} pipelines; "
      f"best {best['layout']['label']} at {best['step_time']:.3f} s")
PY
  if [[ "$callgrind" == --callgrind ]]; then
    valgrind --tool=callgrind --callgrind-out-file="$work/$name.cg" "$ppsim" plan "$@" -j 1 --format json > /dev/null 2>&1
    valgrind --tool=callgrind --callgrind-out-file="$work/version.cg" "$ppsim" --version > /dev/null 2>&1
    python3 - "$work/$name.cg" "$work/version.cg" "$work/$name.json" <<'PY'
import json, sys
def total(path):
    return next(int(line.split()[1]) for line in open(path) if line.startswith("summary:"))
simulated = json.load(open(sys.argv[3]))["counts"]["simulated"]
print(f"  callgrind: {(total(sys.argv[1]) - total(sys.argv[2])) / simulated:,.0f} instructions per simulated layout")
PY
  fi
}
run llama3.1-70b-64 --model llama3.1-70b --gpus 64 --global-batch 128 --seq 8192
run llama3.1-405b-1024 --model llama3.1-405b --gpus 1024 --global-batch 2048 --seq 8192
run llama3.1-405b-16384 --model llama3.1-405b --gpus 16384 --global-batch 2048 --seq 8192
