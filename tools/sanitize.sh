#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The sanitizer suite: installs clang 14 and its sanitizer and libFuzzer runtimes where missing
# (Debian packages, tools/install-deps.sh --sanitize), builds the asan preset (clang 14,
# AddressSanitizer + UBSan, no recovery), runs every test under it, then every fuzz target over its
# corpus and for SECONDS (default 20) each. .ci/run calls it after the README's test command.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-20}"
cd "$root"
tools/install-deps.sh --test --sanitize
cmake --preset asan >/dev/null
cmake --build --preset asan
ctest --preset asan
tools/fuzz.sh --ci "$seconds"
