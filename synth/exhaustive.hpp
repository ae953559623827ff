// SPDX-License-Identifier: Apache-2.0
#pragma once
// The best order by exhaustive search, for small sizes: what the tests hold `synth` to. It explores
// every schedule in which each stage runs its micro-batches' F's, I's and W's each in micro-batch
// order (as every published schedule does), keeping each device under the memory limit, by branch
// and bound: ops are placed in order of their start times (ties by device), so each order is met
// once, and a branch ends when even running every device's remaining work back to back cannot beat
// the best found. Links are taken as latency only (no queues), which is exact when messages take no
// transfer time.

#include <cstdint>
#include <optional>
#include <vector>

#include "schedules/program.hpp"
#include "synth/list_scheduler.hpp"
#include "synth/stage_costs.hpp"

namespace ppsim {

struct ExhaustiveResult {
  std::optional<Program> best;  // nothing when no order fits the limit
  double makespan = 0;
  bool proved = false;  // the whole tree was searched within the node budget
  std::int64_t nodes = 0;
};

// `upper_bound`: a makespan already reached (the search looks only for better); `node_budget`:
// nodes to visit at most.
ExhaustiveResult exhaustive_schedule(const SynthShape& shape, const std::vector<SynthStage>& stages,
                                     std::int64_t memory_limit, double upper_bound, std::int64_t node_budget);

}  // namespace ppsim
