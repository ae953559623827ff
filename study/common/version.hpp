// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `ppsim --version`, `ppsim-calibrate --version` and ppsim.__version__ say: the release (the
// CMake project's version) and the git revision the binary was built from.

#include <string>
#include <string_view>

namespace ppsim {

// "0.1.0".
const char* version();
// `git describe --always --dirty` of the source tree at build time ("68e20f2c1a3b", with "-dirty"
// when it had uncommitted changes), the packager's -DPPSIM_GIT_REVISION, or "unknown" outside git.
// Generated at build time (cmake/WriteGitRevision.cmake).
const char* git_revision();
// "ppsim 0.1.0 (git 68e20f2c1a3b)".
std::string version_line(std::string_view program);

}  // namespace ppsim
