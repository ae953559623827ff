// SPDX-License-Identifier: Apache-2.0
#include "models/uniform_cost_model.hpp"

#include <cmath>

namespace ppsim {

UniformCostModel::UniformCostModel(const UniformCosts& costs) : costs_(costs) {}

double UniformCostModel::compute_time(Op op, int /*stage*/) const {
  switch (op) {
    case Op::kForward:
      return costs_.forward.value;
    case Op::kBackward:
      return costs_.backward.value;
    case Op::kBackwardInput:
      return costs_.backward.value - costs_.weight.value;
    case Op::kBackwardWeight:
      return costs_.weight.value;
  }
  return 0;
}

std::int64_t UniformCostModel::activation_bytes(int /*stage*/) const { return costs_.activation_bytes.value; }

std::int64_t UniformCostModel::weight_stash_bytes(int /*stage*/) const {
  return std::llround(static_cast<double>(costs_.activation_bytes.value) * costs_.weight_stash_fraction);
}

double UniformCostModel::weight_stash_fraction() const { return costs_.weight_stash_fraction; }

std::int64_t UniformCostModel::message_bytes(int /*from_stage*/, int /*to_stage*/) const {
  return costs_.message_bytes.value;
}

std::int64_t UniformCostModel::static_bytes(int /*device*/) const { return costs_.static_bytes.value; }

LinkParams UniformCostModel::link(int /*src_device*/, int /*dst_device*/) const {
  return LinkParams{costs_.latency.value, costs_.bandwidth.value};
}

double UniformCostModel::overlap_time(int forward_stage, Op backward_op, int backward_stage) const {
  if (costs_.overlap) return costs_.overlap->value;
  return CostModel::overlap_time(forward_stage, backward_op, backward_stage);
}

}  // namespace ppsim
