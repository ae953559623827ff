// SPDX-License-Identifier: Apache-2.0
#pragma once
// Per-stage costs for unbalanced pipelines, e.g. a last stage 1.5x slower because it holds the
// LM head and the loss. Links are uniform.

#include <vector>

#include "models/cost_model.hpp"
#include "models/units.hpp"

namespace ppsim {

struct StageCosts {
  Duration forward{1};
  Duration backward{2};
  Duration weight{1};
  ByteCount activation_bytes{0};
};

struct StageTable {
  std::vector<StageCosts> stages;         // one per stage
  std::vector<ByteCount> boundary_bytes;  // one per boundary s -> s+1 (stages - 1 entries)
  std::vector<ByteCount> static_bytes;    // one per device
  double weight_stash_fraction = 0.5;
  Duration latency{0};
  Bandwidth bandwidth{};
};

class StageTableCostModel final : public CostModel {
 public:
  explicit StageTableCostModel(StageTable table);

  double compute_time(Op op, int stage) const override;
  std::int64_t activation_bytes(int stage) const override;
  std::int64_t weight_stash_bytes(int stage) const override;
  double weight_stash_fraction() const override;
  std::int64_t message_bytes(int from_stage, int to_stage) const override;
  std::int64_t static_bytes(int device) const override;
  LinkParams link(int src_device, int dst_device) const override;

 private:
  const StageCosts& stage(int s) const { return table_.stages[static_cast<std::size_t>(s)]; }
  StageTable table_;
};

}  // namespace ppsim
