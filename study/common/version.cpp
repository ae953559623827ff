// SPDX-License-Identifier: Apache-2.0
#include "study/common/version.hpp"

namespace ppsim {

// PPSIM_VERSION is the CMake project's version (study/CMakeLists.txt), so it has one home.
const char* version() { return PPSIM_VERSION; }

std::string version_line(std::string_view program) {
  return std::string(program) + " " + version() + " (git " + git_revision() + ")";
}

}  // namespace ppsim
