#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The libFuzzer targets of every parser (tests/fuzz), built by the asan preset.
#   tools/fuzz.sh TARGET SECONDS   fuzz one target for SECONDS, starting from its checked-in corpus;
#                                  new inputs go to build-asan/fuzz-work/TARGET, never into the tree.
#   tools/fuzz.sh --ci [SECONDS]   every target: each corpus input once, then SECONDS (default 20) of
#                                  fuzzing; exits non-zero on the first crash, leak or sanitizer report.
#   tools/fuzz.sh --list           the targets
# A crash leaves its reproducer in build-asan/fuzz-work/; check it in under tests/fuzz/corpus/TARGET/
# as a regression input once fixed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-asan"
targets=(fuzz_config fuzz_plan fuzz_schedule_csv fuzz_schedule_json fuzz_action fuzz_units fuzz_study fuzz_expectation fuzz_model_json
         fuzz_hardware_json fuzz_merge fuzz_calibrate_options fuzz_trace fuzz_timer_log)

usage() {
  echo "usage: tools/fuzz.sh TARGET SECONDS | --ci [SECONDS] | --list" >&2
  exit 2
}

build_targets() {
  if [ ! -f "$build/CMakeCache.txt" ]; then
    (cd "$root" && cmake --preset asan >/dev/null)
  fi
  cmake --build "$build" --target "$@" -j "${PPSIM_JOBS:-2}" >/dev/null
}

# Fuzzes $1 for $2 seconds; prints libFuzzer's closing figures (executions, coverage).
fuzz() {
  local target="$1" seconds="$2"
  local work="$build/fuzz-work/$target"
  mkdir -p "$work"
  # Inputs are kept small while mutating (the corpus holds a few larger regression inputs, which
  # the -runs=0 pass runs whole); -rss_limit_mb bounds memory, -timeout flags a hang.
  "$build/tests/fuzz/$target" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$work/" -print_final_stats=1 "$work" "$root/tests/fuzz/corpus/$target" \
    >"$work/log" 2>&1 || {
    tail -40 "$work/log" >&2
    echo "fuzz: $target failed; reproducer in $work/" >&2
    return 1
  }
  local done_line executions
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$work/log" | tail -1)
  executions=$(grep -E '^stat::number_of_executed_units' "$work/log" | awk '{print $2}')
  echo "fuzz: $target: ${executions:-?} executions in ${seconds} s; ${done_line#* DONE   }"
}

[ $# -ge 1 ] || usage
case "$1" in
  --list)
    printf '%s\n' "${targets[@]}"
    ;;
  --ci)
    seconds="${2:-20}"
    build_targets "${targets[@]}"
    for target in "${targets[@]}"; do
      "$build/tests/fuzz/$target" -runs=0 "$root/tests/fuzz/corpus/$target" >/dev/null 2>&1 || {
        echo "fuzz: $target crashed on its corpus" >&2
        "$build/tests/fuzz/$target" -runs=0 "$root/tests/fuzz/corpus/$target" 2>&1 | tail -40 >&2
        exit 1
      }
      fuzz "$target" "$seconds"
    done
    ;;
  *)
    [ $# -eq 2 ] || usage
    printf '%s\n' "${targets[@]}" | grep -qx "$1" || { echo "fuzz: unknown target $1 (see --list)" >&2; exit 2; }
    build_targets "$1"
    fuzz "$1" "$2"
    ;;
esac
