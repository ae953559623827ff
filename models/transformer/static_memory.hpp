// SPDX-License-Identifier: Apache-2.0
#pragma once
// Bytes a device holds for the whole step, whatever the schedule: its share of the parameters,
// their gradients and the optimizer state, plus the workspace allowance.
//
// Mixed-precision Adam as Megatron-LM runs it (docs, "Distributed Optimizer": 18 bytes per parameter,
// 6 + 12/d with the distributed optimizer): bf16 parameters (2 bytes), fp32 gradient accumulation
// buffers (4), fp32 master weights and Adam's two moments (4 + 4 + 4). The distributed optimizer
// (ZeRO stage 1, Rajbhandari et al. 2020) shards the last 12 bytes over the d data-parallel ranks.

#include <cstdint>
#include <string>
#include <vector>

#include "models/transformer/architecture.hpp"
#include "models/transformer/stage_plan.hpp"
#include "models/transformer/training_layout.hpp"

namespace ppsim {

inline constexpr double kParameterBytes = 2;   // bf16 weights
inline constexpr double kGradientBytes = 4;    // fp32 main gradients (the default under bf16 and fp8)
inline constexpr double kOptimizerBytes = 12;  // fp32 master weights, Adam m and v

// Under FP8, Transformer Engine also keeps each linear weight in FP8 and, for the transposed GEMMs
// of the backward on Hopper, its FP8 transpose (transformer_engine/pytorch/module/base.py, the
// cached weight workspaces): 2 more bytes per linear weight, counted with the parameters.
inline constexpr double kFp8WeightCopyBytes = 2;
// With --fp8-param-gather the linear weights are FP8 parameters themselves (Megatron's fp8_param,
// Transformer Engine's Float8Tensor): no bf16 copy, 1 byte each, in a uint8 buffer
// (megatron/core/distributed/param_and_grad_buffer.py, _ParamAndGradBuffer: param_dtype uint8 for
// quantized storage), plus the FP8 transpose Hopper's backward GEMMs need, kept once made
// (transformer_engine/pytorch/tensor/float8_tensor.py): 2 bytes per linear weight in all.
inline constexpr double kFp8ParameterBytes = 1;
// 1-bit Adam's fp32 error feedback (--grad-compression 1bit, data_parallel.hpp): 4 bytes for every
// parameter on the worker and for the 1/d it serves.
inline constexpr double kOneBitErrorBytes = 4;
inline constexpr double kFp8ParameterWithTransposeBytes = 2;

// Bytes of one gradient in the data-parallel gradient buffer, which is also what its reduction
// moves (--grad-reduce-dtype). Megatron-LM's default (megatron/training/arguments.py, validate_args)
// accumulates and reduces in fp32 under bf16 (and so under FP8, whose parameters are bf16) unless
// --grad-reduce-in-bf16 is given, and in the parameters' own fp16 under --fp16; the buffer takes
// that dtype (megatron/core/distributed/param_and_grad_buffer.py: fp32 when grad_reduce_in_fp32,
// else the parameter dtype). A 16-bit buffer is cast to fp32 for the optimizer's shard at the step
// (optimizer_step_time pays the cast; the fp32 copy lives only then, when no activation is stashed).
double gradient_bytes(const TrainingLayout& layout);
// The dtype that gives those bytes: the layout's, or the default named ("fp32" or "fp16").
std::string grad_reduce_dtype(const TrainingLayout& layout);

struct StaticMemory {
  double parameter_count = 0;  // parameters on this tensor-parallel rank of the device
  double fp8_weight_count = 0;  // of those, linear-layer weights with FP8 copies (precision fp8)
  // Of those, routed experts' parameters (this rank's experts / e of each MoE layer): the distributed
  // optimizer shards them over the expert data-parallel group, t d / e ranks, not over d.
  double expert_parameter_count = 0;
  std::int64_t parameters = 0;  // bf16 weights, plus their FP8 copies under FP8
  std::int64_t gradients = 0;
  std::int64_t optimizer = 0;
  std::int64_t workspace = 0;
  std::int64_t total() const { return parameters + gradients + optimizer + workspace; }
};

// Parameters one tensor-parallel rank holds for one stage: its layers' weights split t ways, the
// vocabulary-parallel embedding (and learned positions, replicated) on the first stage, the final
// norm and the LM head on the last. A tied LM head on a pipeline of more than one stage is a second
// copy of the embedding, as Megatron-LM keeps it (its gradient is summed across the two stages).
// Norm weights and biases are split t ways too (they are replicated in practice, a rounding error).
// Under expert parallelism an MoE layer holds 1 / `expert_shards` of its routed experts' weights
// (experts / e of them, each split over etp ranks: expert_model_shards).
double stage_parameter_count(const Architecture& arch, const StageContents& stage, int tensor_parallel,
                             bool single_stage, int expert_shards = 1);
// Of those, the routed experts' parameters.
double stage_expert_parameter_count(const Architecture& arch, const StageContents& stage, int expert_shards = 1);

// The ranks one routed expert layer's weights split over: e x etp (Megatron's expert model-parallel
// group, expert_tensor_and_model_parallel in parallel_state.py).
int expert_model_shards(const TrainingLayout& layout);

// The ranks an expert gradient is reduced over and its optimizer state sharded over: the expert
// data-parallel group, t d / (e etp), d for a dense model.
int expert_data_parallel(const TrainingLayout& layout);

// The share of a device's parameters that are FP8 parameters: its linear weights under
// --fp8-param-gather (precision fp8), else 0.
double fp8_parameter_share(const TrainingLayout& layout, const StaticMemory& device);

// The static memory of each device of a pipeline whose stages sit on `stage_device`.
std::vector<StaticMemory> static_memory_per_device(const Architecture& arch, const TrainingLayout& layout,
                                                   const StagePlan& plan, const std::vector<int>& stage_device,
                                                   int devices);

}  // namespace ppsim
