// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the unit parser of times, sizes and rates ("1.5 ms", "80 GiB", "400 Gb/s").
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "models/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto duration = ppsim::parse_duration(text);
  const auto bytes = ppsim::parse_bytes(text);
  const auto rate = ppsim::parse_bandwidth(text);
  // What is accepted is a usable number: never NaN, never negative.
  if (duration.ok && !(duration.value.value >= 0)) std::abort();
  if (bytes.ok && bytes.value.value < 0) std::abort();
  if (rate.ok && !(rate.value.value > 0)) std::abort();
  return 0;
}
