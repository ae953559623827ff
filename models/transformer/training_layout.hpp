// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a model is trained: sequence, micro-batch, the three parallel degrees, recomputation and the
// memory-saving options, as a Megatron-LM or DeepSpeed launch line states them. Plain data; the
// config layer fills it and checks every field against its flag or JSON path.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/transformer/layer_costs.hpp"

namespace ppsim {

struct TrainingLayout {
  std::int64_t seq = 2048;      // s, tokens per sequence
  std::int64_t micro_batch = 1;  // b, sequences per micro-batch
  int tensor_parallel = 1;       // t
  bool sequence_parallel = false;
  int pipeline = 1;              // p, pipeline devices
  int chunks = 1;                // v, stages per device
  int data_parallel = 1;         // d
  // c, context parallelism (Megatron's --context-parallel-size): each sequence split over c ranks,
  // which exchange keys and values in every layer's attention (pass_costs.cpp, context_parallel_time).
  // Megatron orders ranks tp, cp, ep, dp, pp (parallel_state.py, order "tp-cp-ep-dp-pp"), so the c
  // ranks are t apart; gradients and the distributed optimizer reduce and shard over d x c.
  int context_parallel = 1;
  // --cp-comm (Megatron's --cp-comm-type): "p2p" (ring attention, the default), "a2a" (Ulysses),
  // "allgather" (Llama 3's K/V all-gather) or "a2a+p2p" (a2a within groups of
  // hierarchical_cp[0] ranks, a ring over hierarchical_cp[1] of them).
  std::string cp_comm = "p2p";
  std::vector<int> hierarchical_cp;  // --hierarchical-context-parallel-sizes, with a2a+p2p only
  // e, expert parallelism (Megatron's --expert-model-parallel-size): an MoE layer's experts are split
  // over e ranks folded out of the data-parallel ones, each holding experts / e of them, and the
  // tokens reach them by all-to-all; the expert gradients reduce over the d / e ranks left (the
  // expert data-parallel group, megatron/core/parallel_state.py). 1: every expert on every rank.
  int expert_parallel = 1;
  // --expert-tensor-parallel: each expert split over this many ranks (Megatron's MoE parallel
  // folding: ETP x EP ranks per expert group, independent of t). The ETP ranks all-gather each
  // other's routed copies after the all-to-all, run column- and row-parallel expert GEMMs, and
  // reduce-scatter the outputs (token_dispatcher.py). 1 by default, as Megatron-Bridge's MoE recipes
  // set it; Megatron-LM defaults it to t when the flag is absent.
  int expert_tensor_parallel = 1;
  // --moe-dispatcher: how tokens reach their experts under expert parallelism (pass_costs.cpp,
  // expert_dispatch_time): "alltoall" (Megatron-LM's MoEAlltoAllTokenDispatcher, NCCL all-to-all,
  // which its MoE README recommends with expert parallelism and every published recipe uses),
  // "allgather" (Megatron-LM's flag default: all-gather the tokens, reduce-scatter the outputs) or
  // "deepep" (DeepEP / HybridEP through Megatron's flex dispatcher: a token crosses to each other
  // node once, then fans out over NVLink).
  std::string moe_dispatcher = "alltoall";
  // --moe-imbalance: the tokens the busiest expert rank receives over the balanced top_k T share
  // (1: balanced, as NVIDIA's benchmarks force it with --moe-router-force-load-balancing); the
  // busiest rank's expert GEMMs and all-to-alls set the pace.
  double moe_imbalance = 1;
  std::int64_t global_batch = 0;  // sequences per optimizer step: m * b * d
  Recompute recompute = Recompute::kNone;
  RecomputeModules recompute_modules;  // what kSelective re-runs (--recompute-modules)
  bool flash_attention = true;
  bool distributed_optimizer = false;  // Adam state and master weights sharded over d (ZeRO-1)
  // torch's FSDP2 (fully_shard) on every stage over d (models/transformer/fully_sharded.hpp): a
  // lowered schedule's UNSHARD, RESHARD and REDUCE_GRAD cost their collectives and buffers, and
  // Megatron's data-parallel collectives give way to them.
  bool fsdp = false;
  // HSDP (--data-parallel-replicate R, torchtitan's data_parallel_replicate_degree): with fsdp, the d
  // ranks form R replicas of d / R shards each; the shard ranks are consecutive (t apart, torchtitan's
  // mesh order dp_replicate, dp_shard, tp), gather the parameters and reduce-scatter the gradients
  // among themselves, and the R replicas then all-reduce each shard's gradients (FSDP2's HSDP).
  int data_parallel_replicate = 1;
  // --fsdp-unit: what one fully_shard call wraps. "block" (default): each transformer block, then the
  // embedding and the final norm with the output head, as torchtitan's apply_fsdp and most FSDP2 users
  // shard; each op gathers its stage unit by unit beside its compute. "stage": the whole stage is one
  // unit, gathered by UNSHARD before its first op (fully_sharded.hpp).
  std::string fsdp_unit = "block";
  // --reshard-after-forward (torchtitan's reshard_after_forward_policy): "default" frees each block's
  // gathered parameters after its forward only without pipeline parallelism (with it, a stage stays
  // gathered for the step); "always" and "never" force it.
  std::string reshard_after_forward = "default";
  // --fsdp-float8-all-gather (torchtitan's float8.enable_fsdp_float8_all_gather): under --precision
  // fp8, the linear weights are all-gathered in FP8 (1 byte) instead of bf16.
  bool fsdp_float8_all_gather = false;
  // FSDP shards over the data-parallel and context-parallel ranks together (torchtitan's dp_shard_cp
  // mesh), over R replicas with HSDP.
  int fsdp_shards() const { return data_parallel * context_parallel / std::max(1, data_parallel_replicate); }
  std::string precision = "bf16";       // GEMM precision: a key of the profile's dense peaks
  // --grad-reduce-dtype: the data type of the gradient buffer and of its data-parallel reduction,
  // "fp32", "bf16" or "fp16"; "" is the framework's default (gradient_bytes in static_memory.hpp).
  std::string grad_reduce_dtype;
  // --fp8-param-gather (Megatron-LM's flag, NeMo's fp8_param_gather): under FP8 the linear weights
  // are FP8 parameters, with no bf16 copy (static_memory.hpp), and the distributed optimizer
  // all-gathers them in FP8.
  bool fp8_param_gather = false;
  // --grad-compression: a what-if of compressed gradient communication (data_parallel.hpp):
  // "none", "fp8" (FP8-LM's FP8 all-reduce) or "1bit" (1-bit Adam's compressed all-reduce).
  std::string grad_compression = "none";
  // Layers of each stage (p * v entries); empty: as even as possible, the remainder on the first
  // stages.
  std::vector<int> layers_per_stage;
  // Data-parallel gradient reduction (models/transformer/data_parallel.hpp): true reduces each
  // bucket as soon as the last backward has produced it, beside the compute (Megatron's
  // --overlap-grad-reduce); false reduces each chunk after the device's last op.
  bool overlap_grad_reduce = true;
  // Parameters per gradient bucket (Megatron's --ddp-bucket-size); 0: Megatron's default,
  // max(40M, 1M * d).
  std::int64_t bucket_parameters = 0;
  // With the distributed optimizer: the parameter all-gather overlaps the next step's forwards
  // (Megatron's --overlap-param-gather, off by default as there) instead of ending the optimizer step.
  bool overlap_param_gather = false;
  // Tensor-parallel collectives split and overlapped with their GEMMs (Megatron's --tp-comm-overlap,
  // Transformer Engine's userbuffers); needs sequence parallelism, off by default as in Megatron.
  bool tp_comm_overlap = false;
  // --dropout: the hidden and attention dropout probability, over the model's own; < 0 keeps it.
  double dropout = -1;
  // Bytes per device outside parameters, gradients, optimizer state and stashed activations: CUDA
  // context, cuBLAS and NCCL workspaces, allocator fragmentation. 2 GiB by default (see
  // kDefaultWorkspaceBytes).
  std::int64_t workspace_bytes = std::int64_t{2} << 30;
  // --memory-headroom: the share of each GPU's memory kept free, for what no model counts exactly
  // (the caching allocator's fragmentation, a spike); a layout fits only within (1 - it) of the
  // capacity. 0 by default: the verdict still says "tight" below kTightHeadroom.
  double memory_headroom = 0;

  int stages() const { return pipeline * chunks; }
  std::int64_t gpus() const { return std::int64_t{tensor_parallel} * context_parallel * pipeline * data_parallel; }
  // The ranks a dense gradient reduces over and the distributed optimizer shards over: d x c
  // (Megatron's data-parallel group "with context parallel").
  int gradient_ranks() const { return data_parallel * context_parallel; }
  // Tokens of one micro-batch on one rank: its share of the c-way split sequence.
  std::int64_t tokens_per_microbatch() const { return seq / context_parallel * micro_batch; }
  // Activations at CP = c and sequence s are those of CP = 1 at s / c.
  ActivationLayout activation_layout() const {
    return ActivationLayout{seq / context_parallel, micro_batch, tensor_parallel, sequence_parallel,
                            recompute, flash_attention, precision == "fp8", moe_imbalance,
                            expert_tensor_parallel, recompute_modules};
  }
};

// The default workspace allowance: about 0.5 GiB of CUDA context, cuBLAS workspaces and NCCL
// channel buffers of a few hundred MiB, and the rest for the caching allocator's fragmentation,
// which PyTorch users typically see as reserved minus allocated of 1-2 GiB on large runs.
inline constexpr std::int64_t kDefaultWorkspaceBytes = std::int64_t{2} << 30;

const char* recompute_name(Recompute recompute);

}  // namespace ppsim
