// SPDX-License-Identifier: Apache-2.0
#pragma once
// What both schedule searches (list scheduling and branch and bound) keep of a partial schedule:
// each stage's next F, I and W micro-batch, the ends of the F's and I's placed, and when the inputs
// of a stage's next ops arrive.

#include <array>
#include <cstddef>
#include <limits>
#include <vector>

#include "synth/list_scheduler.hpp"
#include "synth/stage_costs.hpp"

namespace ppsim {

inline constexpr double kNotYet = std::numeric_limits<double>::infinity();

struct PlacedOps {
  PlacedOps(const SynthShape& shape, const std::vector<SynthStage>& stage_costs)
      : m(shape.m), stages(stage_costs) {
    const std::size_t count = stages.size();
    forward_end.assign(count * static_cast<std::size_t>(m), kNotYet);
    input_end.assign(count * static_cast<std::size_t>(m), kNotYet);
    next.assign(count, {0, 0, 0});
    device_stages.resize(static_cast<std::size_t>(shape.p));
    for (int s = 0; s < static_cast<int>(count); ++s) {
      device_stages[static_cast<std::size_t>(stages[static_cast<std::size_t>(s)].device)].push_back(s);
    }
  }

  std::size_t at(int stage, int mb) const {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(m) + static_cast<std::size_t>(mb);
  }
  // When F(s, k)'s input from stage s-1 arrives (0 on stage 0); kNotYet while its producer is not placed.
  double forward_ready(int s, int k) const {
    return s == 0 ? 0.0 : forward_end[at(s - 1, k)] + stages[static_cast<std::size_t>(s - 1)].to_next;
  }
  // When I(s, k)'s gradient arrives (on the last stage, when its own F has ended).
  double input_ready(int s, int k) const {
    const int last = static_cast<int>(stages.size()) - 1;
    return s == last ? forward_end[at(s, k)]
                     : input_end[at(s + 1, k)] + stages[static_cast<std::size_t>(s + 1)].to_previous;
  }
  // When W(s, k) may run: its I has ended.
  double weight_ready(int s, int k) const { return input_end[at(s, k)]; }

  int m;
  const std::vector<SynthStage>& stages;
  std::vector<double> forward_end;
  std::vector<double> input_end;
  std::vector<std::array<int, 3>> next;  // per stage: the next F, I and W micro-batch
  std::vector<std::vector<int>> device_stages;  // per device, its stages shallow to deep
};

}  // namespace ppsim
