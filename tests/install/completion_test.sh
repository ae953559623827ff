#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The generated completions complete what ppsim parses: commands, flags, comma-separated schedule
# lists and enumerated values (bash, run for real); both zsh files parse (zsh -n, where zsh is
# installed); the man pages format without a groff warning.
#   tests/install/completion_test.sh DOCS_DIR   (build/tools/cli_docs/docs)
set -uo pipefail
docs="$1"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# shellcheck source=/dev/null
source "$docs/ppsim.bash"
# The words bash would offer for the command line "$@", whose last word is being typed.
offered() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _ppsim 2>/dev/null
  printf '%s\n' "${COMPREPLY[@]}" | sort
}
expect_offered() {  # expected words (one per line, sorted) then the command line
  local expected="$1"
  shift
  local got
  got="$(offered "$@")"
  [ "$got" = "$expected" ] || fail "completing '$*': expected [$expected], got [$got]"
}
expect_among() {  # a word that must be among those offered, then the command line
  local word="$1"
  shift
  offered "$@" | grep -qxF -- "$word" || fail "completing '$*': '$word' not offered (got: $(offered "$@" | tr '\n' ' '))"
}

expect_offered "run" ppsim ru
expect_offered $'check\ncompare' ppsim c
expect_among "--version" ppsim --
expect_among "sweep" ppsim ""
expect_offered $'--schedule\n--schedule-file' ppsim run --sched
expect_offered "--schedule-file" ppsim run --schedule-
expect_offered $'zb-h1\nzb-h2\nzbv' ppsim run -s zb
expect_offered "gpipe,1f1b" ppsim compare -s gpipe,1f
expect_offered $'blocking' ppsim run --comm bl
expect_offered $'chunk\ndevice' ppsim run --costs-per ""
expect_among "llama3.1-70b" ppsim run --model llama3
expect_among "h100-sxm5-80gb" ppsim run --hardware h1
expect_among "--jobs" ppsim sweep study.json --j
expect_offered "" ppsim run -p ""           # a number to type: nothing offered, not file names
expect_offered "--rtol" ppsim check --rt

# shellcheck source=/dev/null
source "$docs/ppsim-calibrate.bash"
COMP_WORDS=(ppsim-calibrate --back); COMP_CWORD=1; COMPREPLY=(); _ppsim_calibrate
[ "${COMPREPLY[*]}" = "--backend" ] || fail "ppsim-calibrate --back: got [${COMPREPLY[*]}]"
COMP_WORDS=(ppsim-calibrate --precision bf16,tf); COMP_CWORD=2; COMPREPLY=(); _ppsim_calibrate
[ "${COMPREPLY[*]}" = "bf16,tf32" ] || fail "ppsim-calibrate --precision bf16,tf: got [${COMPREPLY[*]}]"

if command -v zsh >/dev/null 2>&1; then
  for file in "$docs/_ppsim" "$docs/_ppsim-calibrate"; do
    zsh -n "$file" || fail "zsh -n $file"
    head -1 "$file" | grep -q '^#compdef ' || fail "$file does not start with #compdef"
  done
else
  echo "note: zsh is not installed; the zsh completions are not parsed"
fi

if command -v groff >/dev/null 2>&1; then
  for page in "$docs/ppsim.1" "$docs/ppsim-calibrate.1"; do
    warnings="$(groff -man -Tutf8 -ww -z "$page" 2>&1)"
    [ -z "$warnings" ] || fail "groff warns on $page: $warnings"
    text="$(groff -man -Tutf8 "$page" 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g')"
    grep -q -- "--schedule" <<<"$text" || grep -q "ppsim-calibrate" <<<"$page" || fail "$page: no --schedule once formatted"
  done
else
  echo "note: groff is not installed; the man pages are not formatted"
fi

[ "$failures" -eq 0 ] || exit 1
echo "completions and man pages: ok"
