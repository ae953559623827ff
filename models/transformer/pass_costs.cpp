// SPDX-License-Identifier: Apache-2.0
#include "models/transformer/pass_costs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <string_view>

#include "models/transformer/context_parallel.hpp"

namespace ppsim {
namespace {

constexpr double kActivationBytes = 2;  // bf16/fp16 activations and gradients

double as_double(std::int64_t value) { return static_cast<double>(value); }

// Shapes and widths of one layer on one rank, in doubles (the products below exceed 2^31).
struct LayerShape {
  double tokens, seq, batch, hidden, ffn, kv, t, heads;
  double queries;  // heads x head size: hidden, or wider where the model sets head_dim (Qwen3)
  double values;   // heads x value head size: the queries' width but under MLA (heads x v_head_dim)
  // Keys each query meets in the full-square convention: s, or a sliding window's band
  // (attention_keys in layer_costs.hpp).
  double keys;
  // MLA (Architecture::Mla): the two latents' widths (q_latent 0: no query bottleneck), the rope
  // key's width and the kv up projection's output (heads x (nope + v)); 0 without MLA.
  double q_latent = 0, kv_latent = 0, rope = 0, kv_up = 0;
  double qk_norm;  // 1 when the model norms each head's queries and keys (Qwen3), else 0
  double replicated;  // elements of an R tensor: T*h, or T*h/t under sequence parallelism
  bool gated, rotary, flash, sequence_parallel, dropout;
  // An MoE layer: each token goes to `copies` (top_k) of the router's `experts`, of width ffn; this
  // rank holds `groups` of them (experts / e) and runs `routed` token copies through them: top_k T
  // when balanced, times --moe-imbalance on the busiest rank. `expert_parallel` ranks exchange the
  // copies by all-to-all. A dense layer: 1, 1, 0, T and 1.
  double copies = 1, groups = 1, experts = 0, routed = 0, expert_parallel = 1;
  // The MLP's split: t for a dense layer (column- and row-parallel), 1 for experts (expert tensor
  // parallelism 1: each expert whole on its rank). `moe_tokens`: the tokens this rank routes, its
  // sequence-parallel shard T / t (the MoE layer takes the shard as it is, Megatron's dispatcher
  // with sequence parallelism), or T.
  double mlp_t = 1, moe_tokens = 0;
  // Under expert tensor parallelism (--expert-tensor-parallel) each expert splits over `etp` ranks,
  // which gather each other's copies: `routed` counts the gathered rows the expert GEMMs see, `sent`
  // the copies this rank itself dispatches (moe_tokens x top_k x imbalance). `shared`: the shared
  // experts' total width, a dense MLP split t ways beside the routed experts (0 without them).
  double etp = 1, sent = 0, shared = 0;
  bool moe = false;
  std::string_view dispatcher = "alltoall";  // --moe-dispatcher
};

LayerShape shape_of(const Architecture& arch, const TrainingLayout& layout, bool moe = false,
                    bool windowed = false) {
  LayerShape shape{};
  shape.values = as_double(value_width(arch));
  shape.keys = attention_keys(layout.seq, windowed ? arch.sliding_window : 0);
  if (has_mla(arch)) {
    shape.q_latent = as_double(arch.mla.q_lora_rank);
    shape.kv_latent = as_double(arch.mla.kv_lora_rank);
    shape.rope = as_double(arch.mla.qk_rope_head_dim);
    shape.kv_up = as_double(std::int64_t{arch.heads} * (arch.mla.qk_nope_head_dim + arch.mla.v_head_dim));
  }
  if (moe) {
    shape.copies = arch.moe.top_k;
    shape.expert_parallel = std::max(1, layout.expert_parallel);
    shape.groups = arch.moe.experts / shape.expert_parallel;
    shape.experts = arch.moe.experts;
  }
  // Under context parallelism the rank holds s / c of each sequence's queries (its two load-balanced
  // chunks) and meets all s keys: `keys` above stays the whole sequence's.
  shape.seq = as_double(layout.seq / layout.context_parallel);
  shape.batch = as_double(layout.micro_batch);
  shape.tokens = shape.seq * shape.batch;
  shape.moe = moe;
  shape.dispatcher = layout.moe_dispatcher;
  shape.etp = moe ? std::max(1, layout.expert_tensor_parallel) : 1;
  shape.mlp_t = moe ? shape.etp : layout.tensor_parallel;
  shape.moe_tokens = moe && layout.sequence_parallel ? shape.tokens / layout.tensor_parallel : shape.tokens;
  shape.sent = moe ? shape.moe_tokens * shape.copies * layout.moe_imbalance : shape.tokens;
  shape.routed = moe ? shape.sent * shape.etp : shape.tokens;
  shape.shared = moe ? as_double(shared_expert_width(arch)) : 0;
  shape.hidden = as_double(arch.hidden);
  shape.queries = as_double(std::int64_t{arch.heads} * head_size(arch));
  shape.qk_norm = arch.qk_norm ? 1 : 0;
  shape.ffn = as_double(moe ? arch.moe.expert_ffn_hidden : arch.ffn_hidden);
  shape.kv = as_double(std::int64_t{arch.kv_heads} * head_size(arch));
  shape.t = layout.tensor_parallel;
  shape.heads = arch.heads;
  shape.sequence_parallel = layout.sequence_parallel && layout.tensor_parallel > 1;
  shape.replicated = shape.tokens * shape.hidden / (shape.sequence_parallel ? shape.t : 1);
  shape.gated = arch.gated_mlp;
  shape.rotary = arch.learned_positions == 0;
  shape.flash = layout.flash_attention;
  shape.dropout = arch.dropout > 0;
  return shape;
}

enum class Pass { kForward, kInputGrad, kWeightGrad };

// The GEMM of a linear layer that maps T tokens' `inner`-wide input to a `cols`-wide output, as each
// pass runs it: F is X.W (T x inner by inner x cols); I is dY.W^T (T x cols by cols x inner); W is
// X^T.dY (inner x T by T x cols). Same FLOPs, different shapes: W's long dimension is the inner one.
GemmShape linear_shape(double tokens, double inner, double cols, Pass pass) {
  switch (pass) {
    case Pass::kForward:
      return {tokens, inner, cols};
    case Pass::kInputGrad:
      return {tokens, cols, inner};
    case Pass::kWeightGrad:
      return {inner, tokens, cols};
  }
  return {tokens, inner, cols};
}

// The linear layers of a layer on one rank, in Megatron's column/row-parallel split: each
// multiplies the T tokens' `inner`-wide input into a `cols`-wide output (QKV, attention output, MLP
// in with gate and up as one GEMM, MLP out, then an MoE layer's shared experts' in and out, zero
// wide without them). F, I and W run each once, transposed in I and W.
struct Linear {
  double inner;
  double cols;
};
// Under MLA the first is the query up projection (or the one h x queries projection) and three more
// follow: the query down projection and the kv down and up projections. Megatron builds the down
// projections unsplit ("duplicated", multi_latent_attention.py), so every rank runs them whole.
constexpr std::size_t kLinears = 9;
constexpr std::size_t kSharedIn = 4, kSharedOut = 5, kQueryDown = 6, kKvDown = 7, kKvUp = 8;
std::array<Linear, kLinears> linears(const LayerShape& x) {
  const double mlp_in_width = (x.gated ? 2 : 1) * x.ffn;
  const bool mla = x.kv_latent > 0;
  const Linear qkv = mla ? Linear{x.q_latent > 0 ? x.q_latent : x.hidden, x.queries / x.t}
                         : Linear{x.hidden, (x.queries + 2 * x.kv) / x.t};
  return {{qkv,
           {x.values / x.t, x.hidden},
           {x.hidden, mlp_in_width / x.mlp_t},
           {x.ffn / x.mlp_t, x.hidden},
           {x.hidden, (x.gated ? 2 : 1) * x.shared / x.t},
           {x.shared / x.t, x.hidden},
           {x.hidden, x.q_latent},
           {x.hidden, x.kv_latent + x.rope},
           {x.kv_latent, x.kv_up / x.t}}};
}

// Whether linear i exists in this layer (the shared experts' and MLA's only where the model has them).
bool has_linear(const LayerShape& x, std::size_t i) {
  if (i < kSharedIn) return true;
  if (i <= kSharedOut) return x.shared > 0;
  if (i == kQueryDown) return x.q_latent > 0;
  return x.kv_latent > 0;
}

// SMs an overlapped tensor-parallel collective takes from each linear's GEMM under --tp-comm-overlap,
// as Transformer Engine's userbuffers assign them by default (transformer_engine/pytorch/module/
// base.py, initialize_ub, get_default_config): the "pipeline" and "bulk" overlaps take num_sm = 16
// SMs with set_sm_margin, so the GEMM runs on the rest (common/comm_gemm_overlap/
// comm_gemm_overlap.cpp, CommOverlapCore: _math_sms = sm_count - num_comm_sm); "ring_exchange"
// runs on 1 SM with no margin, so its GEMM keeps every SM (charged 0 here; the copy engines move
// the data), and "external" takes none. By GEMM, in the
// order QKV, projection, MLP-in (fc1), MLP-out (fc2): F runs qkv and fc1 by ring exchange and proj
// and fc2 pipelined; I runs qkv and fc1 in bulk and proj and fc2 by ring exchange; W runs qkv and fc1
// in bulk and proj and fc2 external.
// The shared experts' in and out run as the MLP's fc1 and fc2 do.
constexpr int kUserbufferSms = 16;
std::array<int, kLinears> userbuffer_sms(Pass pass) {
  if (pass == Pass::kForward) return {0, kUserbufferSms, 0, kUserbufferSms, 0, kUserbufferSms, 0, 0, 0};
  return {kUserbufferSms, 0, kUserbufferSms, 0, kUserbufferSms, 0, 0, 0, 0};
}

// Seconds of each linear's GEMM in `pass`, on the SMs an overlapped collective leaves it.
std::array<double, kLinears> linear_times(const LayerShape& x, const HardwareProfile& profile,
                                          const TrainingLayout& layout, Pass pass) {
  std::array<double, kLinears> times{};
  const std::array<Linear, kLinears> shapes = linears(x);
  const bool overlapped = layout.tp_comm_overlap && x.sequence_parallel;
  const std::array<int, kLinears> taken = overlapped ? userbuffer_sms(pass) : std::array<int, kLinears>{};
  for (std::size_t i = 0; i < kLinears; ++i) {
    if (!has_linear(x, i)) continue;
    times[i] = profile.gemm_time(linear_shape(x.tokens, shapes[i].inner, shapes[i].cols, pass), layout.precision,
                                 taken[i]);
  }
  if (x.experts > 0) {
    // The experts' MLP GEMMs are grouped (Transformer Engine's GroupedLinear, Megatron's
    // TEGroupedMLP): one GEMM per local expert over the token copies routed to it, `routed` / groups
    // each, timed as one batched GEMM with the experts folded into the rows (each expert has its own
    // weight, which the memory traffic counts). Under expert tensor parallelism each is split etp
    // ways (column-parallel in, row-parallel out) over the copies its ranks gathered.
    const double routed = x.routed / x.groups;
    for (std::size_t i = 2; i < 4; ++i) {
      GemmShape grouped = linear_shape(routed, shapes[i].inner, shapes[i].cols, pass);
      grouped.rows *= x.groups;
      grouped.batch = x.groups;
      times[i] = profile.gemm_time(grouped, layout.precision);
    }
  }
  return times;
}

// The router of an MoE layer: a T x h by h x experts linear layer, outside Transformer Engine (so in
// 16 bits under FP8 too: megatron/core/transformer/moe/router.py, TopKRouter.gating); F, I and W as
// for any linear layer.
double router_time(const LayerShape& x, const HardwareProfile& profile, std::string_view precision, Pass pass) {
  if (x.experts <= 0) return 0;
  return profile.gemm_time(linear_shape(x.moe_tokens, x.hidden, x.experts, pass), precision);
}

// The token exchange of one pass under expert parallelism, dispatch before the experts and combine
// after (their gradients in I), by --moe-dispatcher. parallel_state.py orders expert ranks etp, ep,
// dp, pp, so the e ranks of an expert-parallel group are etp apart and the group crosses nodes once
// e x etp exceeds a node.
// - alltoall (Megatron's MoEAlltoAllTokenDispatcher, token_dispatcher.py): two all-to-alls of the
//   busiest rank's `sent` copies of h 16-bit values (all_to_all_time); under expert tensor
//   parallelism the etp ranks then all-gather each other's received copies before the experts and
//   reduce-scatter the outputs after (the dispatcher's gather and scatter over its tp_group).
// - allgather (MoEAllGatherTokenDispatcher): the e x etp ranks all-gather each other's tokens (T h
//   each), every rank picks its experts' copies, and a reduce-scatter returns the outputs.
// - deepep (DeepEP, github.com/deepseek-ai/DeepEP, and NVIDIA's HybridEP behind Megatron's flex
//   dispatcher; DeepSeek-V3 report, section 3.2.2): a token goes to each other node its experts sit
//   on once, over the NIC of the GPU of its rail, and is fanned out there over NVLink. With its top_k
//   experts spread evenly over the group's N nodes a token reaches (N - 1)(1 - (1 - 1/N)^k) other
//   nodes on average (experts drawn with replacement: within a few percent while k is far below the
//   experts); the copies' fan-out inside a node, (n - 1)/n of them, crosses NVLink meanwhile.
// Expert tensor parallelism's all-gather of the received copies before the experts and reduce-scatter
// of their outputs after (in I the conjugates, the same two): the etp ranks are consecutive
// (parallel_state.py), so they share a node while etp fits in one.
double expert_tensor_gathers(const LayerShape& x, const HardwareProfile& profile) {
  if (x.etp <= 1) return 0;
  const int etp = static_cast<int>(x.etp);
  const double gathered = x.routed * x.hidden * kActivationBytes;
  const bool inter = etp > profile.devices_per_node;
  const int local = std::min(etp, profile.devices_per_node);
  return collective_time(profile, Collective::kAllGather, gathered, etp, inter, local) +
         collective_time(profile, Collective::kReduceScatter, gathered, etp, inter, local);
}

double expert_dispatch(const LayerShape& x, const HardwareProfile& profile) {
  if (x.experts <= 0 || x.expert_parallel * x.etp <= 1) return 0;
  const int e = static_cast<int>(x.expert_parallel);
  const int etp = static_cast<int>(x.etp);
  if (x.dispatcher == "allgather") {
    const int group = e * etp;
    const double gathered = group * x.moe_tokens * x.hidden * kActivationBytes;
    const bool across = group > profile.devices_per_node;
    const int local = std::min(group, profile.devices_per_node);
    return collective_time(profile, Collective::kAllGather, gathered, group, across, local) +
           collective_time(profile, Collective::kReduceScatter, gathered, group, across, local);
  }
  const double tensor_parallel = expert_tensor_gathers(x, profile);
  if (e <= 1) return tensor_parallel;
  const bool inter = e * etp > profile.devices_per_node;
  const int per_node = std::min(e, std::max(1, profile.devices_per_node / etp));
  const double copies = x.sent * x.hidden * kActivationBytes;
  if (x.dispatcher == "deepep" && inter) {
    const double nodes = static_cast<double>(e) / per_node;
    const double remote = (nodes - 1) * (1 - std::pow(1 - 1 / nodes, x.copies));
    const double across = x.moe_tokens * x.hidden * kActivationBytes * remote * (x.sent / (x.moe_tokens * x.copies));
    const double nic = across / (profile.inter_node_bandwidth * profile.inter_link.at(across));
    const double nvlink =
        copies * (per_node - 1) / per_node / (profile.intra_node_bandwidth * profile.intra_link.at(copies));
    return 2 * (profile.inter_node_latency + std::max(nic, nvlink)) + tensor_parallel;
  }
  return 2 * collective_time(profile, Collective::kAllToAll, copies, e, inter, per_node) + tensor_parallel;
}

// The MoE layer's routing and token shuffling, memory-bound, per pass (Megatron's token
// dispatchers, megatron/core/transformer/moe/token_dispatcher.py and
// moe_utils.py: permute and unpermute). F: the softmax and top-k over T x experts logits (read 2,
// write 4 bytes each), permute (read the T tokens, write T top_k copies), unpermute (read the copies,
// write the T weighted sums). I: their gradients: the routing softmax's (read probabilities and
// their gradient, 4 + 4, write 2), permute's (read the copies' gradient, write the tokens'), and
// unpermute's, which also reads the expert outputs for the routing weights' gradient.
double routing_kernels(const LayerShape& x, const HardwareProfile& profile, bool backward) {
  if (x.experts <= 0) return 0;
  const double tokens = x.moe_tokens * x.hidden * kActivationBytes;
  const double copies = tokens * x.copies;
  const double logits = x.moe_tokens * x.experts;
  if (!backward) {
    return profile.memory_time(6 * logits) + profile.memory_time(tokens + copies) +
           profile.memory_time(copies + tokens);
  }
  return profile.memory_time(10 * logits) + profile.memory_time(copies + tokens) +
         profile.memory_time(tokens + 2 * copies);
}

// The linear layers' GEMMs run in the layout's precision. Under FP8, Transformer Engine runs only
// its own modules' GEMMs in FP8 (transformer_engine/pytorch/fp8.py, fp8_autocast around the
// transformer layers): the attention core stays in bf16 (DotProductAttention, fp8_dpa off by
// default), and so does Megatron's output layer, a tensor_parallel.ColumnParallelLinear outside TE.
std::string_view non_linear_precision(const TrainingLayout& layout) {
  return layout.precision == "fp8" ? std::string_view("bf16") : std::string_view(layout.precision);
}

// FP8 casts of one pass (Transformer Engine, transformer_engine/pytorch/module/linear.py and
// layernorm_linear.py): in F each linear's bf16 input is cast to FP8 together with its transpose
// for the weight-gradient GEMM, one fused cast-transpose kernel that also takes the amax for the
// next scaling factor (read 2 bytes, write 1 + 1 per element); in I each linear's output gradient
// gets the same cast-transpose. W reuses both transposes: nothing to cast. The weights' FP8 copies
// are cast once per step (training_step.cpp), cached over the micro-batches (is_first_microbatch).
double fp8_casts(const LayerShape& x, const HardwareProfile& profile, const TrainingLayout& layout, bool backward) {
  if (layout.precision != "fp8") return 0;
  constexpr double kCastTransposeBytes = 2 + 1 + 1;
  double seconds = 0;
  // F casts each input (T x inner, gathered under sequence parallelism), I each output gradient.
  const std::array<Linear, kLinears> shapes = linears(x);
  for (std::size_t i = 0; i < kLinears; ++i) {
    if (!has_linear(x, i)) continue;
    const double tokens = i == 2 || i == 3 ? x.routed : x.tokens;  // the experts see the routed copies
    seconds += profile.memory_time(kCastTransposeBytes * tokens * (backward ? shapes[i].cols : shapes[i].inner));
  }
  return seconds;
}

// The weight GEMMs of a layer in one pass; F, I and W each run them once (transposed for I and W).
double sum(const std::array<double, kLinears>& times) {
  double total = 0;
  for (const double time : times) total += time;
  return total;
}

// FLOPs of one attention product over all of this rank's heads: 2 s k d per head per sequence (k the
// keys a query meets, s or a window's band), b * a/t heads, a * d = `width`: the queries' for the
// scores (h unless the model sets a wider head_dim), the values' for the context: 2 b s k width / t.
double attention_product_flops(const LayerShape& x, double width) { return 2 * x.batch * x.seq * x.keys * width / x.t; }
double attention_product_flops(const LayerShape& x) { return attention_product_flops(x, x.queries); }

// Elements of the s x k score tensors on this rank.
double score_elements(const LayerShape& x) { return x.batch * (x.heads / x.t) * x.seq * x.keys; }

// The unfused attention's products are batched GEMMs, one per sequence and head (b * a/t of them),
// timed as one GEMM with the batch folded into the rows: the scores Q.K^T (s x d by d x s) and
// the products with an s-wide inner dimension (P.V, and in the backward dV, dQ and dK).
GemmShape scores_shape(const LayerShape& x) {
  const double d = x.queries / x.heads;
  const double items = x.batch * (x.heads / x.t);
  return {items * x.seq, d, x.keys, items};
}
GemmShape long_inner_shape(const LayerShape& x) {
  const double d = x.values / x.heads;
  const double items = x.batch * (x.heads / x.t);
  return {items * x.seq, x.keys, d, items};
}

double attention_forward(const LayerShape& x, const HardwareProfile& profile, const TrainingLayout& layout) {
  if (x.flash) {
    // One fused kernel: two products (scores, context) over the unmasked half of the causal square.
    const double products = x.values == x.queries ? 2 * attention_product_flops(x)
                                                  : attention_product_flops(x) + attention_product_flops(x, x.values);
    return profile.attention_time(products * 0.5, x.seq, false, non_linear_precision(layout));
  }
  const std::string_view precision = non_linear_precision(layout);
  return profile.gemm_time(scores_shape(x), precision) + profile.gemm_time(long_inner_shape(x), precision);
}

double attention_backward(const LayerShape& x, const HardwareProfile& profile, const TrainingLayout& layout) {
  if (x.flash) {
    // Recomputed scores, then dV, dP, dQ and dK: five products over the unmasked half, three at the
    // queries' width (scores, dQ, dK) and two at the values' (dV, dP).
    const double products = x.values == x.queries
                                ? 5 * attention_product_flops(x)
                                : 3 * attention_product_flops(x) + 2 * attention_product_flops(x, x.values);
    return profile.attention_time(products * 0.5, x.seq, true, non_linear_precision(layout));
  }
  // dP = dO.V^T has the scores' shape; dV, dQ and dK the context product's.
  const std::string_view precision = non_linear_precision(layout);
  return profile.gemm_time(scores_shape(x), precision) + 3 * profile.gemm_time(long_inner_shape(x), precision);
}

double softmax_forward(const LayerShape& x, const HardwareProfile& profile) {
  return x.flash ? 0 : profile.memory_time(2 * kActivationBytes * score_elements(x));
}

double softmax_backward(const LayerShape& x, const HardwareProfile& profile) {
  return x.flash ? 0 : profile.memory_time(3 * kActivationBytes * score_elements(x));
}

// F or I's passes over the activation function's input: GELU reads and writes it, SwiGLU reads gate
// and up and writes their product; the backward reads one more and writes the gradients.
double activation_passes(const LayerShape& x, bool backward) { return x.gated ? (backward ? 5 : 3) : (backward ? 3 : 2); }

// The shared experts' activation function alone (an MoE layer's shared_experts recomputation).
double shared_activation_kernel(const LayerShape& x, const HardwareProfile& profile, bool backward) {
  return profile.memory_time(activation_passes(x, backward) * x.tokens * x.shared / x.t * kActivationBytes);
}

// The MLP's activation function of one pass (F or I). An MoE layer's runs over the routed copies at
// the expert width, and over every token at the shared experts' width / t.
double mlp_activation_kernels(const LayerShape& x, const HardwareProfile& profile, bool backward) {
  double seconds = profile.memory_time(activation_passes(x, backward) * x.routed * x.ffn / x.mlp_t * kActivationBytes);
  if (x.shared > 0) seconds += shared_activation_kernel(x, profile, backward);
  return seconds;
}

// MLA rotates only the queries' rope part and the one shared rope key.
double mla_rotary_kernel(const LayerShape& x, const HardwareProfile& profile) {
  return profile.memory_time(2 * x.tokens * (x.heads * x.rope / x.t + x.rope) * kActivationBytes);
}

// Norms, residual adds, the activation function and rotary embeddings of one pass (F or I).
double layer_memory_kernels(const LayerShape& x, const HardwareProfile& profile, bool backward) {
  const double r = x.replicated * kActivationBytes;
  double seconds = 2 * profile.memory_time((backward ? 3 : 2) * r)  // two norms
                   + 2 * profile.memory_time(3 * r);                // two residual adds
  seconds += mlp_activation_kernels(x, profile, backward);
  if (x.rotary && x.kv_latent > 0) {
    seconds += mla_rotary_kernel(x, profile);
  } else if (x.rotary) {
    seconds += profile.memory_time(2 * x.tokens * (x.queries + x.kv) / x.t * kActivationBytes);
  }
  if (x.kv_latent > 0) {  // MLA's RMSNorms of its two latents, whole on every rank
    seconds += profile.memory_time((backward ? 3 : 2) * x.tokens * (x.q_latent + x.kv_latent) * kActivationBytes);
  }
  // Qwen3's RMSNorm of every head's queries and keys, before the rotary embedding: read and write
  // them in F, read them and their gradient and write the gradient in I.
  if (x.qk_norm > 0) {
    seconds += profile.memory_time((backward ? 3 : 2) * x.tokens * (x.queries + x.kv) / x.t * kActivationBytes);
  }
  // Dropout after the attention output and the MLP, fused into the bias-add-residual kernel as
  // Megatron runs it (megatron/core/fusions/fused_bias_dropout.py): beyond the residual add's bytes
  // it writes its 1-byte mask in F and reads it in the backward.
  if (x.dropout) seconds += 2 * profile.memory_time(x.replicated);
  return seconds;
}

// Attention-probability dropout on the s x s scores: its own kernel without flash attention (read
// and write the probabilities, write the mask in F; read the gradient and the mask, write in the
// backward: 5 bytes an element both ways). Flash attention draws it inside its fused kernel.
double attention_dropout(const LayerShape& x, const HardwareProfile& profile) {
  if (!x.dropout || x.flash) return 0;
  return profile.memory_time(5 * score_elements(x));
}

// The tensor-parallel collectives of one pass: two all-reduces, or two reduce-scatter + all-gather
// pairs under sequence parallelism. `gemms` are the pass's linear GEMM times (linear_times), which
// overlapped collectives hide behind.
double layer_collectives(const LayerShape& x, const HardwareProfile& profile, const TrainingLayout& layout,
                         bool backward, const std::array<double, kLinears>& gemms) {
  if (layout.tensor_parallel <= 1) return 0;
  const double bytes = x.tokens * x.hidden * kActivationBytes;
  const bool inter = tensor_parallel_crosses_nodes(profile, layout);
  const int t = layout.tensor_parallel;
  const int per_node = tensor_parallel_ranks_per_node(profile, layout);
  if (x.sequence_parallel && layout.tp_comm_overlap) {
    // Transformer Engine's userbuffers (--tp-comm-overlap): each all-gather and reduce-scatter is
    // split into chunks pipelined with the GEMM it feeds or drains (transformer_engine/pytorch/
    // module/base.py, initialize_ub; the AG before QKV and MLP-in, the RS after the attention output
    // and MLP-out), so only what that GEMM does not cover is paid. The same pairs serve I, transposed.
    const double gather = collective_time(profile, Collective::kAllGather, bytes, t, inter, per_node);
    const double scatter = collective_time(profile, Collective::kReduceScatter, bytes, t, inter, per_node);
    // F: all-gathers before QKV and MLP-in, reduce-scatters after the attention output and MLP-out.
    // I runs the conjugates: a reduce-scatter after the QKV and MLP-in input gradients, an
    // all-gather of dY before the attention-output and MLP-out ones.
    const double forward_pairs[] = {gather, scatter, gather, scatter, gather, scatter};
    const double backward_pairs[] = {scatter, gather, scatter, gather, scatter, gather};
    const double* collectives = backward ? backward_pairs : forward_pairs;
    // An MoE layer has the attention's pair and its shared experts': the routed experts take the
    // sequence shard as it is and hand back a shard, so the tensor-parallel group gathers nothing
    // around them (the dispatcher moves their tokens).
    double exposed = 0;
    for (std::size_t i = 0; i <= kSharedOut; ++i) {
      const bool routed_experts = x.moe && (i == 2 || i == 3);
      if (has_linear(x, i) && !routed_experts) exposed += std::max(0.0, collectives[i] - gemms[i]);
    }
    return exposed;
  }
  const double pairs = x.moe ? (x.shared > 0 ? 2 : 1) : 2;
  if (x.sequence_parallel) {
    return pairs * (collective_time(profile, Collective::kReduceScatter, bytes, t, inter, per_node) +
                    collective_time(profile, Collective::kAllGather, bytes, t, inter, per_node));
  }
  return pairs * collective_time(profile, Collective::kAllReduce, bytes, t, inter, per_node);
}

// What selective recomputation re-runs in I before the layer's backward, by --recompute-modules
// (RecomputeModules, layer_costs.hpp): Korthikanti et al. 2022, section 5, the attention core
// (scores, softmax, context); the two norms' forward; an MoE layer's experts' activation function;
// a dense layer's MLP (its two GEMMs, activation function and tensor-parallel pair); an MoE layer
// whole (router, routing kernels, dispatch, experts and combine: its all-to-alls run again) or its
// shared experts alone; MLA's query and key-value up projections with their rotary embedding.
// Each is the module's forward term as F times it. (Under --tp-comm-overlap the MLP's exposed
// collectives are taken as half the layer's, exact without it.)
double selective_recompute(const LayerShape& x, const HardwareProfile& profile, const TrainingLayout& layout,
                           const PassTime& forward, const std::array<double, kLinears>& forward_gemms) {
  const RecomputeModules& modules = layout.recompute_modules;
  double seconds = 0;
  if (modules.core_attn) seconds = forward.attention + softmax_forward(x, profile) + attention_dropout(x, profile);
  if (modules.layernorm) seconds += 2 * profile.memory_time(2 * x.replicated * kActivationBytes);
  if (x.moe && modules.moe) {
    seconds += router_time(x, profile, non_linear_precision(layout), Pass::kForward) +
               routing_kernels(x, profile, false) + forward.dispatch + forward.experts +
               (x.shared > 0 ? forward.collective / 2 : 0);
  } else if (x.moe) {
    if (modules.moe_act) seconds += profile.memory_time((x.gated ? 3 : 2) * x.routed * x.ffn / x.mlp_t * kActivationBytes);
    if (modules.shared_experts && x.shared > 0) {
      seconds += forward_gemms[kSharedIn] + forward_gemms[kSharedOut] + shared_activation_kernel(x, profile, false) +
                 forward.collective / 2;
    }
  } else if (modules.mlp) {
    seconds += forward_gemms[2] + forward_gemms[3] + mlp_activation_kernels(x, profile, false) + forward.collective / 2;
  }
  if (modules.mla_up_proj && x.kv_latent > 0) {
    seconds += forward_gemms[0] + forward_gemms[kKvUp] + (x.rotary ? mla_rotary_kernel(x, profile) : 0);
  }
  return seconds;
}

// One token's attention tensors on this rank: GQA's keys and values are kv_heads wide, MLA's keys as
// wide as its queries (nope + rope per head) and its values v_head_dim per head.
AttentionWidths attention_widths(const LayerShape& x) {
  const bool mla = x.kv_latent > 0;
  return {.queries = x.queries / x.t,
          .keys = (mla ? x.queries : x.kv) / x.t,
          .values = (mla ? x.values : x.kv) / x.t,
          .output = x.values / x.t};
}

}  // namespace

PassTime& PassTime::operator+=(const PassTime& other) {
  gemm += other.gemm;
  attention += other.attention;
  memory += other.memory;
  collective += other.collective;
  recompute += other.recompute;
  dispatch += other.dispatch;
  experts += other.experts;
  return *this;
}

double PassTimes::of(Op op) const {
  switch (op) {
    case Op::kForward:
      return forward.total();
    case Op::kBackward:
      return input_grad.total() + weight_grad.total();
    case Op::kBackwardInput:
      return input_grad.total();
    case Op::kBackwardWeight:
      return weight_grad.total();
  }
  return 0;
}

PassTimes& PassTimes::operator+=(const PassTimes& other) {
  forward += other.forward;
  input_grad += other.input_grad;
  weight_grad += other.weight_grad;
  return *this;
}

PassTimes PassTimes::scaled(double factor) const {
  auto scale = [factor](PassTime pass) {
    pass.gemm *= factor;
    pass.attention *= factor;
    pass.memory *= factor;
    pass.collective *= factor;
    pass.recompute *= factor;
    pass.dispatch *= factor;
    pass.experts *= factor;
    return pass;
  };
  return PassTimes{scale(forward), scale(input_grad), scale(weight_grad)};
}

double ring_collective_time(const HardwareProfile& profile, double bytes, int ranks, int phases, bool inter_node,
                            int ranks_per_node) {
  if (ranks <= 1 || bytes <= 0) return 0;
  const double chunk = bytes / ranks;
  const double nics = std::clamp(ranks_per_node, 1, std::max(1, profile.devices_per_node));
  const double bandwidth = inter_node ? std::min(profile.intra_node_bandwidth, nics * profile.inter_node_bandwidth)
                                      : profile.intra_node_bandwidth;
  const double latency = inter_node ? profile.inter_node_latency : profile.intra_node_latency;
  const double efficiency = (inter_node ? profile.inter_link : profile.intra_link).at(bytes);
  const double steps = static_cast<double>(phases) * (ranks - 1);
  return steps * (latency + chunk / (bandwidth * efficiency));
}

double nvls_all_reduce_time(const HardwareProfile& profile, double bytes, int ranks) {
  if (!(profile.nvls_bus_bandwidth > 0) || ranks < profile.nvls_min_ranks || ranks <= 1 || !(bytes > 0)) {
    return std::numeric_limits<double>::infinity();
  }
  // The published bus bandwidth is a large message's; smaller ones ramp up as the ring's link table
  // does (the same NVLink, the same protocols below a few MiB).
  const std::span<const EfficiencyPoint> link = profile.intra_link.points();
  const double ramp = link.empty() ? 1.0 : profile.intra_link.at(bytes) / link.back().fraction;
  const double bus_bytes = bytes * 2.0 * (ranks - 1) / ranks;
  return 2 * profile.intra_node_latency + bus_bytes / (profile.nvls_bus_bandwidth * ramp);
}

double all_to_all_time(const HardwareProfile& profile, double bytes, int ranks, bool inter_node, int ranks_per_node) {
  if (ranks <= 1 || !(bytes > 0)) return 0;
  const double n = ranks;
  const double local = std::clamp(inter_node ? ranks_per_node : ranks, 1, ranks);
  // Inside the node every pair exchanges at once through the NVSwitch; across nodes each GPU's share
  // for the other nodes leaves through its own NIC.
  const double nvlink = bytes * (local - 1) / n / (profile.intra_node_bandwidth * profile.intra_link.at(bytes));
  if (!inter_node) return profile.intra_node_latency + nvlink;
  const double nic =
      bytes * (n - local) / n / (profile.inter_node_bandwidth * profile.inter_link.at(bytes * (n - local) / n));
  return profile.inter_node_latency + std::max(nvlink, nic);
}

double collective_time(const HardwareProfile& profile, Collective op, double bytes, int ranks, bool inter_node,
                       int ranks_per_node) {
  if (ranks <= 1 || !(bytes > 0)) return 0;
  if (!inter_node) {
    if (const CollectiveTable* measured = profile.collective_table(op, ranks)) return measured->time(bytes);
  }
  if (op == Collective::kAllToAll) return all_to_all_time(profile, bytes, ranks, inter_node, ranks_per_node);
  const double ring = ring_collective_time(profile, bytes, ranks, op == Collective::kAllReduce ? 2 : 1, inter_node,
                                           ranks_per_node);
  // NCCL runs whichever algorithm its cost model finds faster (src/graph/tuning.cc); inside a node
  // with NVLink SHARP that is NVLS for large all-reduces.
  if (op == Collective::kAllReduce && !inter_node) return std::min(ring, nvls_all_reduce_time(profile, bytes, ranks));
  return ring;
}

int tensor_parallel_ranks_per_node(const HardwareProfile& profile, const TrainingLayout& layout) {
  return std::min(layout.tensor_parallel, profile.devices_per_node);
}

bool tensor_parallel_crosses_nodes(const HardwareProfile& profile, const TrainingLayout& layout) {
  return layout.tensor_parallel > profile.devices_per_node;
}

namespace {

// Sequence parallelism saves only the sequence-sharded input of the QKV and MLP-in linears; their
// weight gradients need it whole, so the backward all-gathers it again
// (megatron/core/tensor_parallel/layers.py, LinearWithGradAccumulationAndAsyncCommunication.backward),
// issued asynchronously beside the same linear's input-gradient GEMM: only what that GEMM does not
// cover is paid.
double sequence_parallel_backward_gathers(const LayerShape& x, const HardwareProfile& profile,
                                          const TrainingLayout& layout, const std::array<double, kLinears>& dgrads) {
  if (!x.sequence_parallel || layout.tensor_parallel <= 1) return 0;
  const double gather = collective_time(profile, Collective::kAllGather, x.tokens * x.hidden * kActivationBytes,
                                        layout.tensor_parallel, tensor_parallel_crosses_nodes(profile, layout),
                                        tensor_parallel_ranks_per_node(profile, layout));
  // The QKV and MLP-in input-gradient GEMMs hide the gathers; an MoE layer's routed experts need
  // none, its shared experts one, hidden by their own.
  const double mlp = x.moe ? (x.shared > 0 ? std::max(0.0, gather - dgrads[kSharedIn]) : 0)
                           : std::max(0.0, gather - dgrads[2]);
  return std::max(0.0, gather - dgrads[0]) + mlp;
}

}  // namespace

PassTimes layer_pass_times(const Architecture& arch, const TrainingLayout& layout, const HardwareProfile& profile,
                           bool moe, bool windowed) {
  const LayerShape x = shape_of(arch, layout, moe, windowed);
  const std::string_view router_precision = non_linear_precision(layout);
  PassTimes times;
  // Each pass's four linear GEMMs, timed once: their sum and the collectives they hide use them.
  const std::array<double, kLinears> forward_gemms = linear_times(x, profile, layout, Pass::kForward);
  const std::array<double, kLinears> input_grad_gemms = linear_times(x, profile, layout, Pass::kInputGrad);
  times.forward.gemm = sum(forward_gemms) + router_time(x, profile, router_precision, Pass::kForward);
  times.forward.attention = attention_forward(x, profile, layout);
  times.forward.memory = layer_memory_kernels(x, profile, false) + softmax_forward(x, profile) +
                         attention_dropout(x, profile) + fp8_casts(x, profile, layout, false) +
                         routing_kernels(x, profile, false);
  times.forward.collective = layer_collectives(x, profile, layout, false, forward_gemms);
  times.forward.dispatch = expert_dispatch(x, profile);

  times.input_grad.gemm = sum(input_grad_gemms) + router_time(x, profile, router_precision, Pass::kInputGrad);
  times.input_grad.attention = attention_backward(x, profile, layout);
  times.input_grad.memory =
      layer_memory_kernels(x, profile, true) + softmax_backward(x, profile) + attention_dropout(x, profile) +
      fp8_casts(x, profile, layout, true) + routing_kernels(x, profile, true);
  times.input_grad.collective = layer_collectives(x, profile, layout, true, input_grad_gemms) +
                                sequence_parallel_backward_gathers(x, profile, layout, input_grad_gemms);
  times.input_grad.dispatch = expert_dispatch(x, profile);

  const std::array<double, kLinears> weight_grad_gemms = linear_times(x, profile, layout, Pass::kWeightGrad);
  times.weight_grad.gemm = sum(weight_grad_gemms) + router_time(x, profile, router_precision, Pass::kWeightGrad);
  if (moe) {
    // The expert side: the MLP linears (routed, then shared) and their activation function.
    auto experts = [](const std::array<double, kLinears>& gemms) { return gemms[2] + gemms[3] + gemms[4] + gemms[5]; };
    times.forward.experts = experts(forward_gemms) + mlp_activation_kernels(x, profile, false);
    times.input_grad.experts = experts(input_grad_gemms) + mlp_activation_kernels(x, profile, true);
    times.weight_grad.experts = experts(weight_grad_gemms);
  }

  switch (layout.recompute) {
    case Recompute::kNone:
      break;
    case Recompute::kSelective:
      times.input_grad.recompute = selective_recompute(x, profile, layout, times.forward, forward_gemms);
      break;
    case Recompute::kFull:
      times.input_grad.recompute = times.forward.total();
      break;
  }

  // Context parallelism's exchange of keys and values, beyond the attention compute it runs beside
  // (context_parallel.hpp); a recomputed attention core (selective's core_attn, or the whole layer)
  // exchanges them again.
  const ContextParallelTimes context =
      context_parallel_times(profile, layout, x.tokens, attention_widths(x), times.forward.attention,
                             times.input_grad.attention);
  times.forward.collective += context.forward;
  times.input_grad.collective += context.backward;
  const bool attention_again = layout.recompute == Recompute::kFull ||
                               (layout.recompute == Recompute::kSelective && layout.recompute_modules.core_attn);
  if (attention_again) times.input_grad.recompute += context.forward;
  return times;
}

PassTimes embedding_pass_times(const Architecture& arch, const TrainingLayout& layout, const HardwareProfile& profile) {
  const LayerShape x = shape_of(arch, layout);
  const double full = x.tokens * x.hidden * kActivationBytes;
  PassTimes times;
  // Vocabulary-parallel lookup: each rank gathers the rows it owns into a full T x h output (read
  // and write), then the ranks sum their outputs (a reduce-scatter under sequence parallelism).
  // Learned positions add one more read-read-write pass.
  times.forward.memory = profile.memory_time(2 * full) + (arch.learned_positions > 0 ? profile.memory_time(3 * full) : 0);
  if (layout.tensor_parallel > 1) {
    times.forward.collective =
        collective_time(profile, x.sequence_parallel ? Collective::kReduceScatter : Collective::kAllReduce, full,
                        layout.tensor_parallel, tensor_parallel_crosses_nodes(profile, layout),
                                        tensor_parallel_ranks_per_node(profile, layout));
  }
  // No input gradient to send; the weight gradient scatter-adds dY into the table's rows.
  times.weight_grad.memory = profile.memory_time(3 * full);
  return times;
}

MtpProjection mtp_projection(const Architecture& arch, const TrainingLayout& layout, const HardwareProfile& profile) {
  const LayerShape x = shape_of(arch, layout);
  const double r = x.replicated * kActivationBytes;  // one T x h tensor, sequence-sharded under SP
  MtpProjection out;
  // Two norms (read, write; the backward reads two and writes one), the concatenation (read both,
  // write), and the projection: T x 2h x h/t, transposed in I and W.
  out.times.forward.memory = 2 * profile.memory_time(2 * r) + profile.memory_time(4 * r);
  out.times.input_grad.memory = 2 * profile.memory_time(3 * r) + profile.memory_time(4 * r);
  const double inner = 2 * x.hidden;
  const double cols = x.hidden / x.t;
  out.times.forward.gemm = profile.gemm_time(linear_shape(x.tokens, inner, cols, Pass::kForward), layout.precision);
  out.times.input_grad.gemm = profile.gemm_time(linear_shape(x.tokens, inner, cols, Pass::kInputGrad), layout.precision);
  out.times.weight_grad.gemm =
      profile.gemm_time(linear_shape(x.tokens, inner, cols, Pass::kWeightGrad), layout.precision);
  const double input = 2 * x.tokens * x.hidden * kActivationBytes;  // the gathered 2h-wide input
  out.stash = 2 * r + input;
  out.weight_stash = input + x.tokens * cols * kActivationBytes;
  return out;
}

PassTimes lm_head_pass_times(const Architecture& arch, const TrainingLayout& layout, const HardwareProfile& profile) {
  const LayerShape x = shape_of(arch, layout);
  const double vocab = as_double(arch.vocab);
  const double logits = x.tokens * vocab / x.t;  // elements of this rank's logits
  const double r = x.replicated * kActivationBytes;
  const bool inter = tensor_parallel_crosses_nodes(profile, layout);
  const int per_node = tensor_parallel_ranks_per_node(profile, layout);
  PassTimes times;
  // Final norm, then the logits GEMM T x h x V/t; its I and W run the same FLOPs.
  times.forward.memory = profile.memory_time(2 * r);
  times.input_grad.memory = profile.memory_time(3 * r);
  const std::string_view precision = non_linear_precision(layout);
  times.forward.gemm = profile.gemm_time(linear_shape(x.tokens, x.hidden, vocab / x.t, Pass::kForward), precision);
  times.input_grad.gemm =
      profile.gemm_time(linear_shape(x.tokens, x.hidden, vocab / x.t, Pass::kInputGrad), precision);
  times.weight_grad.gemm =
      profile.gemm_time(linear_shape(x.tokens, x.hidden, vocab / x.t, Pass::kWeightGrad), precision);
  // Vocabulary-parallel cross-entropy (Megatron): read the bf16 logits, write and re-read an fp32
  // copy for the max and the exponentials, keep the fp32 softmax for the backward (2+4+4+4 bytes per
  // logit); the backward reads it and writes the bf16 gradient (4+2). Three all-reduces of T floats
  // (max, sum, target logit) are latency-bound and counted as such.
  times.forward.memory += profile.memory_time(14 * logits);
  times.input_grad.memory += profile.memory_time(6 * logits);
  if (layout.tensor_parallel > 1) {
    times.forward.collective =
        3 * collective_time(profile, Collective::kAllReduce, 4 * x.tokens, layout.tensor_parallel, inter, per_node);
    // Sequence parallelism gathers the final norm's output before the head and scatters its
    // gradient after; without it the input gradient is all-reduced (the f operator's conjugate).
    const double full = x.tokens * x.hidden * kActivationBytes;
    times.forward.collective +=
        x.sequence_parallel ? collective_time(profile, Collective::kAllGather, full, layout.tensor_parallel, inter, per_node)
                            : 0;
    times.input_grad.collective =
        collective_time(profile, x.sequence_parallel ? Collective::kReduceScatter : Collective::kAllReduce, full,
                        layout.tensor_parallel, inter, per_node);
  }
  return times;
}

const char* recompute_name(Recompute recompute) {
  switch (recompute) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "none";
}

double context_parallel_buffer_bytes(const Architecture& arch, const TrainingLayout& layout,
                                     const HardwareProfile& profile) {
  if (layout.context_parallel <= 1) return 0;
  // Every layer's attention has the same widths (a window changes only which keys meet).
  const LayerShape x = shape_of(arch, layout);
  return context_parallel_times(profile, layout, x.tokens, attention_widths(x), 0, 0).buffer_bytes;
}

}  // namespace ppsim
