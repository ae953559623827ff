#include "schedules/excerpt.hpp"

namespace ppsim {

std::string printable(std::string_view text, std::size_t max_chars, bool keep_non_ascii) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : text.substr(0, max_chars)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f && (keep_non_ascii || byte < 0x80)) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  if (text.size() > max_chars) out += "...";
  return out;
}

std::string excerpt(std::string_view text) { return printable(text, kMaxEchoedChars, false); }

std::string quoted_excerpt(std::string_view text) { return "'" + excerpt(text) + "'"; }

}  // namespace ppsim
