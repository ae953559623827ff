#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages ppsim needs to build and test, and only those that are missing.
# Everything comes from Debian's archive; nothing else is downloaded.
#   tools/install-deps.sh          what building and running ppsim needs, its Python module included
#                                  (pybind11 and Python's headers)
#   tools/install-deps.sh --test   also what only the tests need: libxml2 and libpng, with which they
#                                  read the SVG, HTML and screenshots ppsim makes (required); a
#                                  real browser (chromium) to render the HTML report, pytest for the
#                                  Python module's tests, dpkg-dev and file to build the .deb,
#                                  groff and zsh to check the man pages and zsh completions. These are tried after the rest; where they
#                                  cannot be installed those tests are skipped, saying so, and
#                                  everything else still runs.
#   tools/install-deps.sh --test --sanitize
#                                  also clang 14 with its sanitizer and libFuzzer runtimes, for the
#                                  asan preset and tools/fuzz.sh (tools/sanitize.sh); required then.
set -euo pipefail

packages=(cmake make g++ libcli11-dev nlohmann-json3-dev zlib1g-dev catch2 libbenchmark-dev python3-dev pybind11-dev python3-pybind11)
test_packages=(chromium python3-pytest python3-pip python3-setuptools python3-wheel dpkg-dev file groff-base zsh)
# The tests read what ppsim writes with these libraries: they are needed to build the tests at all.
test_libraries=(libxml2-dev libpng-dev)
sanitize_packages=(clang-14 libclang-rt-14-dev)

missing_of() {
  local package
  for package in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      echo "$package"
    fi
  done
}

wanted=("${packages[@]}")
test_missing=()
for option in "$@"; do
  case "$option" in
    --test)
      wanted+=("${test_libraries[@]}")
      mapfile -t test_missing < <(missing_of "${test_packages[@]}")
      ;;
    --sanitize) wanted+=("${sanitize_packages[@]}") ;;
    *) echo "usage: tools/install-deps.sh [--test] [--sanitize]" >&2; exit 2 ;;
  esac
done
mapfile -t missing < <(missing_of "${wanted[@]}")
if [ ${#missing[@]} -eq 0 ] && [ ${#test_missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: missing packages (${missing[*]} ${test_missing[*]}); run as root or install sudo" >&2
    [ ${#missing[@]} -eq 0 ] && exit 0  # only the browser test's packages: it skips without them
    exit 1
  fi
  sudo=(sudo)
fi
# A failed update is fatal only when ppsim itself needs a package.
"${sudo[@]}" apt-get update -q >&2 || [ ${#missing[@]} -eq 0 ]
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi
if [ ${#test_missing[@]} -gt 0 ]; then
  echo "install-deps: installing for the tests: ${test_missing[*]}" >&2
  if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends \
    "${test_missing[@]}" >&2; then
    echo "install-deps: could not install ${test_missing[*]}; the tests that need them will be skipped" >&2
  fi
fi
