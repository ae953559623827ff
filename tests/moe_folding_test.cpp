// SPDX-License-Identifier: Apache-2.0
// Shared experts and expert tensor parallelism (Megatron's MoE parallel folding), by hand on the ideal
// machine: every GEMM is its FLOPs over the peak, every memory-bound kernel its bytes over the HBM
// bandwidth, every collective its bytes over the link.
#include <catch2/catch.hpp>

#include "models/transformer/layer_costs.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/stage_plan.hpp"
#include "models/transformer/static_memory.hpp"
#include "support/ideal_machine.hpp"

using Catch::Matchers::WithinRel;
using ppsim::Architecture;
using ppsim::TrainingLayout;
using ppsim::test::kHbm;
using ppsim::test::kNvlink;
using ppsim::test::kPeak;

namespace {

constexpr double kTokens = 2048;
constexpr double kHidden = 1024;
constexpr double kSharedWidth = 512;  // two shared experts of 256

// Four experts of width 512, two per token, SwiGLU, no dropout, no biases; h = 1024, 8 heads.
Architecture routed_only() {
  Architecture arch = ppsim::test::swiglu("moe-test");
  arch.moe = {.experts = 4, .top_k = 2, .expert_ffn_hidden = 512};
  return arch;
}

Architecture with_shared() {
  Architecture arch = routed_only();
  arch.moe.shared_experts = 2;
  arch.moe.shared_expert_ffn_hidden = 256;
  return arch;
}

TrainingLayout layout() {
  TrainingLayout l;
  l.seq = 2048;
  l.flash_attention = true;
  return l;
}

}  // namespace

TEST_CASE("Shared experts add a dense MLP of their total width to an MoE layer's parameters, FLOPs and time") {
  const Architecture shared = with_shared();
  const Architecture routed = routed_only();
  CHECK(ppsim::shared_expert_width(shared) == 512);
  CHECK(ppsim::moe_layer_parameter_count(shared) - ppsim::moe_layer_parameter_count(routed) ==
        3 * 1024 * 512);
  // Every token goes through them: gate and up (h x 2w), down (w x h), 2 FLOPs a multiply-add.
  const double gemm = 2 * kTokens * 3 * kHidden * kSharedWidth;
  const ppsim::LayerFlops with = ppsim::layer_flops(shared, 2048, 1, true);
  const ppsim::LayerFlops without = ppsim::layer_flops(routed, 2048, 1, true);
  CHECK(with.forward - without.forward == gemm);
  CHECK(with.weight_grad - without.weight_grad == gemm);
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::PassTimes a = ppsim::layer_pass_times(shared, layout(), machine, true);
  const ppsim::PassTimes b = ppsim::layer_pass_times(routed, layout(), machine, true);
  CHECK_THAT(a.forward.gemm - b.forward.gemm, WithinRel(gemm / kPeak, 1e-9));
  CHECK_THAT(a.weight_grad.gemm - b.weight_grad.gemm, WithinRel(gemm / kPeak, 1e-9));
  // SwiGLU over every token at the shared width: read gate and up, write the product (3 x 2 bytes);
  // the backward reads three and writes two.
  CHECK_THAT(a.forward.memory - b.forward.memory, WithinRel(3 * 2 * kTokens * kSharedWidth / kHbm, 1e-9));
  CHECK_THAT(a.input_grad.memory - b.input_grad.memory, WithinRel(5 * 2 * kTokens * kSharedWidth / kHbm, 1e-9));
  // They run between dispatch and combine, with the routed experts.
  CHECK_THAT(a.forward.experts - b.forward.experts,
             WithinRel(gemm / kPeak + 3 * 2 * kTokens * kSharedWidth / kHbm, 1e-9));
}

TEST_CASE("Shared experts stash a dense MLP's tensors and, under sequence parallelism, gather and scatter as one") {
  const Architecture shared = with_shared();
  const Architecture routed = routed_only();
  // t = 1: the first GEMM's input (2h), gate and up outputs (2w + 2w), the down GEMM's input (2w).
  const ppsim::ActivationLayout one = layout().activation_layout();
  CHECK(ppsim::activation_bytes_per_layer(shared, one, true) - ppsim::activation_bytes_per_layer(routed, one, true) ==
        kTokens * (2 * kHidden + 6 * kSharedWidth));
  // W keeps the two GEMMs' inputs and output gradients: h + w in, h + 2w out, 2 bytes each.
  CHECK(ppsim::weight_grad_bytes_per_layer(shared, one, true) - ppsim::weight_grad_bytes_per_layer(routed, one, true) ==
        kTokens * 2 * (2 * kHidden + 3 * kSharedWidth));
  // t = 2 with sequence parallelism: one more all-gather and reduce-scatter of T x h in F, as a dense MLP has.
  TrainingLayout l = layout();
  l.tensor_parallel = 2;
  l.sequence_parallel = true;
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::PassTimes a = ppsim::layer_pass_times(shared, l, machine, true);
  const ppsim::PassTimes b = ppsim::layer_pass_times(routed, l, machine, true);
  const double half = kTokens * kHidden * 2 / 2 / kNvlink;  // one ring step of half the tensor
  CHECK_THAT(a.forward.collective - b.forward.collective, WithinRel(2 * half, 1e-9));
}

TEST_CASE("Expert tensor parallelism splits each expert over its ranks, which gather each other's copies") {
  const Architecture arch = routed_only();
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  TrainingLayout l = layout();
  l.data_parallel = 4;
  l.expert_parallel = 2;
  const ppsim::PassTimes whole = ppsim::layer_pass_times(arch, l, machine, true);
  CHECK(ppsim::expert_data_parallel(l) == 2);
  l.expert_tensor_parallel = 2;
  const ppsim::PassTimes split = ppsim::layer_pass_times(arch, l, machine, true);
  CHECK(ppsim::expert_model_shards(l) == 4);
  CHECK(ppsim::expert_data_parallel(l) == 1);
  // Twice the copies at half the width: the same FLOPs, so the same time on the ideal machine.
  CHECK_THAT(split.forward.gemm, WithinRel(whole.forward.gemm, 1e-12));
  CHECK_THAT(split.weight_grad.gemm, WithinRel(whole.weight_grad.gemm, 1e-12));
  // The all-to-all is unchanged; the two ranks then all-gather their received copies (T x top_k each,
  // 2 T top_k gathered) and reduce-scatter the outputs: one ring step of half the gathered tensor each.
  const double gathered = 2 * kTokens * 2 * kHidden * 2;
  CHECK_THAT(split.forward.dispatch - whole.forward.dispatch, WithinRel(2 * (gathered / 2) / kNvlink, 1e-9));
  CHECK_THAT(split.input_grad.dispatch - whole.input_grad.dispatch, WithinRel(2 * (gathered / 2) / kNvlink, 1e-9));
  // The first expert GEMM keeps its gathered input: twice the copies at full width (2h each).
  ppsim::ActivationLayout a = l.activation_layout();
  const double split_stash = ppsim::activation_bytes_per_layer(arch, a, true);
  a.expert_tensor_parallel = 1;
  CHECK(split_stash - ppsim::activation_bytes_per_layer(arch, a, true) == kTokens * 2 * 2 * kHidden);
  // Each rank holds experts / e of them, each a half: a quarter of the routed weights.
  const ppsim::StageContents stage{.first_layer = 0, .layers = 4};
  CHECK(ppsim::stage_expert_parameter_count(arch, stage, ppsim::expert_model_shards(l)) ==
        4.0 * static_cast<double>(ppsim::expert_parameter_count(arch)) / 4);
  CHECK(ppsim::layer_linear_weight_count(arch, true, 1, 2, 2) == 4.0 * kHidden * kHidden + 2.0 * 3 * kHidden * 512 / 2);
}
