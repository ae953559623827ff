// SPDX-License-Identifier: Apache-2.0
#include "synth/stage_costs.hpp"

#include <algorithm>
#include <cmath>

namespace ppsim {
namespace {

double message_time(const CostModel& costs, const std::vector<int>& stage_device, int from, int to) {
  const int src = stage_device[static_cast<std::size_t>(from)];
  const int dst = stage_device[static_cast<std::size_t>(to)];
  if (src == dst) return 0;
  const LinkParams link = costs.link(src, dst);
  const auto bytes = static_cast<double>(costs.message_bytes(from, to));
  const double transfer = bytes == 0 || std::isinf(link.bandwidth) ? 0.0 : bytes / link.bandwidth;
  return link.latency + transfer;
}

}  // namespace

std::vector<SynthStage> stage_costs(const CostModel& costs, const std::vector<int>& stage_device) {
  const int count = static_cast<int>(stage_device.size());
  std::vector<SynthStage> stages(stage_device.size());
  for (int s = 0; s < count; ++s) {
    SynthStage& stage = stages[static_cast<std::size_t>(s)];
    stage.device = stage_device[static_cast<std::size_t>(s)];
    stage.forward = costs.compute_time(Op::kForward, s);
    stage.input = costs.compute_time(Op::kBackwardInput, s);
    stage.weight = costs.compute_time(Op::kBackwardWeight, s);
    stage.activation_bytes = costs.activation_bytes(s);
    stage.weight_bytes = costs.weight_stash_bytes(s);
    if (s + 1 < count) stage.to_next = message_time(costs, stage_device, s, s + 1);
    if (s > 0) stage.to_previous = message_time(costs, stage_device, s, s - 1);
  }
  return stages;
}

std::int64_t order_peak_activation(const std::vector<Action>& order, const std::vector<SynthStage>& stages) {
  std::int64_t held = 0;
  std::int64_t peak = 0;
  for (const Action& action : order) {
    const SynthStage& stage = stages[static_cast<std::size_t>(action.stage)];
    switch (action.op) {
      case Op::kForward:
        held += stage.activation_bytes;
        peak = std::max(peak, held);
        break;
      case Op::kBackward:
        held -= stage.activation_bytes;
        break;
      case Op::kBackwardInput:
        held -= stage.activation_bytes - stage.weight_bytes;
        break;
      case Op::kBackwardWeight:
        held -= stage.weight_bytes;
        break;
    }
  }
  return peak;
}

}  // namespace ppsim
