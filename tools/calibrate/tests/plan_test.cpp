// SPDX-License-Identifier: Apache-2.0
// The shape planner: the GEMMs it plans for a model are the ones whose FLOPs layer_costs counts, on
// one tensor-parallel rank, in the F / I / W layouts; bad layouts are refused; the sweeps grow.
#include "tools/calibrate/plan.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "models/transformer/architecture.hpp"
#include "models/transformer/layer_costs.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;
using ppsim::Architecture;
using ppsim::calibrate::LayerLayout;
using ppsim::calibrate::Pass;
using ppsim::calibrate::PlannedGemm;

namespace {

struct PassSums {
  double weights = 0;    // linear layers
  double attention = 0;  // per-head products
};

std::map<Pass, PassSums> sum_by_pass(const std::vector<PlannedGemm>& gemms) {
  std::map<Pass, PassSums> sums;
  for (const PlannedGemm& g : gemms) (g.attention ? sums[g.pass].attention : sums[g.pass].weights) += g.shape.flops();
  return sums;
}

}  // namespace

TEST_CASE("The planned GEMMs of a preset's layer add up to its FLOPs on one tensor-parallel rank") {
  const Architecture arch =
      GENERATE(from_range(ppsim::architecture_presets().begin(), ppsim::architecture_presets().end()));
  const int t = GENERATE(1, 2, 4, 8);
  const LayerLayout layout{.seq = 2048, .micro_batch = 2, .tensor_parallel = t};
  INFO(arch.name << " t=" << t);
  if (!ppsim::calibrate::check_layout(arch, layout).empty()) return;  // a split this model does not allow

  const auto sums = sum_by_pass(ppsim::calibrate::plan_layer_gemms(arch, layout));
  const ppsim::LayerFlops flops = ppsim::layer_flops(arch, layout.seq, layout.micro_batch);
  // layer_costs.hpp: attention products are 4 s^2 h per sequence in F, twice that in I, none in W.
  const double attention_forward =
      4.0 * static_cast<double>(layout.seq * layout.seq * layout.micro_batch) * static_cast<double>(arch.hidden);
  CHECK_THAT(sums.at(Pass::kForward).weights, WithinRel((flops.forward - attention_forward) / t, 1e-12));
  CHECK_THAT(sums.at(Pass::kForward).attention, WithinRel(attention_forward / t, 1e-12));
  CHECK_THAT(sums.at(Pass::kForward).weights + sums.at(Pass::kForward).attention, WithinRel(flops.forward / t, 1e-12));
  CHECK_THAT(sums.at(Pass::kInputGrad).weights + sums.at(Pass::kInputGrad).attention,
             WithinRel(flops.input_grad / t, 1e-12));
  CHECK_THAT(sums.at(Pass::kWeightGrad).weights, WithinRel(flops.weight_grad / t, 1e-12));
  CHECK(sums.at(Pass::kWeightGrad).attention == 0);
}

TEST_CASE("The LM head's planned GEMMs split the vocabulary over the tensor-parallel ranks") {
  const Architecture& arch = *ppsim::find_architecture_preset("llama3.1-70b");  // vocab 128256 = 8 x 16032
  const int t = GENERATE(1, 2, 8);
  const LayerLayout layout{.seq = 4096, .micro_batch = 1, .tensor_parallel = t};
  const auto gemms = ppsim::calibrate::plan_lm_head_gemms(arch, layout);
  REQUIRE(gemms.size() == 3);
  const ppsim::LayerFlops head = ppsim::lm_head_flops(arch, layout.seq, layout.micro_batch);
  for (const PlannedGemm& g : gemms) {
    INFO(g.label << " " << ppsim::calibrate::pass_name(g.pass));
    CHECK(g.label == "lm_head");
    CHECK_THAT(g.shape.flops(), WithinRel(head.forward / t, 1e-12));
  }
  CHECK(gemms[0].shape.n == 128256 / t);
}

TEST_CASE("A linear layer runs Y = X W forward, dX = dY W^T for I and dW = X^T dY for W") {
  const Architecture& arch = *ppsim::find_architecture_preset("llama3.1-70b");
  const LayerLayout layout{.seq = 8192, .micro_batch = 1, .tensor_parallel = 8};
  const auto gemms = ppsim::calibrate::plan_layer_gemms(arch, layout);
  std::map<std::string, std::vector<PlannedGemm>> by_label;
  for (const PlannedGemm& g : gemms) by_label[g.label].push_back(g);

  // QKV on one of 8 ranks: 64/8 query heads and 8/8 KV heads of 128: 1024 + 2 x 128 columns.
  const auto& qkv = by_label.at("qkv");
  REQUIRE(qkv.size() == 3);
  CHECK(qkv[0].pass == Pass::kForward);
  CHECK(qkv[0].shape == ppsim::calibrate::GemmShape{.m = 8192, .n = 1280, .k = 8192});
  CHECK(qkv[1].pass == Pass::kInputGrad);
  CHECK(qkv[1].shape == ppsim::calibrate::GemmShape{.m = 8192, .n = 8192, .k = 1280, .transpose_b = true});
  CHECK(qkv[2].pass == Pass::kWeightGrad);
  CHECK(qkv[2].shape == ppsim::calibrate::GemmShape{.m = 8192, .n = 1280, .k = 8192, .transpose_a = true});
  // Row parallel: the attention output and the MLP's down projection split their input.
  CHECK(by_label.at("attention_out")[0].shape == ppsim::calibrate::GemmShape{.m = 8192, .n = 8192, .k = 1024});
  CHECK(by_label.at("mlp_down")[0].shape == ppsim::calibrate::GemmShape{.m = 8192, .n = 8192, .k = 28672 / 8});
  // SwiGLU's gate and up projections as one GEMM of width 2f/t.
  CHECK(by_label.at("mlp_up_gate")[0].shape == ppsim::calibrate::GemmShape{.m = 8192, .n = 2 * 28672 / 8, .k = 8192});
  // Attention: 8 heads per rank, scores s x s over the head size 128.
  const PlannedGemm& scores = by_label.at("scores")[0];
  CHECK(scores.attention);
  CHECK(scores.shape == ppsim::calibrate::GemmShape{.m = 8192, .n = 8192, .k = 128, .transpose_b = true, .batch = 8});
  CHECK(by_label.at("context")[0].shape == ppsim::calibrate::GemmShape{.m = 8192, .n = 128, .k = 8192, .batch = 8});
  for (const char* grad : {"grad_probs", "grad_v", "grad_q", "grad_k"}) {
    INFO(grad);
    CHECK(by_label.at(grad)[0].pass == Pass::kInputGrad);
  }
}

TEST_CASE("A tensor-parallel size that does not divide the heads or the MLP is refused, naming what it splits") {
  const Architecture& arch = *ppsim::find_architecture_preset("llama3.1-70b");  // 64 heads, 8 KV heads
  CHECK_THAT(ppsim::calibrate::check_layout(arch, {4096, 1, 3}), Contains("does not divide the 64 attention heads"));
  CHECK_THAT(ppsim::calibrate::check_layout(arch, {4096, 1, 16}), Contains("does not divide the 8 key/value heads"));
  CHECK_THAT(ppsim::calibrate::check_layout(arch, {4096, 1, 0}), Contains(">= 1"));
  CHECK_THAT(ppsim::calibrate::check_layout(arch, {0, 1, 1}), Contains("sequence length"));
  CHECK(ppsim::calibrate::check_layout(arch, {4096, 1, 8}).empty());
}

TEST_CASE("Without a model the plan is a generic grid in the three layouts plus attention") {
  const auto scale = ppsim::calibrate::plan_scale("cpu", true);
  const auto plan =
      ppsim::calibrate::make_plan(std::nullopt, {4096, 1, 1}, {ppsim::calibrate::Precision::kBf16}, scale, 4);
  int grid = 0, attention = 0;
  for (const PlannedGemm& g : plan.gemms) (g.attention ? attention : grid) += 1;
  CHECK(grid == 3 * static_cast<int>(scale.gemm_dims.size()));
  CHECK(attention == 6);
  // The generic attention is capped at the scale's sequence length.
  for (const PlannedGemm& g : plan.gemms) {
    if (g.attention) CHECK(std::max(g.shape.m, g.shape.n) <= scale.attention_max_seq);
  }
  CHECK(plan.memory.size() == scale.memory_bytes.size() * std::size(ppsim::calibrate::kAllMemoryKernels));
  CHECK(plan.link_bytes == scale.link_bytes);
}

TEST_CASE("The sweeps grow strictly and the link sweep spans 4 KiB to 1 GiB") {
  const std::string backend = GENERATE("cpu", "cuda");
  const bool quick = GENERATE(false, true);
  const auto scale = ppsim::calibrate::plan_scale(backend, quick);
  INFO(backend << (quick ? " quick" : ""));
  for (std::size_t i = 1; i < scale.gemm_dims.size(); ++i) CHECK(scale.gemm_dims[i] > scale.gemm_dims[i - 1]);
  for (std::size_t i = 1; i < scale.memory_bytes.size(); ++i) CHECK(scale.memory_bytes[i] > scale.memory_bytes[i - 1]);
  for (std::size_t i = 1; i < scale.link_bytes.size(); ++i) CHECK(scale.link_bytes[i] > scale.link_bytes[i - 1]);
  CHECK(scale.link_bytes.front() == 4096);
  if (!quick) CHECK(scale.link_bytes.back() == std::int64_t{1} << 30);
}

TEST_CASE("The memory sweep moves about its nominal bytes with every kernel") {
  const auto planned = ppsim::calibrate::plan_memory_sweep({1 << 20, 16 << 20}, 4096, 2048, 2);
  REQUIRE(planned.size() == 2 * std::size(ppsim::calibrate::kAllMemoryKernels));
  for (const auto& p : planned) {
    INFO(ppsim::calibrate::memory_kernel_name(p.kernel) << " at " << p.target_bytes);
    const double bytes = ppsim::calibrate::memory_kernel_bytes(p.kernel, p.shape, 2);
    CHECK(bytes <= p.target_bytes * 1.01);
    CHECK(bytes >= p.target_bytes * 0.99);
    CHECK(p.shape.rows >= 1);
  }
}
