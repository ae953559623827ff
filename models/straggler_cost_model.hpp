// SPDX-License-Identifier: Apache-2.0
#pragma once
// A cost model whose devices compute slower by a factor each (stragglers: a throttled or faulty
// GPU): every op time of a stage on device d, overlapped pairs included, is the base model's times
// factor[d]. Messages, memory and links are the base model's.

#include <memory>
#include <vector>

#include "models/cost_model.hpp"

namespace ppsim {

class StragglerCostModel final : public CostModel {
 public:
  // `base` must outlive this model unless it is handed over in `owned`.
  StragglerCostModel(const CostModel& base, std::vector<int> stage_device, std::vector<double> device_factor,
                     std::unique_ptr<CostModel> owned = nullptr);

  double compute_time(Op op, int stage) const override;
  std::int64_t activation_bytes(int stage) const override { return base_.activation_bytes(stage); }
  std::int64_t weight_stash_bytes(int stage) const override { return base_.weight_stash_bytes(stage); }
  double weight_stash_fraction() const override { return base_.weight_stash_fraction(); }
  std::int64_t message_bytes(int from, int to) const override { return base_.message_bytes(from, to); }
  std::int64_t static_bytes(int device) const override { return base_.static_bytes(device); }
  LinkParams link(int src, int dst) const override { return base_.link(src, dst); }
  ShardingCosts sharding(int stage) const override { return base_.sharding(stage); }
  double overlap_time(int forward_stage, Op backward_op, int backward_stage) const override;

  const CostModel& base() const { return base_; }

 private:
  double factor(int stage) const { return factor_[static_cast<std::size_t>(stage_device_[static_cast<std::size_t>(stage)])]; }

  std::unique_ptr<CostModel> owned_;
  const CostModel& base_;
  std::vector<int> stage_device_;
  std::vector<double> factor_;
};

// The model under any straggler wrappers.
const CostModel& unwrapped(const CostModel& costs);

}  // namespace ppsim
