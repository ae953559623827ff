// SPDX-License-Identifier: Apache-2.0
#include "models/transformer/static_memory.hpp"

#include <algorithm>
#include <cmath>

#include "models/transformer/fully_sharded.hpp"

namespace ppsim {

std::string grad_reduce_dtype(const TrainingLayout& layout) {
  if (!layout.grad_reduce_dtype.empty()) return layout.grad_reduce_dtype;
  // FSDP2's reduce_dtype is fp32 in torchtitan (mixed_precision_reduce, fully_sharded.hpp).
  return layout.precision == "fp16" && !layout.fsdp ? "fp16" : "fp32";
}

double gradient_bytes(const TrainingLayout& layout) {
  // Under FSDP, --grad-reduce-dtype is MixedPrecisionPolicy's reduce_dtype (fully_sharded.hpp).
  return grad_reduce_dtype(layout) == "fp32" ? kGradientBytes : 2;
}

double stage_expert_parameter_count(const Architecture& arch, const StageContents& stage, int expert_shards) {
  // The MTP modules' experts sit on the last stage with the LM head.
  const double mtp = stage.lm_head ? static_cast<double>(mtp_expert_parameter_count(arch)) : 0;
  return (moe_layers_in(arch, stage.first_layer, stage.layers) * static_cast<double>(expert_parameter_count(arch)) +
          mtp) /
         std::max(1, expert_shards);
}

int expert_model_shards(const TrainingLayout& layout) {
  return std::max(1, layout.expert_parallel) * std::max(1, layout.expert_tensor_parallel);
}

int expert_data_parallel(const TrainingLayout& layout) {
  return std::max(1, layout.tensor_parallel * layout.context_parallel * layout.data_parallel /
                         expert_model_shards(layout));
}

double stage_parameter_count(const Architecture& arch, const StageContents& stage, int tensor_parallel,
                             bool single_stage, int expert_shards) {
  const double t = tensor_parallel;
  const double h = static_cast<double>(arch.hidden);
  const double table = static_cast<double>(arch.vocab) * h / t;
  const int experts = moe_layers_in(arch, stage.first_layer, stage.layers);
  // An MoE layer without its routed experts, then this rank's share of them.
  const double moe_layer = static_cast<double>(moe_layer_parameter_count(arch) - expert_parameter_count(arch));
  double count = ((stage.layers - experts) * static_cast<double>(layer_parameter_count(arch)) + experts * moe_layer) / t +
                 stage_expert_parameter_count(arch, stage, expert_shards);
  if (stage.embedding) count += table + static_cast<double>(arch.learned_positions) * h;
  if (stage.lm_head) {
    count += static_cast<double>(mtp_parameter_count(arch) - mtp_expert_parameter_count(arch)) / t;
    count += arch.norm == Architecture::kLayerNorm ? 2 * h : h;
    // A tied head shares the embedding's table only when both live on the same stage.
    if (!arch.tied_embeddings || !single_stage) count += table;
  }
  return count;
}

double fp8_parameter_share(const TrainingLayout& layout, const StaticMemory& device) {
  if (!layout.fp8_param_gather || device.parameter_count <= 0) return 0;
  return device.fp8_weight_count / device.parameter_count;
}

std::vector<StaticMemory> static_memory_per_device(const Architecture& arch, const TrainingLayout& layout,
                                                   const StagePlan& plan, const std::vector<int>& stage_device,
                                                   int devices) {
  std::vector<StaticMemory> memory(static_cast<std::size_t>(devices));
  const bool single_stage = plan.stages.size() == 1;
  for (std::size_t s = 0; s < plan.stages.size(); ++s) {
    StaticMemory& device = memory[static_cast<std::size_t>(stage_device[s])];
    device.parameter_count +=
        stage_parameter_count(arch, plan.stages[s], layout.tensor_parallel, single_stage, expert_model_shards(layout));
    device.expert_parameter_count += stage_expert_parameter_count(arch, plan.stages[s], expert_model_shards(layout));
  }
  if (layout.precision == "fp8") {
    const double dense = layer_linear_weight_count(arch, false, layout.tensor_parallel, layout.expert_parallel);
    const double moe = layer_linear_weight_count(arch, true, layout.tensor_parallel, layout.expert_parallel,
                                                 layout.expert_tensor_parallel);
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
      const StageContents& stage = plan.stages[s];
      const int experts = moe_layers_in(arch, stage.first_layer, stage.layers);
      memory[static_cast<std::size_t>(stage_device[s])].fp8_weight_count +=
          (stage.layers - experts) * dense + experts * moe;
      if (stage.lm_head && arch.mtp_layers > 0) {  // each MTP module's layer and projection
        const double projection = 2.0 * static_cast<double>(arch.hidden) * static_cast<double>(arch.hidden) /
                                  layout.tensor_parallel;
        memory[static_cast<std::size_t>(stage_device[s])].fp8_weight_count +=
            arch.mtp_layers * ((is_moe_layer(arch, arch.layers - 1) ? moe : dense) + projection);
      }
    }
  }
  // The distributed optimizer shards the dense parameters' state over d x c and the experts' over the
  // expert data-parallel group (megatron/core/optimizer: a separate optimizer over the expert
  // parameters' buffers, sharded over the expert data-parallel group).
  const double optimizer_share = layout.distributed_optimizer ? 1.0 / layout.gradient_ranks() : 1.0;
  const double expert_optimizer_share = layout.distributed_optimizer ? 1.0 / expert_data_parallel(layout) : 1.0;
  for (StaticMemory& device : memory) {
    if (layout.fsdp) {  // everything sharded over the d / R shard ranks (fully_sharded.hpp); the unsharded buffers come and go
      const double shard = device.parameter_count / layout.fsdp_shards();
      device.parameters = std::llround(kShardedParameterBytes * shard);
      device.gradients = std::llround(kShardedGradientBytes * shard);
      device.optimizer = std::llround(kShardedOptimizerBytes * shard);
      device.workspace = layout.workspace_bytes;
      continue;
    }
    // FP8 parameters replace the bf16 weight and its cached FP8 copies with the FP8 weight and its
    // transpose; otherwise the bf16 weights keep their FP8 copies beside them.
    const double fp8_bytes =
        layout.fp8_param_gather ? kFp8ParameterWithTransposeBytes - kParameterBytes : kFp8WeightCopyBytes;
    device.parameters = std::llround(kParameterBytes * device.parameter_count + fp8_bytes * device.fp8_weight_count);
    device.gradients = std::llround(gradient_bytes(layout) * device.parameter_count);
    // 1-bit Adam's error feedback (data_parallel.hpp) lives beside the optimizer state.
    const double error_feedback = layout.grad_compression == "1bit"
                                      ? kOneBitErrorBytes * (1 + 1.0 / layout.gradient_ranks()) * device.parameter_count
                                      : 0;
    const double dense = device.parameter_count - device.expert_parameter_count;
    const double state = device.expert_parameter_count > 0
                             ? kOptimizerBytes * (dense * optimizer_share + device.expert_parameter_count * expert_optimizer_share)
                             : kOptimizerBytes * device.parameter_count * optimizer_share;
    device.optimizer = std::llround(state + error_feedback);
    device.workspace = layout.workspace_bytes;
  }
  return memory;
}

}  // namespace ppsim
