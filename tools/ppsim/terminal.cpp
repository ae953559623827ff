// SPDX-License-Identifier: Apache-2.0
#include "tools/ppsim/terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <string_view>

namespace ppsim {

std::size_t timeline_width_for(const std::ostream& out) {
  if (&out != &std::cout || isatty(STDOUT_FILENO) == 0) return kDefaultTimelineWidth;
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr) {
    const std::string_view text(columns);
    std::size_t width = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), width);
    if (error == std::errc() && end == text.data() + text.size() && width > 0) return width;
  }
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return kDefaultTimelineWidth;
}

}  // namespace ppsim
