// SPDX-License-Identifier: Apache-2.0
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

std::string printable_within(std::string_view text, std::size_t max_out, bool keep_non_ascii) {
  std::string out = printable(text, max_out, keep_non_ascii);
  if (out.size() <= max_out) return out;
  // Cut whole characters only: an escape is 4 characters, so back up to where one started.
  std::size_t keep = max_out > 3 ? max_out - 3 : 0;
  if (keep >= 3 && out.compare(keep - 3, 2, "\\x") == 0) keep -= 3;
  else if (keep >= 2 && out.compare(keep - 2, 2, "\\x") == 0) keep -= 2;
  else if (keep >= 1 && out[keep - 1] == '\\') keep -= 1;
  // Nor inside a multi-byte UTF-8 character (kept when keep_non_ascii).
  while (keep > 0 && (static_cast<unsigned char>(out[keep]) & 0xc0) == 0x80) --keep;
  out.resize(keep);
  return out + "...";
}

std::string excerpt(std::string_view text) { return printable(text, kMaxEchoedChars, false); }

std::string quoted_excerpt(std::string_view text) { return "'" + excerpt(text) + "'"; }

}  // namespace ppsim
