#include "schedules/excerpt.hpp"

namespace ppsim {

std::string excerpt(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (shown >= kMaxEchoedChars) {
      out += "...";
      break;
    }
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += static_cast<char>(byte);
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
    ++shown;
  }
  return out;
}

std::string quoted_excerpt(std::string_view text) { return "'" + excerpt(text) + "'"; }

}  // namespace ppsim
