// SPDX-License-Identifier: Apache-2.0
#include "models/units.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "schedules/excerpt.hpp"

namespace ppsim {
namespace {

struct Unit {
  std::string_view suffix;
  double scale;
};

// Decimal prefixes are powers of 1000, binary ones powers of 1024 (IEC); "b" is bits.
// Hours and days, for failure and training times ("50680 h", "54 d").
constexpr std::array<Unit, 8> kTimeUnits = {{{"ns", 1e-9},
                                            {"us", 1e-6},
                                            {"µs", 1e-6},
                                            {"ms", 1e-3},
                                            {"s", 1.0},
                                            {"min", 60.0},
                                            {"h", 3600.0},
                                            {"d", 86400.0}}};
constexpr std::array<Unit, 9> kByteUnits = {{{"B", 1.0},
                                             {"KB", 1e3},
                                             {"MB", 1e6},
                                             {"GB", 1e9},
                                             {"TB", 1e12},
                                             {"KiB", 1024.0},
                                             {"MiB", 1048576.0},
                                             {"GiB", 1073741824.0},
                                             {"TiB", 1099511627776.0}}};
constexpr std::array<Unit, 13> kRateUnits = {{{"B/s", 1.0},
                                              {"KB/s", 1e3},
                                              {"MB/s", 1e6},
                                              {"GB/s", 1e9},
                                              {"TB/s", 1e12},
                                              {"KiB/s", 1024.0},
                                              {"MiB/s", 1048576.0},
                                              {"GiB/s", 1073741824.0},
                                              {"b/s", 0.125},
                                              {"Kb/s", 125.0},
                                              {"Mb/s", 125e3},
                                              {"Gb/s", 125e6},
                                              {"Tb/s", 125e9}}};

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

template <std::size_t N>
std::string unit_list(const std::array<Unit, N>& units) {
  std::string list;
  for (const auto& unit : units) {
    if (!list.empty()) list += ", ";
    list += unit.suffix;
  }
  return list;
}

// The canonical suffix of a spelling people also type, where it is unambiguous: "sec" for "s"
// ("usec", "msec"), "ps" for "/s" after a bit or byte ("Gbps", "GBps"), SI's lowercase k ("kB",
// "kb/s"), and IEC binary prefixes in any case ("gib", "MIB/s": the "i" says binary, and no size
// or rate has another unit with it). Other case changes are not guessed: "mb" could be megabits.
std::string canonical_unit(std::string_view unit) {
  std::string text(unit);
  if (text.ends_with("sec")) text.replace(text.size() - 3, 3, "s");
  if (text.size() > 2 && text.ends_with("ps") && (text[text.size() - 3] == 'b' || text[text.size() - 3] == 'B')) {
    text.replace(text.size() - 2, 2, "/s");
  }
  if (text.starts_with('k')) text[0] = 'K';
  const auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  if (text.size() >= 3 && std::string_view("kmgt").find(lower(text[0])) != std::string_view::npos &&
      lower(text[1]) == 'i' && lower(text[2]) == 'b') {
    text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
    text[1] = 'i';
    text[2] = 'B';
  }
  return text;
}

// Splits "1.5 ms" into a number and a known unit's scale (1 when there is no unit).
template <std::size_t N>
bool split_quantity(std::string_view text, const std::array<Unit, N>& units, double& number, std::string& error,
                    bool* with_unit = nullptr) {
  text = trim(text);
  if (text.empty()) {
    error = "is empty";
    return false;
  }
  std::string copy(text);
  char* end = nullptr;
  number = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str()) {
    error = quoted_excerpt(copy) + " does not start with a number";
    return false;
  }
  std::string_view unit = trim(std::string_view(copy).substr(static_cast<std::size_t>(end - copy.c_str())));
  if (unit.empty()) return true;
  if (with_unit != nullptr) *with_unit = true;
  const std::string canonical = canonical_unit(unit);
  for (const auto& candidate : units) {
    if (candidate.suffix == unit || candidate.suffix == canonical) {
      number *= candidate.scale;
      return true;
    }
  }
  error = quoted_excerpt(copy) + " has unknown unit " + quoted_excerpt(unit) + " (known: " + unit_list(units) + ")";
  return false;
}

template <typename T>
Parsed<T> failure(std::string error) {
  Parsed<T> result;
  result.error = std::move(error);
  return result;
}

std::string show(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "infinity" : "-infinity";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

}  // namespace

Parsed<Duration> duration_from_number(double value) {
  if (!std::isfinite(value)) return failure<Duration>("must be a finite time, got " + show(value));
  if (value < 0) return failure<Duration>("must not be negative, got " + show(value));
  if (value > kMaxDuration) {
    return failure<Duration>("is absurdly large (" + show(value) + "; the limit is " + show(kMaxDuration) + ")");
  }
  return {true, Duration{value}, {}};
}

Parsed<ByteCount> bytes_from_number(double value) {
  if (!std::isfinite(value)) return failure<ByteCount>("must be a finite size, got " + show(value));
  if (value < 0) return failure<ByteCount>("must not be negative, got " + show(value));
  if (value > static_cast<double>(kMaxBytes)) {
    return failure<ByteCount>("is absurdly large (" + show(value) + " bytes; the limit is 2^60)");
  }
  return {true, ByteCount{std::llround(value)}, {}};
}

Parsed<Bandwidth> bandwidth_from_number(double value) {
  if (std::isnan(value)) return failure<Bandwidth>("must be a number, got NaN");
  if (value <= 0) return failure<Bandwidth>("must be positive, got " + show(value));
  if (value < kMinBandwidth) {
    return failure<Bandwidth>("is absurdly small (" + show(value) + "; the limit is " + show(kMinBandwidth) + ")");
  }
  return {true, Bandwidth{value}, {}};
}

Parsed<Duration> parse_duration(std::string_view text) {
  double number = 0;
  std::string error;
  bool with_unit = false;
  if (!split_quantity(text, kTimeUnits, number, error, &with_unit)) return failure<Duration>(error);
  Parsed<Duration> parsed = duration_from_number(number);
  parsed.value.with_unit = with_unit;
  return parsed;
}

Parsed<ByteCount> parse_bytes(std::string_view text) {
  double number = 0;
  std::string error;
  if (!split_quantity(text, kByteUnits, number, error)) return failure<ByteCount>(error);
  return bytes_from_number(number);
}

Parsed<Bandwidth> parse_bandwidth(std::string_view text) {
  std::string_view trimmed = trim(text);
  if (trimmed == "unlimited" || trimmed == "inf") return {true, Bandwidth{}, {}};
  double number = 0;
  std::string error;
  if (!split_quantity(text, kRateUnits, number, error)) return failure<Bandwidth>(error);
  return bandwidth_from_number(number);
}

}  // namespace ppsim
