// SPDX-License-Identifier: Apache-2.0
#pragma once
// Number and column formatting shared by the reporters, so every output writes figures alike.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ppsim {

// For people: at most 6 significant digits, no trailing zeros ("24", "0.272727", "1.5e-07").
std::string format_figure(double value);

// For machines: the shortest text that reads back to the same double ("24", "0.2727272727272727").
std::string format_exact(double value);
// The same, and a plain integer, appended to `out`: the CSV writer's rows, without a string a field.
void append_exact(std::string& out, double value);
void append_integer(std::string& out, std::int64_t value);

// Binary units for people: "0 B", "512 B", "1.5 KiB", "80 GiB" (at most two decimals).
std::string format_bytes(std::int64_t bytes);

// "42.0%": a fraction as a percentage with one decimal.
std::string format_percent(double fraction);

enum class Align { kLeft, kRight };

// A table's alignment when its first column names the row and the rest are figures.
std::vector<Align> numbers_after_name(std::size_t columns);

// A plain-text table: columns padded to their widest cell, separated by two spaces, trailing
// blanks trimmed so golden outputs do not depend on invisible whitespace.
class TextTable {
 public:
  explicit TextTable(std::vector<Align> align) : align_(std::move(align)) {}

  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string render() const;

 private:
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

// The devices a per-device table lists: all of them up to 16, else the first and last 8 with a gap
// (std::string::npos) between, so tables of hundreds of devices stay readable.
std::vector<std::size_t> listed_devices(std::size_t devices);

// Pads `text` with spaces to `width` characters on the side `align` leaves open.
std::string pad(const std::string& text, std::size_t width, Align align = Align::kLeft);

}  // namespace ppsim
