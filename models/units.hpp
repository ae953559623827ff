// SPDX-License-Identifier: Apache-2.0
#pragma once
// Strong types for the three quantities a cost model is made of, and their text forms
// ("1.5 ms", "80 GiB", "400 Gb/s"). Plain numbers are base units: seconds (or the caller's
// abstract time unit), bytes, bytes per time unit.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace ppsim {

struct Duration {
  double value = 0;  // seconds, or abstract time units when costs are plain numbers
  // Whether it was written with a unit ("1ms"): times with and without units do not mix (a plain
  // number is a time unit of the user's, not a second).
  bool with_unit = false;
};

struct ByteCount {
  std::int64_t value = 0;
};

struct Bandwidth {
  double value = std::numeric_limits<double>::infinity();  // bytes per time unit; inf = free links
};

// Sizes above this are refused as absurd: 2^60 bytes (one exbibyte) is far beyond any device.
inline constexpr std::int64_t kMaxBytes = std::int64_t{1} << 60;
// Times above this (seconds, or time units) are refused: 50 M ops of 1e15 each still sum to a finite
// clock, where 1e308 overflowed it to infinity and looked like a deadlock.
inline constexpr double kMaxDuration = 1e15;
// Bandwidths below this (bytes per second or per time unit) are refused, so that 2^60 bytes over a
// link still take a finite time.
inline constexpr double kMinBandwidth = 1e-3;

template <typename T>
struct Parsed {
  bool ok = false;
  T value{};
  std::string error;  // what is wrong, without naming the source (the caller adds the flag or path)
};

// "1.5 ms", "250us", "2 s", "3e-3", "1" (plain = base unit). Must be finite and >= 0.
Parsed<Duration> parse_duration(std::string_view text);
// "80 GiB", "1.5 GB", "512 KiB", "4096" (plain = bytes). Must be finite, >= 0, <= kMaxBytes.
Parsed<ByteCount> parse_bytes(std::string_view text);
// "400 Gb/s" (bits), "50 GB/s", "100 MiB/s", "unlimited" or "inf". Must be > 0.
Parsed<Bandwidth> parse_bandwidth(std::string_view text);

// The same checks for values that arrive as plain numbers (JSON numbers).
Parsed<Duration> duration_from_number(double value);
Parsed<ByteCount> bytes_from_number(double value);
Parsed<Bandwidth> bandwidth_from_number(double value);

}  // namespace ppsim
