// SPDX-License-Identifier: Apache-2.0
#pragma once
// FLOPs and activation bytes of one transformer layer, from its GEMM shapes and stored tensors.
//
// Conventions (shared with the papers these reproduce):
// - A multiply-add is 2 FLOPs: an (m x k) by (k x n) product is 2mkn FLOPs. Qi et al. (Zero Bubble
//   Pipeline Parallelism, ICLR 2024, Table 1) and Narayanan et al. (SC'21, appendix) both count so;
//   their 24h per token per layer is 2 x 12h^2 weights.
// - Only matrix products count. Norms, softmax, activation functions, dropout and residual adds
//   are O(sbh) and left out, as in both papers (they are memory-bound; a later time model charges
//   them by bytes, not FLOPs).
// - Attention scores are counted over the full s x s square, causal mask or not, as in both papers.
// - Activation bytes follow Korthikanti et al. 2022 (Reducing Activation Recomputation in Large
//   Transformer Models, section 4 and Table 2): 16-bit activations (2 bytes) and 1-byte dropout
//   masks.
// All results are doubles: FLOP counts of whole steps overflow nothing there, and Korthikanti's
// 5as/(ht) term is fractional for general shapes. Tests use sizes where every value is an exact
// integer below 2^53.

#include <cstdint>

#include "models/transformer/architecture.hpp"

namespace ppsim {

// The three passes of a layer as zero-bubble schedules split them: forward (F), the backward pass's
// gradient with respect to the layer input (I, the "B" of the paper), and the weight gradient (W).
struct LayerFlops {
  double forward = 0;
  double input_grad = 0;
  double weight_grad = 0;
};

// FLOPs of one transformer layer for a micro-batch of `micro_batch` sequences of `seq` tokens,
// whole layer (divide by t for one tensor-parallel rank).
//
// Derivation, per token (s*b tokens), with h hidden, f = ffn_hidden, a heads, g kv heads,
// d = h/a, kv = g*d:
//   weight GEMMs: Q h x h, K and V h x kv, O h x h, MLP (gated ? 3 : 2) h x f; call the sum P_w.
//   F does x.W for each: 2 P_w FLOPs per token. I does dY.W^T: the same 2 P_w. W does X^T.dY: the
//   same 2 P_w. The plain GPT case has P_w = 4h^2 + 8h^2 = 12h^2, giving 24h per token per pass.
//   attention products (no weights, so nothing in W): per sequence, scores Q.K^T is 2 s^2 d per
//   head and context P.V is 2 s^2 d per head, so 4 s^2 h over a heads. GQA shares K and V across
//   query heads but every query head still does its own products, so this does not shrink. I needs
//   two products for each (dQ and dK from dScores; dP and dV from dContext): 8 s^2 h.
// This gives Table 1 of Qi et al. exactly for a plain GPT layer:
//   F = sbh(24h + 4s), I = sbh(24h + 8s), W = sbh(24h).
// With `moe`, an MoE layer's: the router (h x experts), top_k experts of expert_ffn_hidden and the
// shared experts take the MLP's place in P_w.
// With `windowed`, a sliding-window layer's: each query meets attention_keys(s, window) keys on
// average in the full-square convention.
LayerFlops layer_flops(const Architecture& arch, std::int64_t seq, std::int64_t micro_batch, bool moe = false,
                       bool windowed = false);

// Keys per query of a causal attention over `seq` tokens, in the full-square convention the FLOP
// counts use (s: twice the causal half's s/2 average): with a window w < s, the band's
// w s - w^2 / 2 query-key pairs, doubled, per query: 2w - w^2/s.
double attention_keys(std::int64_t seq, std::int64_t window);

// Table 1 of Qi et al. (2024) as printed, for a plain GPT layer (MHA, 4h GeLU MLP); kept as the
// reference the general function is tested against.
LayerFlops zero_bubble_table1_flops(std::int64_t seq, std::int64_t micro_batch, std::int64_t hidden);

// LM head (logits GEMM, h x vocab) for one micro-batch: forward 2sbhV; backward 4sbhV (input
// gradient and weight gradient, 2sbhV each). The embedding lookup is a gather: no FLOPs.
LayerFlops lm_head_flops(const Architecture& arch, std::int64_t seq, std::int64_t micro_batch);

// FLOPs of a whole training step (forward and backward of every layer, dense or MoE, and the LM
// head) for a batch of `batch` sequences. With `full_recompute`, every layer's forward runs a second time
// during the backward (activation checkpointing of every layer); the LM head is not recomputed.
double step_flops(const Architecture& arch, std::int64_t seq, std::int64_t batch, bool full_recompute);

// Narayanan et al., Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM (SC'21), appendix, equation (3): 96 B s l h^2 (1 + s/(6h) + V/(16 l h)). The 96 is
// 4 x 24: forward, backward (twice the forward) and the recomputed forward of full activation
// recomputation, so it equals step_flops(..., full_recompute = true) of a plain GPT model exactly.
double narayanan_step_flops(std::int64_t batch, std::int64_t seq, std::int64_t layers, std::int64_t hidden,
                            std::int64_t vocab);

enum class Recompute {
  kNone,       // stash everything the backward needs
  kSelective,  // recompute the attention core (softmax, its dropout, scores x V): the s^2 part
  kFull,       // stash only each layer's input, recompute the whole layer in the backward
};

// What --recompute selective re-runs, as Megatron-LM's --recompute-modules names it
// (megatron/core/transformer/transformer_config.py, recompute_modules; default core_attn):
// core_attn, the attention core (Korthikanti et al.'s selective recomputation); layernorm, the two
// norms, whose outputs (the next linears' inputs) are then not kept; moe_act, the experts'
// activation function, whose output (the experts' second GEMM input) is then not kept. Checkpointed
// whole, keeping only their input (transformer_layer.py, recompute_mlp; moe/moe_layer.py,
// moe_layer_recompute and shared_experts_recompute): mlp, a dense layer's MLP; moe, an MoE layer's
// router, dispatch, experts and combine, the all-to-alls re-run with them; shared_experts, an MoE
// layer's shared experts. mla_up_proj, MLA's query and key-value up projections and their rotary
// embedding, whose outputs (the attention core's Q, K and V) are then not kept
// (multi_latent_attention.py, qkv_up_checkpoint).
struct RecomputeModules {
  bool core_attn = true;
  bool layernorm = false;
  bool moe_act = false;
  bool mlp = false;
  bool moe = false;
  bool shared_experts = false;
  bool mla_up_proj = false;

  bool operator==(const RecomputeModules&) const = default;
};

struct ActivationLayout {
  std::int64_t seq = 0;
  std::int64_t micro_batch = 0;
  int tensor_parallel = 1;         // t
  bool sequence_parallel = false;  // shard the t-replicated parts (norms, dropouts) over the sequence
  Recompute recompute = Recompute::kNone;
  bool flash_attention = false;  // fused attention keeps no s x s tensors
  // FP8 linear layers (Transformer Engine): what they save for the backward is their FP8 input
  // (see activation_bytes_per_layer).
  bool fp8 = false;
  // MoE layers: the busiest expert rank's token copies over the balanced top_k T (--moe-imbalance).
  double moe_imbalance = 1;
  // MoE layers: each expert split over this many ranks (--expert-tensor-parallel), which gather each
  // other's routed copies before the experts.
  int expert_tensor_parallel = 1;
  RecomputeModules modules;  // with Recompute::kSelective

  bool recomputes_core_attention() const { return recompute == Recompute::kSelective && modules.core_attn; }
  bool recomputes_norms() const { return recompute == Recompute::kSelective && modules.layernorm; }
  bool recomputes_moe_activation() const { return recompute == Recompute::kSelective && modules.moe_act; }
  bool recomputes_mlp() const { return recompute == Recompute::kSelective && modules.mlp; }
  bool recomputes_moe() const { return recompute == Recompute::kSelective && modules.moe; }
  bool recomputes_shared_experts() const { return recompute == Recompute::kSelective && modules.shared_experts; }
  bool recomputes_mla_up_projections() const { return recompute == Recompute::kSelective && modules.mla_up_proj; }
};

// Bytes of activations one layer stashes per micro-batch per tensor-parallel rank between its
// forward and its backward (M_B of Qi et al. Table 1). Korthikanti et al. 2022, Table 2:
//   no parallelism            sbh(34 + 5as/h)
//   tensor parallel           sbh(10 + 24/t + 5as/(ht))
//   + sequence parallel       sbh/t (34 + 5as/h)
//   TP + selective recompute  sbh(10 + 24/t)
//   TP + SP + selective       sbh(34/t)
//   full recompute            2sbh
// Derivation, in bytes per token, generalised to GQA and any MLP (kv = kv_heads * head size):
//   replicated over TP unless sequence parallel (10h for GPT): the two norm inputs 2h + 2h, the
//     QKV GEMM input 2h, the MLP's first GEMM input 2h, two dropout masks h + h.
//   split over TP (24h for GPT): Q and K for the scores 2h + 2kv, V 2kv, the output projection's
//     input 2h, the MLP: plain keeps the activation function's input 2f and the second GEMM's
//     input 2f; gated keeps gate and up outputs 2f + 2f and the down GEMM's input 2f.
//   attention core, split over TP (5as/h per h): softmax output 2as, dropout mask as, dropout
//     output 2as per token. Flash attention and selective recomputation both drop it (flash keeps
//     an O(s) log-sum-exp per head instead, left out as negligible).
//   full recomputation keeps only the layer input, 2h per token; Table 2 prints 2sbh. With sequence
//     parallelism that input is itself sharded, so we divide by t (not in the table).
// With `moe`, an MoE layer's (tensor parallelism only with sequence parallelism; experts whole on
// their rank): see the .cpp for its terms.
double activation_bytes_per_layer(const Architecture& arch, const ActivationLayout& layout, bool moe = false);

// Bytes of the activations the weight-gradient pass W still needs after the input-gradient pass I
// has run (M_W of Qi et al. Table 1: 32sbh for a plain GPT layer with t = 1). W computes X^T.dY for
// every weight GEMM, so it keeps each GEMM's input X and output gradient dY (2 bytes each):
//   inputs:            QKV h, output projection h, MLP first GEMM h, MLP last GEMM f
//   output gradients:  QKV h + 2kv, output projection h, MLP first GEMM (gated ? 2f : f), last h
// Plain GPT: 2(h + h + h + 4h) + 2(3h + h + 4h + h) = 32h per token. Tensor parallelism splits the
// column-parallel outputs and row-parallel inputs (QKV and first-MLP gradients, output-projection
// and last-MLP inputs); the QKV and first-MLP inputs and the row-parallel output gradients are
// replicated unless sequence parallel. Plain GPT with t: sbh(8 + 24/t). With full recomputation the
// layer is recomputed before I, so W's needs are the same as without it. (Our derivation; Qi et al.
// give only the t = 1 figure.) Under FP8 the weight-gradient GEMMs read the FP8 casts of both, the
// inputs saved in the forward and the output gradients cast in I: 1 byte each.
double weight_grad_bytes_per_layer(const Architecture& arch, const ActivationLayout& layout, bool moe = false);

}  // namespace ppsim
