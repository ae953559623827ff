// SPDX-License-Identifier: Apache-2.0
// Mixture-of-experts layers, with and without expert parallelism (models/transformer/layer_costs.hpp,
// pass_costs.hpp, static_memory.hpp, data_parallel.hpp): FLOPs, stashes, times, parameters and their
// reduction by hand on an ideal machine, where every GEMM is its FLOPs over the peak, every
// memory-bound kernel its bytes over the HBM bandwidth and every collective its bytes over the link.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "models/transformer/data_parallel.hpp"
#include "models/transformer/layer_costs.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/stage_plan.hpp"
#include "models/transformer/static_memory.hpp"
#include "models/transformer/transformer_cost_model.hpp"
#include "schedules/program.hpp"
#include "support/ideal_machine.hpp"

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using ppsim::Architecture;
using ppsim::TrainingLayout;
using ppsim::test::kHbm;
using ppsim::test::kPeak;

namespace {

// Four experts of width 512, two per token, SwiGLU, no dropout, no biases; h = 1024, 8 heads.
Architecture moe_model(int layers = 4) {
  Architecture arch = ppsim::test::swiglu("moe-test", layers);
  arch.moe = {.experts = 4, .top_k = 2, .expert_ffn_hidden = 512};
  return arch;
}

// The same model with one dense MLP as wide as the top_k experts a token meets (2 x 512).
Architecture dense_equivalent() {
  Architecture arch = moe_model();
  arch.moe = {};
  arch.ffn_hidden = 1024;
  return arch;
}

TrainingLayout layout() {
  TrainingLayout l;
  l.seq = 2048;
  l.micro_batch = 1;
  l.flash_attention = true;
  return l;
}

constexpr double kTokens = 2048;
constexpr double kHidden = 1024;

}  // namespace

TEST_CASE("An MoE layer's FLOPs are the dense layer's at top_k times the expert width, plus the router") {
  const Architecture moe = moe_model();
  const ppsim::LayerFlops flops = ppsim::layer_flops(moe, 2048, 1, true);
  const ppsim::LayerFlops dense = ppsim::layer_flops(dense_equivalent(), 2048, 1);
  const double router = 2 * kTokens * kHidden * 4;  // T x h by h x experts
  CHECK(flops.forward == dense.forward + router);
  CHECK(flops.input_grad == dense.input_grad + router);
  CHECK(flops.weight_grad == dense.weight_grad + router);
  // A whole step counts every layer as MoE here: 4 x (F + I + W) plus the LM head.
  const ppsim::LayerFlops head = ppsim::lm_head_flops(moe, 2048, 1);
  CHECK(ppsim::step_flops(moe, 2048, 1, false) ==
        4 * (flops.forward + flops.input_grad + flops.weight_grad) + head.forward + head.input_grad + head.weight_grad);
}

TEST_CASE("On an ideal machine an MoE layer costs the dense equivalent plus its router and its token shuffling") {
  const ppsim::PassTimes moe = ppsim::layer_pass_times(moe_model(), layout(), ppsim::test::ideal_machine(), true);
  const ppsim::PassTimes dense = ppsim::layer_pass_times(dense_equivalent(), layout(), ppsim::test::ideal_machine());
  const double router = 2 * kTokens * kHidden * 4 / kPeak;
  CHECK_THAT(moe.forward.gemm, WithinRel(dense.forward.gemm + router, 1e-12));
  CHECK_THAT(moe.input_grad.gemm, WithinRel(dense.input_grad.gemm + router, 1e-12));
  CHECK_THAT(moe.weight_grad.gemm, WithinRel(dense.weight_grad.gemm + router, 1e-12));
  CHECK(moe.forward.attention == dense.forward.attention);
  // Routing: softmax and top-k over T x 4 logits (6 bytes each in F, 10 in I); permute and unpermute
  // read or write the T tokens and their 2 copies (2 bytes an element), unpermute's backward the
  // copies twice.
  const double tokens = 2 * kTokens * kHidden;
  const double forward_routing = (6 * kTokens * 4 + 2 * (tokens + 2 * tokens)) / kHbm;
  const double backward_routing = (10 * kTokens * 4 + (tokens + 2 * tokens) + (tokens + 4 * tokens)) / kHbm;
  CHECK_THAT(moe.forward.memory, WithinRel(dense.forward.memory + forward_routing, 1e-12));
  CHECK_THAT(moe.input_grad.memory, WithinRel(dense.input_grad.memory + backward_routing, 1e-12));
}

TEST_CASE("An MoE layer stashes the router's input and probabilities and each routed copy's expert tensors") {
  ppsim::ActivationLayout a;
  a.seq = 2048;
  a.micro_batch = 1;
  a.flash_attention = true;
  const Architecture moe = moe_model();
  // Per token: norm inputs 4h, QKV input 2h, Q K V 2h + 4kv (kv = h), attention output 2h; the
  // router's input 2h and fp32 probabilities 4 x 4; per copy (2): permuted input 2h, gate and up
  // 4 x 512, the down GEMM's input 2 x 512, the expert output 2h and its routing weight 4.
  const double per_token = 4 * kHidden + 2 * kHidden + 6 * kHidden + 2 * kHidden + 2 * kHidden + 16 +
                           2 * (2 * kHidden + 4 * 512 + 2 * 512 + 2 * kHidden + 4);
  CHECK(ppsim::activation_bytes_per_layer(moe, a, true) == kTokens * per_token);
  // W keeps, 2 bytes each: QKV and projection inputs, projection output gradient and QKV output
  // gradient (h + 2kv); the router's input and output gradient; per copy the experts' GEMM inputs
  // (h, 512) and output gradients (h, 2 x 512).
  const double weight = 2 * (kHidden + kHidden + kHidden + 3 * kHidden) + 2 * (kHidden + 4) +
                        2 * 2 * (kHidden + 512 + kHidden + 2 * 512);
  CHECK(ppsim::weight_grad_bytes_per_layer(moe, a, true) == kTokens * weight);
}

TEST_CASE("A stage holds its dense and MoE layers' parameters, and its time and stash follow each kind") {
  Architecture arch = moe_model(6);
  arch.moe.dense_layers = 2;  // layers 0 and 1 dense, 2 to 5 MoE
  const ppsim::StagePlan plan = ppsim::plan_stages(arch, 2, {});
  REQUIRE(plan.stages.size() == 2);
  CHECK(ppsim::moe_layers_in(arch, plan.stages[0].first_layer, plan.stages[0].layers) == 1);
  CHECK(ppsim::moe_layers_in(arch, plan.stages[1].first_layer, plan.stages[1].layers) == 3);
  const double dense = static_cast<double>(ppsim::layer_parameter_count(arch));
  const double moe = static_cast<double>(ppsim::moe_layer_parameter_count(arch));
  CHECK(ppsim::stage_parameter_count(arch, plan.stages[1], 1, false) == 3 * moe + 1024 + 32000 * 1024.0);
  CHECK(ppsim::stage_parameter_count(arch, plan.stages[0], 1, false) == 2 * dense + moe + 32000 * 1024.0);

  TrainingLayout l = layout();
  l.pipeline = 2;
  const ppsim::TransformerCostModel model({arch, l, ppsim::test::ideal_machine()}, {0, 1});
  const ppsim::ActivationLayout a = l.activation_layout();
  const ppsim::PassTimes dense_times = ppsim::layer_pass_times(arch, l, ppsim::test::ideal_machine());
  const ppsim::PassTimes moe_times = ppsim::layer_pass_times(arch, l, ppsim::test::ideal_machine(), true);
  // The last stage: three MoE layers and the LM head.
  const ppsim::PassTimes head = ppsim::lm_head_pass_times(arch, l, ppsim::test::ideal_machine());
  CHECK_THAT(model.compute_time(ppsim::Op::kBackwardWeight, 1),
             WithinRel(3 * moe_times.weight_grad.total() + head.weight_grad.total(), 1e-12));
  CHECK_THAT(model.compute_time(ppsim::Op::kForward, 0),
             WithinRel(2 * dense_times.forward.total() + moe_times.forward.total() +
                           ppsim::embedding_pass_times(arch, l, ppsim::test::ideal_machine()).forward.total(),
                       1e-12));
  CHECK(model.activation_bytes(0) ==
        std::llround(2 * ppsim::activation_bytes_per_layer(arch, a) + ppsim::activation_bytes_per_layer(arch, a, true)));
}

TEST_CASE("Expert parallelism splits the experts, adds two all-to-alls to F and to I, and keeps the FLOPs") {
  TrainingLayout l = layout();
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::PassTimes one = ppsim::layer_pass_times(moe_model(), l, machine, true);
  l.data_parallel = 4;
  l.expert_parallel = 2;
  const ppsim::PassTimes two = ppsim::layer_pass_times(moe_model(), l, machine, true);
  // Two experts a rank over the same top_k T copies: the same FLOPs on an ideal machine.
  CHECK_THAT(two.forward.gemm, WithinRel(one.forward.gemm, 1e-12));
  CHECK_THAT(two.weight_grad.gemm, WithinRel(one.weight_grad.gemm, 1e-12));
  // Dispatch and combine: T x top_k copies of h 16-bit values, half of them to the other rank.
  const double bytes = kTokens * 2 * kHidden * 2;
  const double all_to_all = (bytes / 2) / ppsim::test::kNvlink;
  CHECK_THAT(two.forward.dispatch, WithinRel(2 * all_to_all, 1e-12));
  CHECK_THAT(two.input_grad.dispatch, WithinRel(2 * all_to_all, 1e-12));
  CHECK(two.weight_grad.dispatch == 0);
  CHECK(one.forward.dispatch == 0);
  // Sixteen ranks leave an 8-GPU node: the half of each GPU's copies bound for the other node leaves
  // through its own NIC, slower than the 7/16 that cross NVLink.
  l.data_parallel = 16;
  Architecture wide = moe_model();
  wide.moe.experts = 16;
  l.expert_parallel = 16;
  const ppsim::PassTimes sixteen = ppsim::layer_pass_times(wide, l, machine, true);
  CHECK_THAT(sixteen.forward.dispatch,
             WithinRel(2 * ppsim::collective_time(machine, ppsim::Collective::kAllToAll, bytes, 16, true, 8), 1e-12));
  CHECK_THAT(ppsim::collective_time(machine, ppsim::Collective::kAllToAll, bytes, 16, true, 8),
             WithinRel(bytes * 8 / 16 / ppsim::test::kInfiniband, 1e-12));
  CHECK(bytes * 7 / 16 / ppsim::test::kNvlink < bytes * 8 / 16 / ppsim::test::kInfiniband);
}

TEST_CASE("The busiest expert rank's imbalance scales its expert GEMMs, all-to-alls and expert stash") {
  TrainingLayout l = layout();
  l.data_parallel = 2;
  l.expert_parallel = 2;
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::PassTimes balanced = ppsim::layer_pass_times(moe_model(), l, machine, true);
  l.moe_imbalance = 1.5;
  const ppsim::PassTimes skewed = ppsim::layer_pass_times(moe_model(), l, machine, true);
  // The expert GEMMs: 2 copies x (gate/up 2 x 512 + down 512) x h per token, times 2 FLOPs.
  const double experts = 2 * kTokens * 2 * 3 * 512 * kHidden / kPeak;
  CHECK_THAT(skewed.forward.gemm - balanced.forward.gemm, WithinRel(0.5 * experts, 1e-9));
  CHECK_THAT(skewed.forward.dispatch, WithinRel(1.5 * balanced.forward.dispatch, 1e-12));
  const ppsim::ActivationLayout a = l.activation_layout();
  ppsim::ActivationLayout even = a;
  even.moe_imbalance = 1;
  // Each received copy keeps 2h + 4 x 512 + 2 x 512 bytes; the token's own copies are as many as before.
  CHECK(ppsim::activation_bytes_per_layer(moe_model(), a, true) -
            ppsim::activation_bytes_per_layer(moe_model(), even, true) ==
        kTokens * 0.5 * 2 * (2 * kHidden + 4 * 512 + 2 * 512));
}

TEST_CASE("Routed experts' state is sharded and reduced over the expert data-parallel group") {
  TrainingLayout l = layout();
  l.pipeline = 1;
  l.data_parallel = 8;
  l.expert_parallel = 4;  // expert data-parallel group: 8 / 4 = 2 ranks
  l.distributed_optimizer = true;
  l.global_batch = 8;
  const Architecture arch = moe_model();
  REQUIRE(ppsim::expert_data_parallel(l) == 2);
  const ppsim::TransformerCostModel model({arch, l, ppsim::test::ideal_machine()}, {0});
  const ppsim::StaticMemory& memory = model.static_memory()[0];
  // Each rank holds 4 / 4 = one expert of each of the 4 MoE layers: 3 x 1024 x 512 parameters.
  const double expert = 3.0 * 1024 * 512;
  CHECK(memory.expert_parameter_count == 4 * expert);
  const double all = static_cast<double>(ppsim::parameter_count(arch)) - 4 * 3 * expert;
  CHECK(memory.parameter_count == all);
  // Adam's 12 bytes: the dense parameters' over d = 8, the experts' over 2.
  CHECK(memory.optimizer == std::llround(12 * ((all - 4 * expert) / 8 + 4 * expert / 2)));
  // A bucket's reduction: its dense share over 8 ranks, its expert share over 2 (fp32, reduce-scatter
  // rings inside the node).
  const ppsim::TransformerSetup& setup = model.setup();
  const double share = 0.25;
  const double bucket = 1e8;
  CHECK_THAT(ppsim::gradient_reduce_time(setup, bucket, share),
             WithinRel((7 * 4 * bucket * 0.75 / 8 + 1 * 4 * bucket * 0.25 / 2) / ppsim::test::kNvlink, 1e-12));
}

TEST_CASE("With tensor and sequence parallelism an MoE layer routes its rank's shard to whole experts") {
  TrainingLayout l = layout();
  l.tensor_parallel = 2;
  l.sequence_parallel = true;
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::PassTimes moe = ppsim::layer_pass_times(moe_model(), l, machine, true);
  // Attention split two ways (QKV h x 3h / 2, projection h / 2 x h) over all T tokens; the router
  // and the experts whole, over the rank's T / 2 tokens and their 2 copies.
  const double attention = 2 * kTokens * kHidden * 3 * kHidden / 2 + 2 * kTokens * kHidden / 2 * kHidden;
  const double router = 2 * (kTokens / 2) * kHidden * 4;
  const double experts = 2 * (kTokens / 2) * 2 * kHidden * 3 * 512;
  CHECK_THAT(moe.forward.gemm, WithinRel((attention + router + experts) / kPeak, 1e-12));
  // One reduce-scatter and all-gather pair, the attention's: T x h 16-bit values, half of them moved.
  const double pair = 2 * (kTokens * kHidden * 2 / 2) / ppsim::test::kNvlink;
  CHECK_THAT(moe.forward.collective, WithinRel(pair, 1e-12));
  // Everything the layer stashes is the rank's shard: half of what one rank keeps at t = 1.
  ppsim::ActivationLayout a = l.activation_layout();
  ppsim::ActivationLayout one = a;
  one.tensor_parallel = 1;
  one.sequence_parallel = false;
  CHECK(ppsim::activation_bytes_per_layer(moe_model(), a, true) ==
        ppsim::activation_bytes_per_layer(moe_model(), one, true) / 2);
  CHECK(ppsim::weight_grad_bytes_per_layer(moe_model(), a, true) ==
        ppsim::weight_grad_bytes_per_layer(moe_model(), one, true) / 2);
  // Parameters: the attention split two ways, whole experts (one of four a rank with e = 4 over
  // t d = 8); their expert data-parallel group is t d / e = 2.
  l.data_parallel = 4;
  l.expert_parallel = 4;
  CHECK(ppsim::expert_data_parallel(l) == 2);
  CHECK(ppsim::layer_linear_weight_count(moe_model(), true, 2, 4) == (4.0 * kHidden * kHidden) / 2 + 3.0 * kHidden * 512);
}

TEST_CASE("DeepEP sends a token once to each other node, and the all-gather dispatcher gathers every rank's tokens") {
  TrainingLayout l = layout();
  l.data_parallel = 16;
  l.expert_parallel = 16;
  Architecture arch = moe_model();
  arch.moe.experts = 16;
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const double tokens = kTokens * kHidden * 2;  // T x h, 16 bits
  // Two nodes of 8: a token's 2 experts miss the other node with probability (1/2)^2, so it crosses
  // 1 - 1/4 = 3/4 times on average, at one NIC's bandwidth; its 2 copies' fan-out, 7/8 of them, over
  // NVLink meanwhile. Dispatch and combine in F.
  l.moe_dispatcher = "deepep";
  const double nic = tokens * 0.75 / ppsim::test::kInfiniband;
  const double nvlink = 2 * tokens * 7 / 8 / ppsim::test::kNvlink;
  REQUIRE(nic > nvlink);
  CHECK_THAT(ppsim::layer_pass_times(arch, l, machine, true).forward.dispatch, WithinRel(2 * nic, 1e-12));
  // The all-gather dispatcher: every rank gathers the 16 ranks' T x h and reduce-scatters the
  // outputs back, each a ring across the two nodes.
  l.moe_dispatcher = "allgather";
  const double gathered = 16 * tokens;
  CHECK_THAT(ppsim::layer_pass_times(arch, l, machine, true).forward.dispatch,
             WithinRel(ppsim::collective_time(machine, ppsim::Collective::kAllGather, gathered, 16, true, 8) +
                           ppsim::collective_time(machine, ppsim::Collective::kReduceScatter, gathered, 16, true, 8),
                       1e-12));
  // Inside one node DeepEP is an all-to-all like any other.
  l.data_parallel = 8;
  l.expert_parallel = 8;
  l.moe_dispatcher = "deepep";
  const double deepep = ppsim::layer_pass_times(arch, l, machine, true).forward.dispatch;
  l.moe_dispatcher = "alltoall";
  CHECK(deepep == ppsim::layer_pass_times(arch, l, machine, true).forward.dispatch);
}

TEST_CASE("A transformer cost model refuses a stage on a device beyond its pipeline instead of writing past its tables") {
  // Regression: a layout of one pipeline device given stages on two wrote the second device's
  // memory past the end of its per-device table.
  CHECK_THROWS_AS(ppsim::TransformerCostModel({dense_equivalent(), layout(), ppsim::test::ideal_machine()}, {0, 1}),
                  std::invalid_argument);
}

TEST_CASE("Expert gradients reduce over ranks e apart, so a node holds t d / e of their group only when e is small") {
  // Regression: the group's spacing was t * e, which counted too few of its ranks in a node (one NIC
  // each) and made cross-node expert reductions too slow.
  TrainingLayout l = layout();
  l.tensor_parallel = 2;
  l.sequence_parallel = true;
  l.data_parallel = 8;
  l.expert_parallel = 4;  // expert data-parallel group: 2 x 8 / 4 = 4 ranks, 4 apart: 2 in each 8-GPU node
  l.distributed_optimizer = true;
  const ppsim::TransformerSetup setup{moe_model(), l, ppsim::test::ideal_machine()};
  const double bucket = 1e8;
  const double experts = ppsim::gradient_reduce_time(setup, bucket, 1.0);
  CHECK_THAT(experts, WithinRel(ppsim::ring_collective_time(setup.hardware, 4 * bucket, 4, 1, true, 2), 1e-12));
}

TEST_CASE("Qwen3-30B-A3B's model state at Megatron-Bridge's layout is Megatron-LM's theoretical memory, but for the "
          "terms its estimator leaves out") {
  // megatron/training/theoretical_memory_usage.py at d98e8a64, compute_weight_and_optimizer_memory,
  // for MoE: attention 2 h^2 (1 + g/a) q/h, each MoE layer's routed experts 2 h fe E 3/2 (SwiGLU),
  // its router h E and two norms 2 h (norm_size 1 for RMSNorm), a final norm h, untied embeddings
  // 2 V h; on the most loaded rank the dense and replicated parameters at 6 + 12/DP bytes, the
  // routed experts / (ETP EP) at 6 + 12/EDP.
  // Layout: 16 H100, t = 1, p = 1, d = 16, e = 16 (EDP = 1), distributed optimizer, fp32 gradients.
  const Architecture& arch = *ppsim::find_architecture_preset("qwen3-30b-a3b");
  const double h = 2048, q = 32 * 128, kv = 4 * 128, experts = 128, fe = 768, vocab = 151936, layers = 48;
  const double attention = 2 * h * q + 2 * h * kv;
  const double megatron_dense = layers * (attention + 2 * h + h * experts) + h + 2 * vocab * h;
  const double megatron_experts = layers * 2 * h * fe * experts * 1.5 / 16;
  const double megatron = megatron_dense * (6 + 12.0 / 16) + megatron_experts * (6 + 12.0 / 1);

  TrainingLayout l;
  l.seq = 4096;
  l.data_parallel = 16;
  l.expert_parallel = 16;
  l.distributed_optimizer = true;
  l.global_batch = 1024;
  const ppsim::TransformerCostModel model({arch, l, *ppsim::find_hardware_preset("H100-SXM5-80GB")}, {0});
  const ppsim::StaticMemory& memory = model.static_memory()[0];
  CHECK(memory.expert_parameter_count == megatron_experts);
  // The one term the estimator leaves out: Qwen3's QK norms (2 x 128 a layer).
  const double missing = layers * 2 * 128;
  CHECK(memory.parameter_count - memory.expert_parameter_count == megatron_dense + missing);
  const double ours = static_cast<double>(memory.parameters + memory.gradients + memory.optimizer);
  CHECK_THAT(ours, WithinAbs(megatron + missing * (6 + 12.0 / 16), 1.0));
}

TEST_CASE("Qwen3-235B-A22B's and DeepSeek-V3's model state on their first pipeline rank is Megatron-LM's theoretical "
          "memory term by term") {
  // The same estimator applied to the layers ppsim places on pipeline device 0. Megatron's formula
  // itself assumes num_layers / p layers on every rank (11.75 for Qwen3-235B at p = 8) and its MTP
  // block on the first rank; ppsim places whole layers (the remainder on the first stages) and the
  // MTP module with the LM head on the last rank, so the comparison takes the layers device 0 holds.
  // Its pools: attention (with MLA's latent norms) and shared experts split t ways, norms and the
  // router replicated, routed experts / (ETP EP); dense and replicated at 6 + 12/DP bytes, experts at
  // 6 + 12/EDP (megatron/training/theoretical_memory_usage.py at d98e8a64, compute_weight_and_optimizer_memory).
  const ppsim::HardwareProfile& h100 = *ppsim::find_hardware_preset("H100-SXM5-80GB");
  // Both published layouts: t = 2 with sequence parallelism, p = 8, v = 4, sequences of 4096.
  auto device0 = [&](const Architecture& arch, int d, int e, std::int64_t global_batch) {
    TrainingLayout l;
    l.seq = 4096;
    l.tensor_parallel = 2;
    l.sequence_parallel = true;
    l.pipeline = 8;
    l.chunks = 4;
    l.data_parallel = d;
    l.expert_parallel = e;
    l.global_batch = global_batch;
    l.distributed_optimizer = true;
    const std::vector<int> devices = ppsim::loop_stage_mapping(l.pipeline, l.chunks);
    const ppsim::TransformerCostModel model({arch, l, h100}, devices);
    int dense = 0, moe = 0;
    for (std::size_t s = 0; s < devices.size(); ++s) {
      if (devices[s] != 0) continue;
      const ppsim::StageContents& c = model.stages()[s].contents;
      const int experts = ppsim::moe_layers_in(arch, c.first_layer, c.layers);
      moe += experts;
      dense += c.layers - experts;
    }
    return std::tuple{model.static_memory()[0], dense, moe};
  };
  SECTION("Qwen3-235B-A22B at the ModelZoo's layout: t = 2, p = 8, v = 4, d = 16, e = 32 (EDP 1)") {
    const Architecture& arch = *ppsim::find_architecture_preset("qwen3-235b-a22b");
    const auto [memory, dense, moe] = device0(arch, 16, 32, 2048);
    REQUIRE(dense == 0);
    REQUIRE(moe == 12);  // stages 0, 8, 16 and 24 of 3 layers each, with the embedding
    const double h = 4096, q = 64 * 128, kv = 4 * 128, experts = 128, fe = 1536, vocab = 151936;
    const double split = moe * (2 * h * q + 2 * h * kv) + vocab * h;  // attention, embedding: / t
    const double replicated = moe * (2 * h + h * experts);               // two RMSNorms, the router
    const double routed = moe * 3 * h * fe * experts / 32;
    const double megatron = (split / 2 + replicated) * (6 + 12.0 / 16) + routed * (6 + 12.0 / 1);
    CHECK(memory.expert_parameter_count == routed);
    // ppsim splits the norms and the router t ways too, and counts Qwen3's QK norms (2 x 128).
    const double differs = -(replicated / 2) + moe * 2 * 128 / 2;
    CHECK(memory.parameter_count - memory.expert_parameter_count == split / 2 + replicated + differs);
    const double ours = static_cast<double>(memory.parameters + memory.gradients + memory.optimizer);
    CHECK_THAT(ours, WithinAbs(megatron + differs * (6 + 12.0 / 16), 1.0));
  }
  SECTION("DeepSeek-V3 at Megatron-Bridge's H100 layout: t = 2, p = 8, v = 4, d = 64, e = 64 (EDP 2)") {
    const Architecture& arch = *ppsim::find_architecture_preset("deepseek-v3");
    const auto [memory, dense, moe] = device0(arch, 64, 64, 8192);
    REQUIRE(dense == 2);  // layers 0 and 1 with the embedding, then 16-17, 32-33, 48-49
    REQUIRE(moe == 6);
    const double h = 7168, experts = 256, fe = 2048, vocab = 129280, ffn = 18432;
    // MLA as the estimator counts it: q_lora (h + heads (nope + rope) + 1) + kv_lora (h + heads
    // (nope + v) + 1) + h rope + heads v h; the shared expert 3 h fe.
    const double mla = 1536 * (h + 128 * 192 + 1) + 512 * (h + 128 * 256 + 1) + h * 64 + 128 * 128 * h;
    const double split = (dense + moe) * mla + dense * 3 * h * ffn + moe * 3 * h * fe + vocab * h;
    const double replicated = (dense + moe) * 2 * h + moe * h * experts;
    const double routed = moe * 3 * h * fe * experts / 64;
    const double megatron = (split / 2 + replicated) * (6 + 12.0 / 64) + routed * (6 + 12.0 / 2);
    CHECK(memory.expert_parameter_count == routed);
    const double differs = -(replicated / 2);  // ppsim splits the norms and the router t ways too
    CHECK(memory.parameter_count - memory.expert_parameter_count == split / 2 + replicated + differs);
    const double ours = static_cast<double>(memory.parameters + memory.gradients + memory.optimizer);
    CHECK_THAT(ours, WithinAbs(megatron + differs * (6 + 12.0 / 64), 1.0));
  }
}
