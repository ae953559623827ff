// SPDX-License-Identifier: Apache-2.0
#include "models/transformer/fully_sharded.hpp"

#include <cmath>

#include "models/transformer/data_parallel.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/static_memory.hpp"

namespace ppsim {

ShardingCosts fully_sharded_stage(const TransformerSetup& setup, double parameters) {
  const int d = setup.layout.data_parallel;
  const bool inter_node = data_parallel_crosses_nodes(setup);
  const int per_node = data_parallel_ranks_per_node(setup);
  ShardingCosts costs;
  // FSDP2's foreach_all_gather: each rank contributes its bf16 shard, every rank ends with the whole.
  costs.gather_time =
      collective_time(setup.hardware, Collective::kAllGather, kUnshardedParameterBytes * parameters, d, inter_node, per_node);
  // foreach_reduce: the fp32 unsharded gradients reduce-scattered into each rank's shard.
  costs.reduce_time =
      collective_time(setup.hardware, Collective::kReduceScatter, kUnshardedGradientBytes * parameters, d, inter_node,
                      per_node);
  costs.parameter_bytes = std::llround(kUnshardedParameterBytes * parameters);
  costs.gradient_bytes = std::llround(kUnshardedGradientBytes * parameters);
  return costs;
}

}  // namespace ppsim
