// SPDX-License-Identifier: Apache-2.0
// MemoryTracker computes its peak stash count, a double, only when whole stashes plus weight parts
// pass the last peak (sim/memory_tracker.hpp). These tests hold it to the plain running maximum.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/memory_tracker.hpp"

namespace {

// A device's ops in a valid order: F before the B or I of its micro-batch, I before its W, drawn
// with a seed so that stashes rise and fall in irregular waves.
std::vector<ppsim::Op> random_order(std::uint32_t seed, int microbatches) {
  std::mt19937 random(seed);
  std::vector<ppsim::Op> order;
  int forwards = 0, full = 0, parts = 0;
  while (forwards < microbatches || full > 0 || parts > 0) {
    std::vector<ppsim::Op> choices;
    if (forwards < microbatches) choices.push_back(ppsim::Op::kForward);
    if (full > 0) choices.insert(choices.end(), {ppsim::Op::kBackward, ppsim::Op::kBackwardInput});
    if (parts > 0) choices.push_back(ppsim::Op::kBackwardWeight);
    const ppsim::Op op = choices[std::uniform_int_distribution<std::size_t>(0, choices.size() - 1)(random)];
    order.push_back(op);
    if (op == ppsim::Op::kForward) ++forwards, ++full;
    if (op == ppsim::Op::kBackward) --full;
    if (op == ppsim::Op::kBackwardInput) --full, ++parts;
    if (op == ppsim::Op::kBackwardWeight) --parts;
  }
  return order;
}

}  // namespace

TEST_CASE("A tracker's peak stash count is the maximum at its allocations of stashes plus weight parts, for any weight fraction") {
  const double fraction = GENERATE(0.0, 0.3, 0.5, 1.0, 1.0 / 3, 1.5, -0.25, std::numeric_limits<double>::quiet_NaN());
  const std::uint32_t seed = GENERATE(1u, 2u, 3u, 4u, 5u);
  INFO("weight fraction " << fraction << ", seed " << seed);
  ppsim::MemoryTracker tracker;
  tracker.reset(0, fraction);
  double expected_peak = 0;
  std::int64_t expected_bytes_peak = 0, bytes = 0, full = 0, parts = 0;
  for (const ppsim::Op op : random_order(seed, 200)) {
    switch (op) {
      case ppsim::Op::kForward:
        tracker.on_forward(10);
        bytes += 10, ++full;
        break;
      case ppsim::Op::kBackward:
        tracker.on_backward(10);
        bytes -= 10, --full;
        break;
      case ppsim::Op::kBackwardInput:
        tracker.on_input_grad(10, 3);
        bytes -= 7, --full, ++parts;
        break;
      case ppsim::Op::kBackwardWeight:
        tracker.on_weight_grad(3);
        bytes -= 3, --parts;
        break;
    }
    // Noted at every allocation (F), computed as stashed() computes it. With a fraction in [0, 1]
    // that is the maximum over every op too: B, I and W never add to the count.
    const double stashed = static_cast<double>(full) + fraction * static_cast<double>(parts);
    if (op == ppsim::Op::kForward) expected_peak = std::max(expected_peak, stashed);
    if (fraction >= 0 && fraction <= 1) REQUIRE(stashed <= expected_peak);
    expected_bytes_peak = std::max(expected_bytes_peak, bytes);
    REQUIRE(tracker.activation_bytes() == bytes);
  }
  CHECK(tracker.peak_activation_bytes() == expected_bytes_peak);
  if (std::isnan(fraction)) {
    CHECK(std::isnan(tracker.peak_stashed()) == std::isnan(expected_peak));
  } else {
    CHECK(tracker.peak_stashed() == expected_peak);  // exactly: the same operations on the same operands
  }
}
