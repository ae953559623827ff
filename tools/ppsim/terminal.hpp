// SPDX-License-Identifier: Apache-2.0
#pragma once
// The width the ASCII timeline may use.

#include <cstddef>
#include <ostream>

#include "study/api.hpp"  // kDefaultTimelineWidth: rows stay within it unless the output is a terminal

namespace ppsim {

// The terminal's width when `out` is the process's stdout and that is a terminal: $COLUMNS when it
// holds a positive number, else the window size (TIOCGWINSZ). Otherwise kDefaultTimelineWidth, so
// files, pipes and the tests' in-process runs never depend on the terminal.
std::size_t timeline_width_for(const std::ostream& out);

}  // namespace ppsim
