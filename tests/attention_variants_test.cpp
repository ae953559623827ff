// SPDX-License-Identifier: Apache-2.0
// Attention beyond grouped-query heads, by hand on the ideal machine: DeepSeek's multi-head latent
// attention, sliding windows, multi-token prediction, and what --recompute-modules drops and re-runs.
#include <catch2/catch.hpp>

#include "models/transformer/layer_costs.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/static_memory.hpp"
#include "models/transformer/stage_plan.hpp"
#include "models/transformer/transformer_cost_model.hpp"
#include "support/ideal_machine.hpp"

using Catch::Matchers::WithinRel;
using ppsim::Architecture;
using ppsim::TrainingLayout;
using ppsim::test::kHbm;
using ppsim::test::kPeak;

namespace {

constexpr double kTokens = 2048;

// A small dense model: h = 1024, 8 heads, SwiGLU 2048, RMSNorm, untied, no biases.
Architecture dense() { return ppsim::test::swiglu("attention-test"); }

// The same with MLA: queries through a 256 latent, keys and values from a 128 latent and a 32-wide
// rope key, heads of 64 + 32 for queries and keys and 64 for values.
Architecture latent() {
  Architecture arch = dense();
  arch.mla = {.q_lora_rank = 256, .kv_lora_rank = 128, .qk_nope_head_dim = 64, .qk_rope_head_dim = 32,
              .v_head_dim = 64};
  return arch;
}

TrainingLayout layout() {
  TrainingLayout l;
  l.seq = 2048;
  l.flash_attention = true;
  return l;
}

}  // namespace

TEST_CASE("MLA's projections, parameters and attention products follow DeepSeek's shapes") {
  const Architecture arch = latent();
  // q down 1024 x 256, q up 256 x 8 x 96, kv down 1024 x (128 + 32), kv up 128 x 8 x (64 + 64), O 512 x 1024.
  const std::int64_t weights = 1024 * 256 + 256 * 768 + 1024 * 160 + 128 * 1024 + 512 * 1024;
  CHECK(ppsim::attention_weight_count(arch) == weights);
  CHECK(ppsim::layer_parameter_count(arch) == weights + 256 + 128 + 3 * 1024 * 2048 + 2 * 1024);
  CHECK(ppsim::head_size(arch) == 96);
  CHECK(ppsim::value_width(arch) == 512);
  // Scores over the queries' 768, context over the values' 512: 2 s (768 + 512) per token in F.
  const ppsim::LayerFlops flops = ppsim::layer_flops(arch, 2048, 1);
  const double gemm = 2 * kTokens * (static_cast<double>(weights) + 3 * 1024 * 2048);
  CHECK(flops.forward == gemm + 2 * kTokens * 2048 * (768 + 512));
  CHECK(flops.input_grad == gemm + 4 * kTokens * 2048 * (768 + 512));
  // The ideal machine runs the five projections at the peak.
  const ppsim::PassTimes times = ppsim::layer_pass_times(arch, layout(), ppsim::test::ideal_machine());
  CHECK_THAT(times.forward.gemm, WithinRel(gemm / kPeak, 1e-9));
  CHECK_THAT(times.weight_grad.gemm, WithinRel(gemm / kPeak, 1e-9));
}

TEST_CASE("A sliding window's layer meets 2w - w^2/s keys a query, the band of its causal square") {
  CHECK(ppsim::attention_keys(2048, 0) == 2048);
  CHECK(ppsim::attention_keys(2048, 4096) == 2048);
  CHECK(ppsim::attention_keys(2048, 128) == (2.0 * 128 * 2048 - 128.0 * 128) / 2048);
  Architecture arch = dense();
  arch.sliding_window = 128;
  arch.window_skip_freq = 2;  // layers 0 and 2 windowed, 1 and 3 full
  CHECK(ppsim::layer_kinds(arch, 0, 4).windowed() == 2);
  const ppsim::LayerFlops full = ppsim::layer_flops(arch, 2048, 1, false, false);
  const ppsim::LayerFlops band = ppsim::layer_flops(arch, 2048, 1, false, true);
  const double keys = ppsim::attention_keys(2048, 128);
  CHECK(full.forward - band.forward == 4 * kTokens * (2048 - keys) * 1024);
  CHECK(full.weight_grad == band.weight_grad);
  // Two of each kind in the step.
  const double step = ppsim::step_flops(arch, 2048, 1, false);
  Architecture unwindowed = dense();
  CHECK(ppsim::step_flops(unwindowed, 2048, 1, false) - step ==
        2 * ((full.forward + full.input_grad) - (band.forward + band.input_grad)));
}

TEST_CASE("An MTP module adds its projection, a layer and the head's pass to the last stage") {
  Architecture arch = dense();
  arch.mtp_layers = 1;
  // Its own parameters: the 2h x h projection, two norms and one layer; the model's count excludes it.
  CHECK(ppsim::mtp_parameter_count(arch) == 2 * 1024 * 1024 + 2 * 1024 + ppsim::layer_parameter_count(arch));
  Architecture without = dense();
  CHECK(ppsim::parameter_count(arch) == ppsim::parameter_count(without));
  TrainingLayout l = layout();
  l.pipeline = 2;
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::TransformerCostModel with_mtp({arch, l, machine}, {0, 1});
  const ppsim::TransformerCostModel plain({without, l, machine}, {0, 1});
  // The first stage is untouched; the last runs the module: projection T x 2h x h in each pass, the
  // layer, the embedding lookup and the LM head again.
  CHECK(with_mtp.compute_time(ppsim::Op::kForward, 0) == plain.compute_time(ppsim::Op::kForward, 0));
  const ppsim::PassTimes layer = ppsim::layer_pass_times(arch, l, machine);
  const ppsim::PassTimes head = ppsim::lm_head_pass_times(arch, l, machine);
  const ppsim::PassTimes embedding = ppsim::embedding_pass_times(arch, l, machine);
  const ppsim::MtpProjection projection = ppsim::mtp_projection(arch, l, machine);
  CHECK_THAT(projection.times.forward.gemm, WithinRel(2 * kTokens * 2048 * 1024 / kPeak, 1e-9));
  CHECK_THAT(with_mtp.compute_time(ppsim::Op::kForward, 1) - plain.compute_time(ppsim::Op::kForward, 1),
             WithinRel(layer.forward.total() + projection.times.forward.total() + embedding.forward.total() +
                           head.forward.total(),
                       1e-9));
  // Its parameters sit on the last stage.
  CHECK(with_mtp.static_memory()[1].parameter_count - plain.static_memory()[1].parameter_count ==
        static_cast<double>(ppsim::mtp_parameter_count(arch)));
  // The step's FLOPs: the projection's three passes, the layer's and the head's.
  const ppsim::LayerFlops one = ppsim::layer_flops(arch, 2048, 1);
  const ppsim::LayerFlops logits = ppsim::lm_head_flops(arch, 2048, 1);
  CHECK_THAT(ppsim::step_flops(arch, 2048, 1, false) - ppsim::step_flops(without, 2048, 1, false),
             WithinRel(3 * 2 * kTokens * 2048 * 1024 + one.forward + one.input_grad + one.weight_grad +
                           logits.forward + logits.input_grad + logits.weight_grad,
                       1e-12));
}

TEST_CASE("Recomputing the norms drops their outputs from the stash and re-runs them in I") {
  const Architecture arch = dense();
  TrainingLayout l = layout();
  l.recompute = ppsim::Recompute::kSelective;
  l.recompute_modules = {.core_attn = false, .layernorm = true};
  const ppsim::ActivationLayout a = l.activation_layout();
  const double kept = ppsim::activation_bytes_per_layer(arch, layout().activation_layout());
  // The QKV and MLP-in inputs, 2h bytes a token each.
  CHECK(kept - ppsim::activation_bytes_per_layer(arch, a) == kTokens * 2 * 2 * 1024);
  const ppsim::PassTimes times = ppsim::layer_pass_times(arch, l, ppsim::test::ideal_machine());
  // Two norms' forward: read and write T x h, 2 bytes each.
  CHECK_THAT(times.input_grad.recompute, WithinRel(2 * 2 * kTokens * 1024 * 2 / kHbm, 1e-9));
}

TEST_CASE("Recomputing the experts' activation drops each routed copy's down-projection input") {
  Architecture arch = dense();
  arch.moe = {.experts = 4, .top_k = 2, .expert_ffn_hidden = 512};
  TrainingLayout l = layout();
  l.recompute = ppsim::Recompute::kSelective;
  l.recompute_modules = {.core_attn = false, .moe_act = true};
  const double kept = ppsim::activation_bytes_per_layer(arch, layout().activation_layout(), true);
  // Two copies a token, each 512 wide, 2 bytes.
  CHECK(kept - ppsim::activation_bytes_per_layer(arch, l.activation_layout(), true) == kTokens * 2 * 512 * 2);
  const ppsim::PassTimes times = ppsim::layer_pass_times(arch, l, ppsim::test::ideal_machine(), true);
  // SwiGLU re-run over the copies: read gate and up, write the product.
  CHECK_THAT(times.input_grad.recompute, WithinRel(3 * kTokens * 2 * 512 * 2 / kHbm, 1e-9));
  // A dense layer has no experts' activation to re-run.
  CHECK(ppsim::layer_pass_times(arch, l, ppsim::test::ideal_machine(), false).input_grad.recompute == 0);
}

TEST_CASE("Recomputing a dense layer's MLP keeps only its input and re-runs its GEMMs and activation in I") {
  const Architecture arch = dense();
  TrainingLayout l = layout();
  l.recompute = ppsim::Recompute::kSelective;
  l.recompute_modules = {.core_attn = false, .mlp = true};
  const double kept = ppsim::activation_bytes_per_layer(arch, layout().activation_layout());
  // Gate and up outputs and the down projection's input, 2 bytes each of 2048; the first GEMM's input
  // gives way to the checkpoint's, the same 2h.
  CHECK(kept - ppsim::activation_bytes_per_layer(arch, l.activation_layout()) == kTokens * 3 * 2048 * 2);
  const ppsim::PassTimes times = ppsim::layer_pass_times(arch, l, ppsim::test::ideal_machine());
  // Gate and up (h x 2f) and down (f x h) at the peak; SwiGLU reads gate and up and writes their product.
  CHECK_THAT(times.input_grad.recompute,
             WithinRel(2 * kTokens * 1024 * 3 * 2048 / kPeak + 3 * kTokens * 2048 * 2 / kHbm, 1e-9));
  // An MoE layer has no dense MLP to re-run.
  Architecture moe = dense();
  moe.moe = {.experts = 4, .top_k = 2, .expert_ffn_hidden = 512};
  CHECK(ppsim::layer_pass_times(moe, l, ppsim::test::ideal_machine(), true).input_grad.recompute == 0);
}

TEST_CASE("Recomputing an MoE layer whole keeps only its input and runs its all-to-alls again") {
  Architecture arch = dense();
  arch.moe = {.experts = 4, .top_k = 2, .expert_ffn_hidden = 512};
  TrainingLayout l = layout();
  l.recompute = ppsim::Recompute::kSelective;
  l.recompute_modules = {.core_attn = false, .moe = true};
  const double kept = ppsim::activation_bytes_per_layer(arch, layout().activation_layout(), true);
  // Per token: the router's fp32 probabilities over 4 experts; per routed copy (2) its input, gate
  // and up outputs and down input (2048 + 2048 + 1024 bytes), and per own copy the output it gets
  // back with its weight (2048 + 4). The router's input gives way to the checkpoint's, the same 2h.
  CHECK(kept - ppsim::activation_bytes_per_layer(arch, l.activation_layout(), true) ==
        kTokens * (4 * 4 + 2 * (2048 + 2048 + 1024) + 2 * (2048 + 4)));
  // The re-run holds the layer's dispatch and combine: with two expert-parallel ranks it grows by
  // exactly the forward's token exchange (each rank's experts see as many copies either way).
  l.data_parallel = 2;
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::PassTimes local = ppsim::layer_pass_times(arch, l, machine, true);
  l.expert_parallel = 2;
  const ppsim::PassTimes spread = ppsim::layer_pass_times(arch, l, machine, true);
  REQUIRE(spread.forward.dispatch > 0);
  CHECK_THAT(spread.input_grad.recompute - local.input_grad.recompute, WithinRel(spread.forward.dispatch, 1e-9));
  CHECK(local.input_grad.recompute > local.forward.experts);  // the router and the experts, not the attention
  CHECK(local.input_grad.recompute < local.forward.total() - local.forward.attention);
}

TEST_CASE("Recomputing MLA's up projections drops Q, K and V and re-runs the projections and the rotary embedding") {
  const Architecture arch = latent();
  TrainingLayout l = layout();
  l.recompute = ppsim::Recompute::kSelective;
  l.recompute_modules = {.core_attn = false, .mla_up_proj = true};
  const double kept = ppsim::activation_bytes_per_layer(arch, layout().activation_layout());
  // Queries and keys 8 x 96 wide, values 8 x 64, 2 bytes each.
  CHECK(kept - ppsim::activation_bytes_per_layer(arch, l.activation_layout()) == kTokens * (768 + 768 + 512) * 2);
  const ppsim::PassTimes times = ppsim::layer_pass_times(arch, l, ppsim::test::ideal_machine());
  // q up 256 x 768 and kv up 128 x 8 (64 + 64) at the peak; the rope of 8 query heads' 32 and the
  // one 32-wide key, read and written.
  CHECK_THAT(times.input_grad.recompute,
             WithinRel(2 * kTokens * (256 * 768 + 128 * 1024) / kPeak + 2 * kTokens * (8 * 32 + 32) * 2 / kHbm, 1e-9));
}
