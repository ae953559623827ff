#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The engine's cost in machine-independent figures, as issue 14 tracks them: callgrind instruction
# counts (stable on shared machines, unlike times) and peak resident memory.
#   start        instructions of `ppsim --version`: loading, static initialisation, the CLI
#   per op       (instructions of a run - start) / its simulated ops, for 1F1B and ZB-V at p=64,
#                m=1024, with free links and with latency and bandwidth. A simulated op is a compute op
#                or a message, as engine_bench counts them (issue 14's unit); per compute op beside it.
#   per point    instructions of a sweep over configs/studies/m_vs_p_bubble.json / its points
#   peak RSS     of runs of 50 M compute ops (1F1B, ZB-V and GPipe: memory that does not grow with m)
#                and of the largest 1F1B run the op limit accepts (p=4, m=83,333,333: 667 M ops)
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
EOF

study=configs/studies/m_vs_p_bubble.json
out=$(mktemp --suffix=.csv)
trap 'rm -f "$out"' EXIT
total=$(count "$ppsim" sweep "$study" -j 1 -o "$out")
points=$(($(wc -l < "$out") - 1))
awk -v t="$total" -v p="$points" 'BEGIN { printf "sweep m_vs_p_bubble.json       %.0f instructions per point (%d points)\n", t / p, p }'

while IFS='|' read -r label args; do
  # shellcheck disable=SC2086
  kib=$(/usr/bin/time -f %M "$ppsim" run $args --format csv 2>&1 > /dev/null | tail -1)
  awk -v label="$label" -v k="$kib" 'BEGIN { printf "%-29s %.0f MiB\n", label, k / 1024 }'
done << 'EOF'
peak RSS, 1f1b 50 M ops|-s 1f1b -p 4 -m 6250000
peak RSS, zbv 50 M ops|-s zbv -p 4 -m 2083333
peak RSS, gpipe 50 M ops|-s gpipe -p 4 -m 6250000
peak RSS, 1f1b 667 M ops|-s 1f1b -p 4 -m 83333333
EOF
