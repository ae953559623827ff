#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `pip install .` through pyproject.toml and setup.py, offline against Debian's setuptools and
# pybind11 (--no-build-isolation), into a scratch directory: the module it installs imports, names
# the build's version and simulates. A copy of the sources is built, so that setuptools' files stay
# out of the checkout; the configured build directory is reused (PPSIM_CMAKE_BUILD_DIR).
#   tests/install/pip_install_test.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail
build="$1" source="$2" version="$3"
if ! /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
  echo "SKIP: pip is not installed (tools/install-deps.sh --test installs python3-pip)"
  exit 77
fi
grep -qx "version = \"$version\"" "$source/pyproject.toml" ||
  { echo "FAIL: pyproject.toml's version is not the CMake project's $version"; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
tar -C "$source" --exclude=./build --exclude='./build-*' --exclude=./.git -cf - . | tar -C "$work/src" -xf -
if ! PPSIM_CMAKE_BUILD_DIR="$build" /usr/bin/python3 -m pip install --no-build-isolation --no-deps --no-index \
     --disable-pip-version-check --target "$work/site" "$work/src" >"$work/pip.log" 2>&1; then
  cat "$work/pip.log"
  exit 1
fi
ls "$work/site/ppsim/"__init__.pyi "$work/site/ppsim/py.typed" >/dev/null
PYTHONPATH="$work/site" /usr/bin/python3 -c "
import ppsim
assert ppsim.__file__.startswith('$work/site/ppsim/'), ppsim.__file__
assert ppsim.__version__ == '$version', ppsim.__version__
assert ppsim.run(schedule='1f1b', p=4, m=8)['bubble_ratio'] == 3 / 11
print('pip install . gave ppsim', ppsim.__version__, 'in', '$work/site')
"
