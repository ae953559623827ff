// SPDX-License-Identifier: Apache-2.0
#include "sim/report/format.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace ppsim {
namespace {

// Removes the zeros (and a bare point) that fixed-point printing leaves after the decimals.
std::string strip_trailing_zeros(std::string text) {
  if (text.find('.') == std::string::npos) return text;
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

std::string format_figure(double value) {
  if (value == 0) return "0";  // also folds -0, which people read as a sign error
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::array<char, 32> buffer{};
  const int length = std::snprintf(buffer.data(), buffer.size(), "%.6g", value);
  std::string text(buffer.data(), static_cast<std::size_t>(std::max(length, 0)));
  // %g drops trailing zeros itself; a value that rounds to zero at 6 digits still reads "0".
  return text == "-0" ? "0" : text;
}

std::string format_exact(double value) {
  std::string text;
  append_exact(text, value);
  return text;
}

void append_exact(std::string& out, double value) {
  if (value == 0) {
    out += '0';
  } else if (std::isnan(value)) {
    out += "nan";
  } else if (std::isinf(value)) {
    out += value > 0 ? "inf" : "-inf";
  } else {
    std::array<char, 64> buffer;
    const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    // An error cannot happen with 64 characters; keep the output parseable all the same.
    out.append(ec == std::errc() ? std::string_view(buffer.data(), end) : std::string_view("nan"));
  }
}

void append_integer(std::string& out, std::int64_t value) {
  std::array<char, 24> buffer;
  const auto end = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value).ptr;
  out.append(buffer.data(), end);
}

std::string format_percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100 * fraction);
  return buffer;
}

std::vector<Align> numbers_after_name(std::size_t columns) {
  std::vector<Align> align(columns, Align::kRight);
  align.front() = Align::kLeft;
  return align;
}

std::string format_bytes(std::int64_t bytes) {
  constexpr std::array<const char*, 7> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  const bool negative = bytes < 0;
  // Work on the magnitude as a double: exact below 2^53 and more than precise enough above.
  double magnitude = std::fabs(static_cast<double>(bytes));
  std::size_t unit = 0;
  while (magnitude >= 1024.0 && unit + 1 < kUnits.size()) {
    magnitude /= 1024.0;
    ++unit;
  }
  std::string number;
  if (unit == 0) {
    number = std::to_string(static_cast<std::int64_t>(magnitude));
  } else {
    std::array<char, 32> buffer{};
    const int length = std::snprintf(buffer.data(), buffer.size(), "%.2f", magnitude);
    number = strip_trailing_zeros(std::string(buffer.data(), static_cast<std::size_t>(std::max(length, 0))));
  }
  return (negative ? "-" : "") + number + " " + kUnits[unit];
}

std::string pad(const std::string& text, std::size_t width, Align align) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return align == Align::kLeft ? text + fill : fill + text;
}

std::string TextTable::render() const {
  std::vector<std::size_t> widths;
  for (const auto& row : rows_) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows_) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      const Align align = c < align_.size() ? align_[c] : Align::kLeft;
      line += pad(row[c], widths[c], align);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

std::vector<std::size_t> listed_devices(std::size_t devices) {
  constexpr std::size_t kMaxListedDevices = 16;
  constexpr std::size_t kShownEnds = 8;
  std::vector<std::size_t> listed;
  if (devices <= kMaxListedDevices) {
    for (std::size_t d = 0; d < devices; ++d) listed.push_back(d);
    return listed;
  }
  for (std::size_t d = 0; d < kShownEnds; ++d) listed.push_back(d);
  listed.push_back(std::string::npos);
  for (std::size_t d = devices - kShownEnds; d < devices; ++d) listed.push_back(d);
  return listed;
}

}  // namespace ppsim
