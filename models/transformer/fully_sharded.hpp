// SPDX-License-Identifier: Apache-2.0
#pragma once
// torch's FSDP2 (`fully_shard`) on the stages of a pipeline, over the d x c data- and
// context-parallel ranks (torchtitan's dp_shard_cp mesh), as torch.distributed.pipelining runs it
// with a lowered schedule's UNSHARD, RESHARD and REDUCE_GRAD (schedules/comm_action.hpp; the engine
// places them, sim/engine.hpp run_sharding_action). The mixed-precision policy is torchtitan's
// (torch/distributed/fsdp/_fully_shard/_fsdp_api.py MixedPrecisionPolicy; torchtitan's
// training.mixed_precision_param bf16 and mixed_precision_reduce fp32):
// - resident (sharded): fp32 parameters, fp32 gradients and Adam's two fp32 moments, 16 bytes per
//   parameter / shards (FSDP's sharded parameters are the optimizer's own, no separate master copy);
// - an all-gather brings the parameters in the compute dtype, --precision's (param_dtype; 2 bytes),
//   or, under --precision fp8 with --fsdp-float8-all-gather, the linear weights in FP8 (1 byte:
//   torchao's Float8Linear weights, fsdp_pre_all_gather; torchtitan converts every linear but the
//   output head);
// - gradients are reduce-scattered in --grad-reduce-dtype (reduce_dtype; fp32 by default), and
//   inside a pipeline they accumulate unsharded in it over the micro-batches, gradient sync off
//   (stage.py, backward_maybe_with_nosync; _fsdp_param.py, to_accumulated_grad_if_needed) until
//   REDUCE_GRAD (perform_reduce_grad).
//
// The unit (--fsdp-unit). "stage": the stage is one fully_shard module, gathered whole by UNSHARD.
// "block" (torchtitan's apply_fsdp): the embedding, each transformer block, and the final norm
// with the output head are units of their own. Each unit's all-gather runs on FSDP's all-gather
// stream while the previous unit computes, at most one unit ahead (two all-gather outputs alive,
// _fsdp_param_group.py), so a gather shorter than the previous unit's compute costs nothing.
// UNSHARD gathers the first unit before the op; the op gathers the rest. The backward walks the
// units in reverse, its first unit the forward's last, which FSDP keeps gathered. Stage alone
// (torchtitan without pipeline parallelism): each unit's gradients are reduce-scattered as its
// backward ends (post-backward hook), on the same links as the gathers, and the step waits for the
// last; inside a pipeline they wait for REDUCE_GRAD, unit after unit.

#include <vector>

#include "models/cost_model.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/transformer_cost_model.hpp"

namespace ppsim {

inline constexpr double kShardedParameterBytes = 4;  // fp32 sharded parameters
inline constexpr double kShardedGradientBytes = 4;   // fp32 sharded gradients
inline constexpr double kShardedOptimizerBytes = 8;  // Adam's exp_avg and exp_avg_sq, fp32

// One fully_shard unit of a stage on one tensor-parallel rank.
struct ShardUnit {
  double parameters = 0;
  double fp8_weights = 0;  // of them, linear weights an FP8 all-gather moves in 1 byte
  PassTimes times;         // its compute per micro-batch
  bool block = false;      // a transformer block (not the embedding or the head)
};

// One unit as an op meets it: its all-gather, its compute, its reduce-scatter (0: none).
struct UnitStep {
  double gather = 0;
  double compute = 0;
  double reduce = 0;
};
struct UnitSpan {
  double extra = 0;        // the op's time beyond the sum of its units' compute
  double reduce_tail = 0;  // after the last unit's compute, until its last reduce-scatter ends
};
// The op's units in order on one compute stream and one link: unit u's all-gather starts once the
// previous all-gather has ended and unit u - 1 has started computing (one unit ahead), the first
// one at the op's start unless `first_ready`; each reduce-scatter follows its unit's compute.
UnitSpan unit_by_unit(const std::vector<UnitStep>& units, bool first_ready);

// The FSDP costs of a stage of `parameters` on one tensor-parallel rank, sharded as one unit.
ShardingCosts fully_sharded_stage(const TransformerSetup& setup, double parameters, double fp8_weights = 0);
// The same stage sharded unit by unit; `alone`: the model is one stage (no pipelining runtime).
ShardingCosts fully_sharded_units(const TransformerSetup& setup, const std::vector<ShardUnit>& units, bool alone);

// Bytes per parameter of FSDP's all-gathers and of its unsharded gradients.
double fsdp_gather_bytes(const TrainingLayout& layout, double parameters, double fp8_weights);
double fsdp_reduce_dtype_bytes(const TrainingLayout& layout);

}  // namespace ppsim
