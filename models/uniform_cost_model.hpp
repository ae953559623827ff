// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every stage costs the same and every link is alike: the model of the textbook bubble formulas.

#include <optional>

#include "models/cost_model.hpp"
#include "models/units.hpp"

namespace ppsim {

struct UniformCosts {
  Duration forward{1};
  Duration backward{2};  // full backward B = I + W
  Duration weight{1};    // W, used only by schedules that split B
  ByteCount activation_bytes{0};
  double weight_stash_fraction = 0.5;  // share of a stash W keeps after I (zero-bubble paper: about half)
  ByteCount message_bytes{0};
  ByteCount static_bytes{0};
  Duration latency{0};
  Bandwidth bandwidth{};
  std::optional<Duration> overlap;  // time of one overlapped F&B op; unset: F + B (no gain)
};

class UniformCostModel final : public CostModel {
 public:
  explicit UniformCostModel(const UniformCosts& costs);

  double compute_time(Op op, int stage) const override;
  std::int64_t activation_bytes(int stage) const override;
  std::int64_t weight_stash_bytes(int stage) const override;
  double weight_stash_fraction() const override;
  std::int64_t message_bytes(int from_stage, int to_stage) const override;
  std::int64_t static_bytes(int device) const override;
  LinkParams link(int src_device, int dst_device) const override;
  double overlap_time(int forward_stage, Op backward_op, int backward_stage) const override;

 private:
  UniformCosts costs_;
};

}  // namespace ppsim
