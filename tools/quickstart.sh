#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's two commands:
#   tools/quickstart.sh run [ppsim arguments]   install what is missing, build (Release), run ppsim
#   tools/quickstart.sh test                    install what is missing, build, run every test
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PPSIM_BUILD_DIR:-$root/build}"
jobs="${PPSIM_JOBS:-2}"

usage() {
  echo "usage: tools/quickstart.sh run [ppsim arguments] | test" >&2
  exit 2
}

[ $# -ge 1 ] || usage
command="$1"
shift

# Only the tests need a browser: `run` installs what ppsim needs, `test` also chromium and zlib.
if [ "$command" = "test" ]; then
  "$root/tools/install-deps.sh" --test
else
  "$root/tools/install-deps.sh"
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null

case "$command" in
  run)
    # The Python module too where pybind11 is installed (install-deps.sh installs it), so that
    # `PYTHONPATH=build/tools/python python3 -c 'import ppsim'` works after the quick start.
    # (The target list is read whole: `| grep -q` would close the pipe early, and pipefail would
    # then count cmake's SIGPIPE as a failure.)
    targets=(ppsim)
    listed="$(cmake --build "$build" --target help 2>/dev/null || true)"
    if [[ "$listed" == *ppsim_python* ]]; then
      targets+=(ppsim_python)
    fi
    cmake --build "$build" --target "${targets[@]}" -j "$jobs" >/dev/null
    exec "$build/tools/ppsim/ppsim" "$@"
    ;;
  test)
    cmake --build "$build" -j "$jobs"
    cd "$build"
    exec ctest --output-on-failure -j "$jobs"
    ;;
  *)
    usage
    ;;
esac
