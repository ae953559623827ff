// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the schedule search reads of a cost model, once (SynthStage): per stage its op times, stash sizes and the
// time its messages take to reach the next and the previous stage.

#include <cstdint>
#include <vector>

#include "models/cost_model.hpp"
#include "schedules/action.hpp"

namespace ppsim {

struct SynthStage {
  int device = 0;
  double forward = 0;
  double input = 0;   // I
  double weight = 0;  // W
  std::int64_t activation_bytes = 0;
  std::int64_t weight_bytes = 0;  // what W still needs after I
  // A message's time from this stage's end to its arrival at the next (previous) stage: zero on the
  // same device, else latency + bytes / bandwidth. Links are taken as free of queues: the engine,
  // which queues them, is what judges a schedule.
  double to_next = 0;
  double to_previous = 0;
};

std::vector<SynthStage> stage_costs(const CostModel& costs, const std::vector<int>& stage_device);

// The most activation bytes a device holds while it runs `order`, as the engine counts them: F
// allocates at its start, B frees the stash, I all but the part W needs, W the rest, at their ends.
std::int64_t order_peak_activation(const std::vector<Action>& order, const std::vector<SynthStage>& stages);

}  // namespace ppsim
