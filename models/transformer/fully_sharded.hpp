// SPDX-License-Identifier: Apache-2.0
#pragma once
// torch's FSDP2 (`fully_shard`) on the stages of a pipeline, over the d data-parallel ranks, as
// torch.distributed.pipelining runs it with a lowered schedule's UNSHARD, RESHARD and REDUCE_GRAD
// (schedules/comm_action.hpp; the engine places them, sim/engine.hpp run_sharding_action). The
// mixed-precision policy is the usual one (torchtitan's defaults: param_dtype bf16, reduce_dtype
// fp32; torch/distributed/fsdp/_fully_shard/_fsdp_api.py MixedPrecisionPolicy):
// - resident (sharded over d): fp32 parameters, fp32 gradients and Adam's two fp32 moments, 16 bytes
//   per parameter / d (FSDP's sharded parameters are the optimizer's own, so no separate master copy);
// - UNSHARD all-gathers the stage's parameters in bf16 (2 bytes each, held until RESHARD);
// - the backward's unsharded gradients, accumulated over the micro-batches with gradient sync off
//   (stage.py, backward_maybe_with_nosync) in the reduce dtype, fp32 (_fsdp_param.py,
//   FSDPParam.to_accumulated_grad_if_needed), 4 bytes each, held until REDUCE_GRAD;
// - REDUCE_GRAD reduce-scatters those fp32 gradients over d.

#include "models/cost_model.hpp"
#include "models/transformer/transformer_cost_model.hpp"

namespace ppsim {

inline constexpr double kShardedParameterBytes = 4;  // fp32 sharded parameters
inline constexpr double kShardedGradientBytes = 4;   // fp32 sharded gradients
inline constexpr double kShardedOptimizerBytes = 8;  // Adam's exp_avg and exp_avg_sq, fp32
inline constexpr double kUnshardedParameterBytes = 2;  // bf16 (param_dtype)
inline constexpr double kUnshardedGradientBytes = 4;   // fp32 (reduce_dtype) while accumulating

// The FSDP costs of a stage of `parameters` on one tensor-parallel rank.
ShardingCosts fully_sharded_stage(const TransformerSetup& setup, double parameters);

}  // namespace ppsim
