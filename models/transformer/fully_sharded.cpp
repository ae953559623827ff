// SPDX-License-Identifier: Apache-2.0
#include "models/transformer/fully_sharded.hpp"

#include <algorithm>
#include <cmath>

#include "models/transformer/pass_costs.hpp"
#include "models/transformer/static_memory.hpp"

namespace ppsim {

ShardingCosts fully_sharded_stage(const TransformerSetup& setup, double parameters) {
  const TrainingLayout& layout = setup.layout;
  const int shards = layout.fsdp_shards();
  const int replicas = std::max(1, layout.data_parallel_replicate);
  const std::int64_t node = setup.hardware.devices_per_node;
  const std::int64_t t = std::max(1, layout.tensor_parallel);
  // The shard ranks are t apart (without HSDP, all d data-parallel ranks): their ring leaves the
  // node once t * shards GPUs exceed it.
  const bool inter_node = t * shards > node;
  const int per_node = static_cast<int>(std::clamp<std::int64_t>(node / t, 1, shards));
  ShardingCosts costs;
  // FSDP2's foreach_all_gather: each rank contributes its bf16 shard, every rank ends with the whole.
  costs.gather_time = collective_time(setup.hardware, Collective::kAllGather, kUnshardedParameterBytes * parameters,
                                      shards, inter_node, per_node);
  // foreach_reduce: the fp32 unsharded gradients reduce-scattered into each rank's shard; under HSDP
  // the replicas then all-reduce that shard (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py,
  // foreach_reduce: the all-reduce over the replicate group after the reduce-scatter), its ranks t *
  // shards apart.
  costs.reduce_time = collective_time(setup.hardware, Collective::kReduceScatter, kUnshardedGradientBytes * parameters,
                                      shards, inter_node, per_node);
  if (replicas > 1) {
    const bool across = t * shards * replicas > node;
    const int replicas_per_node = static_cast<int>(std::clamp<std::int64_t>(node / (t * shards), 1, replicas));
    costs.reduce_time += collective_time(setup.hardware, Collective::kAllReduce,
                                         kUnshardedGradientBytes * parameters / shards, replicas, across,
                                         replicas_per_node);
  }
  costs.parameter_bytes = std::llround(kUnshardedParameterBytes * parameters);
  costs.gradient_bytes = std::llround(kUnshardedGradientBytes * parameters);
  return costs;
}

}  // namespace ppsim
