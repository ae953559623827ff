// SPDX-License-Identifier: Apache-2.0
#include "tools/calibrate/host_checksum.hpp"

#include <zlib.h>

#include <chrono>
#include <random>
#include <vector>

#include "tools/calibrate/measure.hpp"

namespace ppsim::calibrate {

Spread host_crc32_seconds(std::int64_t bytes) {
  std::vector<unsigned char> buffer(static_cast<std::size_t>(bytes));
  std::mt19937_64 random(42);
  for (std::size_t i = 0; i + 8 <= buffer.size(); i += 8) {
    const std::uint64_t word = random();
    for (std::size_t b = 0; b < 8; ++b) buffer[i + b] = static_cast<unsigned char>(word >> (8 * b));
  }
  volatile uLong sink = 0;  // keeps the checksum from being optimised away
  MeasureOptions options;
  options.warmup = 1;
  options.min_runs = 5;
  options.max_runs = 20;
  options.budget_seconds = 0.2;
  return measure(options, [&] {
    const auto start = std::chrono::steady_clock::now();
    sink = crc32(0L, buffer.data(), static_cast<uInt>(buffer.size()));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
}

}  // namespace ppsim::calibrate
