// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a set of Monte-Carlo steps (--samples) reports for one schedule.

#include <cstdint>
#include <string>
#include <vector>

#include "models/statistics.hpp"

namespace ppsim {

// What --samples reports for one schedule.
struct SampleFigures {
  std::int64_t n = 0;
  std::uint64_t seed = 0;
  Distribution makespan;
  Distribution bubble_ratio;
  bool has_training = false;  // a transformer study: step time and throughput too
  Distribution step_time;
  Distribution tokens_per_second;
  // Per device, the share of the samples' critical paths spent in that device's ops (summed over
  // the samples, over the sum of their makespans); the rest is messages and collectives.
  std::vector<double> critical_share;
  Histogram histogram;         // of step_time with a model, of makespan otherwise
  std::string histogram_of;    // "step_time" or "makespan"
};

}  // namespace ppsim
