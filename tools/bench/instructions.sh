#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The engine's cost, and the cost of the paths around it, in machine-independent figures (issues 14
# and 37): callgrind instruction counts (stable on shared machines, unlike times) and peak resident
# memory.
#   start        instructions of `ppsim --version`: loading, static initialisation, the CLI
#   per op       (instructions of a run - start) / its simulated ops, at p=64, m=1024: 1F1B and ZB-V
#                with free links and with latency and bandwidth, Megatron's paired sends, DualPipe-V,
#                DualPipe, interleaved 1F1B, Chimera, BitPipe and Seq1F1B (m=256 in 4 slices). A simulated op is a compute op or a message, as
#                engine_bench counts them (issue 14's unit); per compute op beside it.
#   samples      (a run with --samples 4 -j 1 - the same run without) / (4 x its ops): per op per
#                sample, 1F1B p=64 m=256 with 5% jitter; and the bytes a sampled run holds per op
#                (its peak RSS less a plain run's, over its ops, at m=16384)
#   per point    instructions of a sweep over configs/studies/m_vs_p_bubble.json / its points, and
#                of configs/studies/llama3_70b_64xh100.json (a --model study) / its points
#   --model      a compare of every schedule that takes p=8, m=32 on Llama 3.1 8B, per schedule;
#                the cost of naming --hardware (the same run with and without it)
#   plan         ppsim plan's instructions per simulated layout, Llama 3.1 70B on 64 H100s
#   synth        instructions of ppsim synth at p=16, m=64 (ZB-H1's memory) and p=32, m=128 on the V
#   python       instructions per ppsim.run(schedule="1f1b", p=4, m=8) call, and the engine's part
#   peak RSS     of runs of 50 M compute ops (1F1B, ZB-V and GPipe: memory that does not grow with m),
#                of the largest 1F1B run the op limit accepts (p=4, m=83,333,333: 667 M ops), and of
#                paired 1F1B at 16.8 M ops (p=64, m=65,536)
# Usage: tools/bench/instructions.sh [PPSIM]   (default build/tools/ppsim/ppsim, from a release build)
# Needs valgrind and GNU time (Debian packages valgrind and time).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ppsim="${1:-build/tools/ppsim/ppsim}"
for tool in valgrind /usr/bin/time; do
  command -v "$tool" > /dev/null || { echo "instructions.sh: needs $tool (apt-get install ${tool##*/})" >&2; exit 2; }
done
[ -x "$ppsim" ] || { echo "instructions.sh: no ppsim binary at $ppsim (build first)" >&2; exit 2; }

# Instructions of one command, its output discarded.
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 > /dev/null | sed -n 's/.*Collected : //p'
}
# The first value of a key of one run's JSON summary.
figure() {
  local key=$1
  shift
  "$ppsim" "$@" --format json | grep -o "\"$key\": *[0-9]*" | head -1 | grep -o '[0-9]*$'
}

start=$(count "$ppsim" --version)
echo "start                         $start instructions"
while read -r label args; do
  # shellcheck disable=SC2086  # the arguments are meant to split
  total=$(count "$ppsim" run $args --format csv)
  # shellcheck disable=SC2086
  compute=$(figure compute_ops run $args)
  # shellcheck disable=SC2086
  messages=$(figure messages run $args)
  awk -v label="$label" -v t="$total" -v s="$start" -v c="$compute" -v m="$messages" \
    'BEGIN { printf "%-29s %.1f instructions per op, %.1f per compute op (%d compute ops + %d messages, %d instructions)\n",
             label, (t - s) / (c + m), (t - s) / c, c, m, t }'
done << 'EOF'
1f1b-free-links     -s 1f1b -p 64 -m 1024
1f1b-latency-bw     -s 1f1b -p 64 -m 1024 --latency 0.1 --bandwidth 1e9 --message-bytes 1e8
zbv-free-links      -s zbv -p 64 -m 1024
zbv-latency-bw      -s zbv -p 64 -m 1024 --latency 0.1 --bandwidth 1e9 --message-bytes 1e8
1f1b-paired         -s 1f1b -p 64 -m 1024 --comm paired --latency 0.1 --bandwidth 1e9 --message-bytes 1e8
dualpipev           -s dualpipev -p 64 -m 1024
dualpipe            -s dualpipe -p 64 -m 1024
interleaved-1f1b    -s interleaved-1f1b -p 64 -m 1024
chimera             -s chimera -p 64 -m 1024
bitpipe             -s bitpipe -p 64 -m 1024
seq1f1b-k4          -s seq1f1b -p 64 -m 256 --sequence-splits 4
EOF

samples="-s 1f1b -p 64 -m 256"
# shellcheck disable=SC2086
plain=$(count "$ppsim" run $samples --format csv)
# shellcheck disable=SC2086
sampled=$(count "$ppsim" run $samples --samples 4 --jitter 0.05 -j 1 --format csv)
# shellcheck disable=SC2086
ops=$(($(figure compute_ops run $samples) + $(figure messages run $samples)))
awk -v s="$sampled" -v p="$plain" -v o="$ops" \
  'BEGIN { printf "samples, 1f1b p=64 m=256     %.1f instructions per op per sample (%d ops)\n", (s - p) / (4 * o), o }'
large="-s 1f1b -p 64 -m 16384"
# shellcheck disable=SC2086
plain_kib=$(/usr/bin/time -f %M "$ppsim" run $large --format csv 2>&1 > /dev/null | tail -1)
# shellcheck disable=SC2086
sampled_kib=$(/usr/bin/time -f %M "$ppsim" run $large --samples 1 --jitter 0.05 -j 1 --format csv 2>&1 > /dev/null | tail -1)
# shellcheck disable=SC2086
large_ops=$(($(figure compute_ops run $large) + $(figure messages run $large)))
awk -v s="$sampled_kib" -v p="$plain_kib" -v o="$large_ops" \
  'BEGIN { printf "samples, held per op          %.1f bytes (p=64 m=16384: %d ops)\n", (s - p) * 1024 / o, o }'

study=configs/studies/m_vs_p_bubble.json
out=$(mktemp --suffix=.csv)
trap 'rm -f "$out"' EXIT
total=$(count "$ppsim" sweep "$study" -j 1 -o "$out")
points=$(($(wc -l < "$out") - 1))
awk -v t="$total" -v p="$points" 'BEGIN { printf "sweep m_vs_p_bubble.json       %.0f instructions per point (%d points)\n", t / p, p }'
study=configs/studies/llama3_70b_64xh100.json
total=$(count "$ppsim" sweep "$study" -j 1 -o "$out")
points=$(($(wc -l < "$out") - 1))
awk -v t="$total" -v p="$points" 'BEGIN { printf "sweep llama3_70b_64xh100.json  %.0f instructions per point (%d points)\n", t / p, p }'

model="--model llama3.1-8b -p 8 --global-batch 32 --seq 2048"
# Every registry schedule that takes this layout (some need v, m or p they do not get here).
schedules=$("$ppsim" schedules --format json | python3 -c '
import json, subprocess, sys
names = [s["name"] for s in json.load(sys.stdin) if s["name"] != "custom"]
args = [sys.argv[1], "run", "--model", "llama3.1-8b", "-p", "8", "--global-batch", "32", "--seq", "2048", "--format", "csv"]
print(",".join(n for n in names if subprocess.run(args + ["-s", n], capture_output=True).returncode == 0))' "$ppsim")
# shellcheck disable=SC2086
total=$(count "$ppsim" compare $model -s "$schedules" --format csv)
n=$(echo "$schedules" | tr ',' '\n' | wc -l)
awk -v t="$total" -v s="$start" -v n="$n" \
  'BEGIN { printf "compare, llama3.1-8b p=8 m=32  %.0f instructions per schedule (%d schedules)\n", (t - s) / n, n }'
# shellcheck disable=SC2086
with=$(count "$ppsim" run $model --hardware h100-sxm5-80gb --format csv)
# shellcheck disable=SC2086
without=$(count "$ppsim" run $model --format csv)
awk -v w="$with" -v o="$without" 'BEGIN { printf "--hardware named               %+d instructions against the same run without it\n", w - o }'

plan_json=$(mktemp --suffix=.json)
trap 'rm -f "$out" "$plan_json"' EXIT
plan="--model llama3.1-70b --gpus 64 --global-batch 128 --seq 8192 -j 1 --format json"
# shellcheck disable=SC2086
total=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$ppsim" plan $plan 2>&1 > "$plan_json" | sed -n 's/.*Collected : //p')
simulated=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["counts"]["simulated"])' "$plan_json")
awk -v t="$total" -v s="$start" -v n="$simulated" \
  'BEGIN { printf "plan, llama3.1-70b on 64       %.0f instructions per simulated layout (%d simulated)\n", (t - s) / n, n }'

while IFS='|' read -r label args; do
  # shellcheck disable=SC2086
  total=$(count "$ppsim" synth $args --activation-bytes 1GiB --format json)
  printf "%-29s %d instructions\n" "$label" "$total"
done << 'EOF'
synth p=16 m=64 ZB-H1 memory|-p 16 -m 64 --memory-limit 16GiB
synth p=32 m=128 V, 1F1B's|-p 32 -m 128 -v 2 --placement v --memory-limit 64GiB
EOF

if [[ -d build/tools/python/ppsim ]]; then
  py() {
    PYTHONPATH=build/tools/python valgrind --tool=callgrind --callgrind-out-file="$1" /usr/bin/python3 -c "import ppsim
ppsim.run(schedule='1f1b', p=4, m=8)
for _ in range($2): ppsim.run(schedule='1f1b', p=4, m=8)" 2>&1 | sed -n 's/.*Collected : //p'
  }
  cg=$(mktemp)
  base=$(py /dev/null 0)
  calls=$(py "$cg" 20)
  engine=$(callgrind_annotate --inclusive=yes "$cg" 2> /dev/null | grep -m1 'ppsim::simulate_all' | tr -d ',' | awk '{ print $1 }')
  rm -f "$cg"
  awk -v c="$calls" -v b="$base" -v e="$engine" \
    'BEGIN { printf "python ppsim.run 1f1b p=4 m=8  %.0f instructions per call, %.0f of them simulating\n", (c - b) / 20, e / 21 }'
fi

while IFS='|' read -r label args; do
  # shellcheck disable=SC2086
  kib=$(/usr/bin/time -f %M "$ppsim" run $args --format csv 2>&1 > /dev/null | tail -1)
  awk -v label="$label" -v k="$kib" 'BEGIN { printf "%-29s %.0f MiB\n", label, k / 1024 }'
done << 'EOF'
peak RSS, 1f1b 50 M ops|-s 1f1b -p 4 -m 6250000
peak RSS, zbv 50 M ops|-s zbv -p 4 -m 2083333
peak RSS, gpipe 50 M ops|-s gpipe -p 4 -m 6250000
peak RSS, 1f1b 667 M ops|-s 1f1b -p 4 -m 83333333
peak RSS, paired 16.8 M ops|-s 1f1b -p 64 -m 65536 --comm paired
EOF
