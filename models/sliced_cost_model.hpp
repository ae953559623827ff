// SPDX-License-Identifier: Apache-2.0
#pragma once
// A cost model whose micro-batches are cut into k sequence slices of equal cost (Seq1F1B, Sun et al.
// NAACL 2025; thunlp/Seq1F1B's `uniform_comp` split solves for the slice lengths that make them so):
// each op, stash and message of a slice is 1/k of the base model's for a whole micro-batch. Static
// memory and links are the base model's.

#include <cmath>
#include <cstdint>
#include <memory>

#include "models/cost_model.hpp"

namespace ppsim {

class SlicedCostModel final : public CostModel {
 public:
  SlicedCostModel(std::unique_ptr<CostModel> base, int slices) : base_(std::move(base)), slices_(slices) {}

  double compute_time(Op op, int stage) const override { return base_->compute_time(op, stage) / slices_; }
  std::int64_t activation_bytes(int stage) const override { return share(base_->activation_bytes(stage)); }
  std::int64_t weight_stash_bytes(int stage) const override { return share(base_->weight_stash_bytes(stage)); }
  double weight_stash_fraction() const override { return base_->weight_stash_fraction(); }
  std::int64_t message_bytes(int from, int to) const override { return share(base_->message_bytes(from, to)); }
  std::int64_t static_bytes(int device) const override { return base_->static_bytes(device); }
  LinkParams link(int src, int dst) const override { return base_->link(src, dst); }
  double overlap_time(int forward_stage, Op backward_op, int backward_stage) const override {
    return base_->overlap_time(forward_stage, backward_op, backward_stage) / slices_;
  }

 private:
  std::int64_t share(std::int64_t bytes) const {
    return static_cast<std::int64_t>(std::llround(static_cast<double>(bytes) / slices_));
  }

  std::unique_ptr<CostModel> base_;
  int slices_;
};

}  // namespace ppsim
