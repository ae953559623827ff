#!/usr/bin/env bash
# Installs the Debian 12 packages ppsim needs to build and test, and only those that are missing.
# Everything comes from Debian's archive; nothing else is downloaded.
#   tools/install-deps.sh          what building and running ppsim needs
#   tools/install-deps.sh --test   also what only the tests need: a real browser (chromium) to render
#                                  the HTML report, and zlib to read its screenshot. These are tried
#                                  after the rest; where they cannot be installed the browser test
#                                  is skipped, saying so, and everything else still runs.
set -euo pipefail

packages=(cmake make g++ libcli11-dev nlohmann-json3-dev catch2 libbenchmark-dev)
test_packages=(chromium zlib1g-dev)

missing_of() {
  local package
  for package in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      echo "$package"
    fi
  done
}

mapfile -t missing < <(missing_of "${packages[@]}")
test_missing=()
if [ "${1:-}" = "--test" ]; then
  mapfile -t test_missing < <(missing_of "${test_packages[@]}")
fi
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
    echo "install-deps: could not install ${test_missing[*]}; the browser test will be skipped" >&2
  fi
fi
