// SPDX-License-Identifier: Apache-2.0
#include "models/stage_table_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ppsim {

StageTableCostModel::StageTableCostModel(StageTable table) : table_(std::move(table)) {}

double StageTableCostModel::compute_time(Op op, int s) const {
  switch (op) {
    case Op::kForward:
      return stage(s).forward.value;
    case Op::kBackward:
      return stage(s).backward.value;
    case Op::kBackwardInput:
      return stage(s).backward.value - stage(s).weight.value;
    case Op::kBackwardWeight:
      return stage(s).weight.value;
  }
  return 0;
}

std::int64_t StageTableCostModel::activation_bytes(int s) const { return stage(s).activation_bytes.value; }

std::int64_t StageTableCostModel::weight_stash_bytes(int s) const {
  return std::llround(static_cast<double>(stage(s).activation_bytes.value) * table_.weight_stash_fraction);
}

double StageTableCostModel::weight_stash_fraction() const { return table_.weight_stash_fraction; }

std::int64_t StageTableCostModel::message_bytes(int from_stage, int to_stage) const {
  const auto boundary = static_cast<std::size_t>(std::min(from_stage, to_stage));
  return boundary < table_.boundary_bytes.size() ? table_.boundary_bytes[boundary].value : 0;
}

std::int64_t StageTableCostModel::static_bytes(int device) const {
  const auto d = static_cast<std::size_t>(device);
  return d < table_.static_bytes.size() ? table_.static_bytes[d].value : 0;
}

LinkParams StageTableCostModel::link(int /*src_device*/, int /*dst_device*/) const {
  return LinkParams{table_.latency.value, table_.bandwidth.value};
}

}  // namespace ppsim
