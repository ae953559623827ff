// SPDX-License-Identifier: Apache-2.0
#include "models/straggler_cost_model.hpp"

#include <utility>

namespace ppsim {

StragglerCostModel::StragglerCostModel(const CostModel& base, std::vector<int> stage_device,
                                       std::vector<double> device_factor, std::unique_ptr<CostModel> owned)
    : owned_(std::move(owned)), base_(base), stage_device_(std::move(stage_device)), factor_(std::move(device_factor)) {}

double StragglerCostModel::compute_time(Op op, int stage) const { return base_.compute_time(op, stage) * factor(stage); }

double StragglerCostModel::overlap_time(int forward_stage, Op backward_op, int backward_stage) const {
  // A pair runs on one device: both halves slow down alike.
  return base_.overlap_time(forward_stage, backward_op, backward_stage) * factor(forward_stage);
}

const CostModel& unwrapped(const CostModel& costs) {
  const CostModel* model = &costs;
  while (const auto* straggler = dynamic_cast<const StragglerCostModel*>(model)) model = &straggler->base();
  return *model;
}

}  // namespace ppsim
