#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `cpack -G DEB` makes ppsim_VERSION_ARCH.deb with its dependencies declared, and what it installs
# works from where it lands: the binaries (their --version naming the git revision), an example
# from /usr/share/ppsim giving the build's own figures, the man pages, the completions and, when
# the build has it, the Python module from /usr/lib/python3/dist-packages.
#   tests/install/package_test.sh BUILD_DIR SOURCE_DIR VERSION WITH_PYTHON(0|1)
set -euo pipefail
# Under pipefail, `producer | grep -q` fails whenever grep stops reading before the producer has
# written everything (SIGPIPE): these pipes let grep read to the end, its output thrown away.
build="$1" source="$2" version="$3" with_python="$4"
for tool in dpkg-deb dpkg-shlibdeps file; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed (tools/install-deps.sh --test installs dpkg-dev and file)"
    exit 77
  fi
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if ! cpack -G DEB -B "$work" --config "$build/CPackConfig.cmake" >"$work/cpack.log" 2>&1; then
  cat "$work/cpack.log"
  exit 1
fi
deb="$work/ppsim_${version}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] || { echo "FAIL: no $deb; cpack made: $(ls "$work")"; exit 1; }
[ "$(dpkg-deb -f "$deb" Package)" = ppsim ] || { echo "FAIL: package name"; exit 1; }
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || { echo "FAIL: version $(dpkg-deb -f "$deb" Version)"; exit 1; }
depends="$(dpkg-deb -f "$deb" Depends)"
for library in libc6 libstdc++6 libgcc-s1; do
  grep -q "$library" <<<"$depends" || { echo "FAIL: Depends lacks $library: $depends"; exit 1; }
done

root="$work/root"
dpkg -x "$deb" "$root"

# Every shared library an installed binary or module loads comes from a package Depends names (a
# CUDA or NCCL library from a toolkit outside Debian would not: ppsim-calibrate's CUDA backend must
# not reach the .deb unless its libraries are declared).
depends_names="$(sed 's/ ([^)]*)//g' <<<"$depends" | tr ',|' '\n\n' | tr -d ' ')"
while IFS= read -r -d '' file; do
  file -b "$file" | grep -q '^ELF' || continue
  while read -r library; do
    [ -n "$library" ] || continue
    owner="$(dpkg -S "$(readlink -f "$library")" 2>/dev/null | head -n1 | cut -d: -f1)" ||
      owner=""
    [ -n "$owner" ] || owner="$(dpkg -S "$library" 2>/dev/null | head -n1 | cut -d: -f1)" || owner=""
    if [ -z "$owner" ]; then
      echo "FAIL: ${file#"$root"} loads $library, which no Debian package provides"
      exit 1
    fi
    grep -qxF "$owner" <<<"$depends_names" ||
      { echo "FAIL: ${file#"$root"} loads $library from $owner, which Depends lacks: $depends"; exit 1; }
  done < <(ldd "$file" 2>/dev/null | sed -n 's/^.* => \(\/[^ ]*\) .*$/\1/p')
done < <(find "$root" -type f -print0)
revision="$("$build/tools/ppsim/ppsim" --version | sed -n 's/^ppsim [^ ]* (git \(.*\))$/\1/p')"
[ -n "$revision" ] || { echo "FAIL: the build's ppsim --version names no git revision"; exit 1; }
[ "$("$root/usr/bin/ppsim" --version)" = "ppsim $version (git $revision)" ] ||
  { echo "FAIL: installed --version: $("$root/usr/bin/ppsim" --version)"; exit 1; }
"$root/usr/bin/ppsim-calibrate" --version | grep "^ppsim-calibrate $version (git $revision)" >/dev/null ||
  { echo "FAIL: ppsim-calibrate --version: $("$root/usr/bin/ppsim-calibrate" --version)"; exit 1; }

# An example from share/ppsim gives the figures the build gives for the source tree's copy.
cd "$work"
"$root/usr/bin/ppsim" run -c "$root/usr/share/ppsim/examples/slow_link.json" --format csv >installed.csv
"$build/tools/ppsim/ppsim" run -c "$source/configs/examples/slow_link.json" --format csv >built.csv
cmp -s installed.csv built.csv || { echo "FAIL: the installed example's figures differ"; diff installed.csv built.csv; exit 1; }
grep -q "slow\|1f1b\|gpipe" installed.csv || { echo "FAIL: no figures: $(cat installed.csv)"; exit 1; }
for dir in examples models hardware studies validation; do
  [ -d "$root/usr/share/ppsim/$dir" ] || { echo "FAIL: no /usr/share/ppsim/$dir"; exit 1; }
done

# The licence, README and changelog where Debian keeps a package's documents.
doc="$root/usr/share/doc/ppsim"
grep -q "Apache License" "$doc/copyright" || { echo "FAIL: no Apache-2.0 licence in $doc/copyright"; exit 1; }
cmp -s "$doc/README.md" "$source/README.md" || { echo "FAIL: $doc/README.md is not the README"; exit 1; }
gzip -dc "$doc/changelog.gz" | grep "^# ppsim changelog" >/dev/null || { echo "FAIL: no changelog.gz in $doc"; exit 1; }

for page in ppsim ppsim-calibrate; do
  gzip -dc "$root/usr/share/man/man1/$page.1.gz" | grep '^\.SH NAME' >/dev/null || { echo "FAIL: man page $page"; exit 1; }
done
[ -s "$root/usr/share/bash-completion/completions/ppsim" ] || { echo "FAIL: no bash completion"; exit 1; }
[ -s "$root/usr/share/zsh/vendor-completions/_ppsim" ] || { echo "FAIL: no zsh completion"; exit 1; }

if [ "$with_python" = 1 ]; then
  grep -q python3 <<<"$(dpkg-deb -f "$deb" Recommends)" || { echo "FAIL: Recommends lacks python3"; exit 1; }
  PYTHONPATH="$root/usr/lib/python3/dist-packages" /usr/bin/python3 -c "
import ppsim
assert ppsim.__file__.startswith('$root/usr/lib/python3/dist-packages/'), ppsim.__file__
assert ppsim.__version__ == '$version' and ppsim.__git_revision__ == '$revision', (ppsim.__version__, ppsim.__git_revision__)
assert ppsim.run(schedule='1f1b', p=4, m=8)['bubble_ratio'] == 3 / 11
"
fi
echo "$(basename "$deb"): $(dpkg-deb -f "$deb" Installed-Size) KiB installed; Depends: $depends"
