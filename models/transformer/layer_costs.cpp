// SPDX-License-Identifier: Apache-2.0
#include "models/transformer/layer_costs.hpp"

#include <algorithm>
#include <cassert>

namespace ppsim {

namespace {

double as_double(std::int64_t v) { return static_cast<double>(v); }

// Width of the K (or V) projection output: kv_heads * head size.
double kv_width(const Architecture& arch) { return as_double(std::int64_t{arch.kv_heads} * head_size(arch)); }

// Width of the queries and of the attention's output: heads * head size, the hidden size unless the
// model sets a wider head_dim (Qwen3).
double query_width(const Architecture& arch) { return as_double(std::int64_t{arch.heads} * head_size(arch)); }

// Weight elements one token meets in one layer's GEMMs (P_w in the header's derivation). In an MoE
// layer: the router (h x experts) and the top_k experts it is sent to, in place of the MLP.
double gemm_weights_per_token(const Architecture& arch, bool moe) {
  const double h = as_double(arch.hidden);
  const double attention = as_double(attention_weight_count(arch));
  const double matrices = arch.gated_mlp ? 3 : 2;
  if (moe) {
    return attention + h * arch.moe.experts + arch.moe.top_k * matrices * h * as_double(arch.moe.expert_ffn_hidden) +
           matrices * h * as_double(shared_expert_width(arch));
  }
  return attention + matrices * h * as_double(arch.ffn_hidden);
}

}  // namespace

double attention_keys(std::int64_t seq, std::int64_t window) {
  const double s = as_double(seq);
  if (window <= 0 || window >= seq) return s;
  const double w = as_double(window);
  return (2 * w * s - w * w) / s;
}

LayerFlops layer_flops(const Architecture& arch, std::int64_t seq, std::int64_t micro_batch, bool moe, bool windowed) {
  const double s = as_double(seq);
  const double tokens = s * as_double(micro_batch);
  const double gemm = 2 * tokens * gemm_weights_per_token(arch, moe);
  // Scores and context products: 2 s^2 d each per head per sequence, a heads: 2 s^2 (q + v) per
  // sequence, q the queries' width and v the values' (both h unless the model sets a wider head_dim;
  // MLA's keys are nope + rope wide, its values v_head_dim). A windowed layer's square is the band.
  const double keys = attention_keys(seq, windowed ? arch.sliding_window : 0);
  const double attention_forward = 2 * tokens * keys * (query_width(arch) + as_double(value_width(arch)));
  return LayerFlops{
      .forward = gemm + attention_forward, .input_grad = gemm + 2 * attention_forward, .weight_grad = gemm};
}

LayerFlops zero_bubble_table1_flops(std::int64_t seq, std::int64_t micro_batch, std::int64_t hidden) {
  const double s = as_double(seq);
  const double sbh = s * as_double(micro_batch) * as_double(hidden);
  const double h = as_double(hidden);
  return LayerFlops{
      .forward = sbh * (24 * h + 4 * s), .input_grad = sbh * (24 * h + 8 * s), .weight_grad = sbh * (24 * h)};
}

LayerFlops lm_head_flops(const Architecture& arch, std::int64_t seq, std::int64_t micro_batch) {
  const double pass = 2 * as_double(seq) * as_double(micro_batch) * as_double(arch.hidden) * as_double(arch.vocab);
  return LayerFlops{.forward = pass, .input_grad = pass, .weight_grad = pass};
}

double step_flops(const Architecture& arch, std::int64_t seq, std::int64_t batch, bool full_recompute) {
  auto per_layer = [&](bool moe, bool windowed) {
    const LayerFlops layer = layer_flops(arch, seq, batch, moe, windowed);
    return (full_recompute ? 2 : 1) * layer.forward + layer.input_grad + layer.weight_grad;
  };
  // Layers by kind (MoE or dense, windowed or not), each kind's count times its FLOPs.
  const LayerKinds kinds = layer_kinds(arch, 0, arch.layers);
  const LayerFlops head = lm_head_flops(arch, seq, batch);
  double flops = kinds.dense * per_layer(false, false) + (kinds.moe > 0 ? kinds.moe * per_layer(true, false) : 0);
  if (kinds.windowed_dense > 0) flops += kinds.windowed_dense * per_layer(false, true);
  if (kinds.windowed_moe > 0) flops += kinds.windowed_moe * per_layer(true, true);
  // One term at a time, as a dense model's sum has always been taken (its figures stay exact).
  flops += head.forward;
  flops += head.input_grad;
  flops += head.weight_grad;
  if (arch.mtp_layers > 0) {
    // Each MTP module: its 2h -> h projection, a layer of the last layer's kind, the shared head again.
    const double h = as_double(arch.hidden);
    const double projection = 2 * as_double(seq) * as_double(batch) * 2 * h * h;
    const int last = arch.layers - 1;
    flops += arch.mtp_layers * ((full_recompute ? 4 : 3) * projection +
                                per_layer(is_moe_layer(arch, last), is_windowed_layer(arch, last)) + head.forward +
                                head.input_grad + head.weight_grad);
  }
  return flops;
}

double narayanan_step_flops(std::int64_t batch, std::int64_t seq, std::int64_t layers, std::int64_t hidden,
                            std::int64_t vocab) {
  const double b = as_double(batch);
  const double s = as_double(seq);
  const double l = as_double(layers);
  const double h = as_double(hidden);
  const double v = as_double(vocab);
  return 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
}

double activation_bytes_per_layer(const Architecture& arch, const ActivationLayout& layout, bool moe) {
  assert(layout.tensor_parallel >= 1);
  const double t = layout.tensor_parallel;
  const double s = as_double(layout.seq);
  const double tokens = s * as_double(layout.micro_batch);
  const double h = as_double(arch.hidden);
  const double f = as_double(arch.ffn_hidden);
  const double kv = kv_width(arch);
  const double v = as_double(value_width(arch));

  if (layout.recompute == Recompute::kFull) {
    // Only the layer input, 16-bit; sharded over the sequence under sequence parallelism.
    return tokens * 2 * h / (layout.sequence_parallel ? t : 1);
  }

  // Per token, in bytes: see the derivation in the header.
  // Korthikanti's count assumes dropout; a model trained without it keeps no 1-byte masks and its
  // softmax output is the context product's input (2as instead of 5as).
  const bool dropout = arch.dropout > 0;
  // A linear layer's saved input: bf16, or its FP8 cast under FP8.
  const double gemm_input = layout.fp8 ? 1 : 2;
  // With the norms recomputed (--recompute-modules layernorm) their outputs, the inputs of the
  // linears after them, are rebuilt in the backward, not kept.
  const double norm_output = layout.recomputes_norms() ? 0 : 1;
  double replicated = 2 * h + 2 * h                          // inputs of the two norms
                      + norm_output * gemm_input * h         // QKV GEMM input
                      + (dropout ? h + h : 0);               // attention-output and MLP-output dropout masks
  // The MLP keeps its first GEMM's input, the activation function's input (gated: gate and up
  // outputs) in bf16 and the last GEMM's input as that GEMM saves it.
  double mlp_split = (arch.gated_mlp ? 2 * f + 2 * f : 2 * f) + gemm_input * f;
  if (moe) {
    // An MoE layer (tensor parallelism only with sequence parallelism, so the layer routes its
    // shard of T / t tokens: the per-token terms below divide by t with the rest): the router's
    // 16-bit input and its fp32 probabilities over the experts; each token copy this rank's experts
    // receive (top_k per token, times --moe-imbalance on the busiest rank) keeps its permuted input
    // and the expert MLP's tensors at the expert width (experts are not split over t); each of the
    // token's own top_k copies keeps the expert's output it gets back, which the combine's backward
    // needs for the gradient of the routing weights (with that weight, fp32).
    // Under expert tensor parallelism over r ranks the r ranks gather each other's copies first, so
    // the experts' first GEMM saves r times the copies at full width and the rest 1/r of the width.
    // Shared experts are a dense MLP of their total width beside the routed ones, split t ways.
    const double k = arch.moe.top_k;
    const double received = k * layout.moe_imbalance;
    const double fe = as_double(arch.moe.expert_ffn_hidden);
    const double r = std::max(1, layout.expert_tensor_parallel);
    const double fs = as_double(shared_expert_width(arch));
    // With the experts' activation recomputed (moe_act) their second GEMM's input is not kept.
    const double act_output = layout.recomputes_moe_activation() ? 0 : 1;
    // With the shared experts checkpointed (shared_experts) they keep only their input, the tensor
    // the router keeps too.
    const bool shared = fs > 0 && !layout.recomputes_shared_experts();
    if (layout.recomputes_moe()) {
      replicated += 2 * h;  // the whole MoE layer checkpointed (moe): only its 16-bit input is kept
      mlp_split = 0;
    } else {
      replicated +=
          norm_output * 2 * h + 4 * as_double(arch.moe.experts) + (shared ? norm_output * gemm_input * h : 0);
      mlp_split = received * (r * gemm_input * h + (arch.gated_mlp ? 2 * fe + 2 * fe : 2 * fe) +
                              act_output * gemm_input * fe) +
                  k * (2 * h + 4) + (shared ? (arch.gated_mlp ? 2 * fs + 2 * fs : 2 * fs) + gemm_input * fs : 0);
    }
  } else if (layout.recomputes_mlp()) {
    replicated += 2 * h;  // the checkpointed MLP's 16-bit input, all it keeps (mlp)
    mlp_split = 0;
  } else {
    replicated += norm_output * gemm_input * h;  // MLP first GEMM input
  }
  const double q = query_width(arch);   // h, or heads x head_dim where the model sets it
  double attention_split = (2 * q + 2 * kv)  // Q and K for the scores
                           + 2 * kv;         // V for the context product
  if (has_mla(arch)) {
    // MLA: the latents' norm inputs and the up projections' inputs, computed whole on every rank;
    // per head keys as wide as the queries (nope + rope) and values of v_head_dim.
    const Architecture::Mla& m = arch.mla;
    const double q_latent = as_double(m.q_lora_rank);
    const double kv_latent = as_double(m.kv_lora_rank);
    replicated += (q_latent > 0 ? 2 * q_latent + gemm_input * q_latent : 0) + 2 * kv_latent + gemm_input * kv_latent;
    // The up projections' outputs after the rotary embedding, the attention core's Q, K and V: not
    // kept when the up projections are recomputed (mla_up_proj).
    attention_split = layout.recomputes_mla_up_projections() ? 0 : 2 * q + 2 * q + 2 * v;
  }
  const double split = attention_split + 2 * v + (layout.fp8 ? gemm_input * v : 0)  // attention output (+ FP8 copy)
                       + mlp_split;
  // Softmax output 2as, dropout mask as, dropout output 2as per token (a = heads).
  const bool keeps_scores = !layout.recomputes_core_attention() && !layout.flash_attention;
  const double core = keeps_scores ? (dropout ? 5 : 2) * arch.heads * s : 0;

  const double per_token = replicated / (layout.sequence_parallel ? t : 1) + split / t + core / t;
  return tokens * per_token;
}

double weight_grad_bytes_per_layer(const Architecture& arch, const ActivationLayout& layout, bool moe) {
  assert(layout.tensor_parallel >= 1);
  const double t = layout.tensor_parallel;
  const double tokens = as_double(layout.seq) * as_double(layout.micro_batch);
  const double h = as_double(arch.hidden);
  const double f = as_double(arch.ffn_hidden);
  const double kv = kv_width(arch);

  // GEMM inputs and output gradients W still reads (2 bytes each, 1 under FP8), per token. The
  // attention's: QKV input and the output projection's output gradient (replicated), the output
  // projection's input and QKV's output gradient (split). MLA's: its down projections' input and
  // output gradients and its up projections' inputs (replicated: computed whole on every rank), the
  // up projections' output gradients and the output projection's input (split).
  const double q = query_width(arch);
  double attention_replicated = h + h;
  double attention_split = q + (q + 2 * kv);
  if (has_mla(arch)) {
    const Architecture::Mla& m = arch.mla;
    const double q_latent = as_double(m.q_lora_rank);
    const double kv_latent = as_double(m.kv_lora_rank);
    attention_replicated += 2 * q_latent + kv_latent + (kv_latent + as_double(m.qk_rope_head_dim));
    attention_split = as_double(value_width(arch)) + q +
                      as_double(std::int64_t{arch.heads} * (m.qk_nope_head_dim + m.v_head_dim));
  }
  const double replicated = attention_replicated  // the attention's
                            + h                   // MLP first GEMM input
                            + h;                  // MLP last GEMM output gradient
  const double split = attention_split           // the attention's
                       + f                              // MLP last GEMM input
                       + (arch.gated_mlp ? 2 * f : f);  // MLP first GEMM output gradient
  const double element = layout.fp8 ? 1 : 2;
  if (moe) {
    // The attention's four as above; then, per token of the shard the MoE layer routes (T / t under
    // sequence parallelism), the router's input and output gradient (16-bit) and per routed copy
    // each expert GEMM's input and output gradient at the expert width (experts are not split).
    // Under expert tensor parallelism over r ranks the full-width input and output gradient cover r
    // times the copies. Shared experts keep a dense MLP's four, at their total width.
    const double k = arch.moe.top_k;
    const double fe = as_double(arch.moe.expert_ffn_hidden);
    const double r = std::max(1, layout.expert_tensor_parallel);
    const double fs = as_double(shared_expert_width(arch));
    const double shared_replicated = fs > 0 ? h + h : 0;                        // input, output gradient
    const double shared_split = fs > 0 ? fs + (arch.gated_mlp ? 2 * fs : fs) : 0;  // down input, up gradient
    attention_replicated += shared_replicated;
    attention_split += shared_split;
    const double experts = k * layout.moe_imbalance * (r * h + fe + r * h + (arch.gated_mlp ? 2 * fe : fe));
    const double shard = layout.sequence_parallel ? t : 1;
    return tokens * (element * (attention_replicated / shard + attention_split / t) +
                     (element * experts + 2 * (h + as_double(arch.moe.experts))) / shard);
  }
  return tokens * element * (replicated / (layout.sequence_parallel ? t : 1) + split / t);
}

}  // namespace ppsim
