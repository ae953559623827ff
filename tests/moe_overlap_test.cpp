// SPDX-License-Identifier: Apache-2.0
// An overlapped forward and backward of an MoE model (TransformerCostModel::overlap_time): layer by
// layer, four phases, each one half's module on the compute stream beside the other half's
// all-to-all on the communication stream. By hand on the ideal machine (no SM count, so no
// contention), and with the H100 preset's SMs.
#include <algorithm>
#include <catch2/catch.hpp>

#include "models/transformer/pass_costs.hpp"
#include "models/transformer/transformer_cost_model.hpp"
#include "support/ideal_machine.hpp"

using Catch::Matchers::WithinRel;
using ppsim::Architecture;
using ppsim::Op;
using ppsim::PassTime;
using ppsim::TrainingLayout;

namespace {

// Four experts of width 512, two per token, SwiGLU; h = 1024, 8 heads; `layers` layers, all MoE.
Architecture moe_model(int layers) {
  Architecture arch = ppsim::test::swiglu("moe-test", layers);
  arch.moe = {.experts = 4, .top_k = 2, .expert_ffn_hidden = 512};
  return arch;
}

// Two pipeline devices, two data-parallel ranks that are also the two expert-parallel ones.
TrainingLayout two_stages() {
  TrainingLayout l;
  l.seq = 2048;
  l.flash_attention = true;
  l.pipeline = 2;
  l.data_parallel = 2;
  l.expert_parallel = 2;
  return l;
}

PassTime full_backward(const ppsim::PassTimes& times) {
  PassTime b = times.input_grad;
  b += times.weight_grad;
  return b;
}

double without_dispatch(const PassTime& pass) { return pass.total() - pass.dispatch; }

}  // namespace

TEST_CASE("An all-to-all that finishes inside the partner's compute costs nothing") {
  const TrainingLayout l = two_stages();
  const Architecture arch = moe_model(4);
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::TransformerCostModel model({arch, l, machine}, {0, 1});
  const ppsim::PassTimes layer = ppsim::layer_pass_times(arch, l, machine, true);
  const PassTime b = full_backward(layer);
  // Every phase's module outlasts the all-to-all beside it (half of a pass's token traffic each).
  REQUIRE(layer.forward.dispatch > 0);
  REQUIRE(layer.forward.experts > b.dispatch / 2);
  REQUIRE(b.experts > layer.forward.dispatch / 2);
  REQUIRE(layer.forward.total() - layer.forward.dispatch - layer.forward.experts > b.dispatch / 2);
  REQUIRE(b.total() - b.dispatch - b.experts > layer.forward.dispatch / 2);
  // So the pair takes exactly its compute: stage 0's forward and stage 1's backward without dispatch.
  const ppsim::PassTimes& s0 = model.stages()[0].times;
  const ppsim::PassTimes& s1 = model.stages()[1].times;
  CHECK_THAT(model.overlap_time(0, Op::kBackward, 1),
             WithinRel(without_dispatch(s0.forward) + without_dispatch(full_backward(s1)), 1e-12));
  // I alone: the same without W's GEMMs.
  CHECK_THAT(model.overlap_time(0, Op::kBackwardInput, 1),
             WithinRel(without_dispatch(s0.forward) + without_dispatch(s1.input_grad), 1e-12));
}

TEST_CASE("An all-to-all that outlasts the partner's compute costs the difference, phase by phase") {
  const TrainingLayout l = two_stages();
  const Architecture arch = moe_model(4);
  ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  machine.intra_node_bandwidth /= 1000;  // every all-to-all now outlasts any module beside it
  const ppsim::TransformerCostModel model({arch, l, machine}, {0, 1});
  const ppsim::PassTimes layer = ppsim::layer_pass_times(arch, l, machine, true);
  const PassTime b = full_backward(layer);
  REQUIRE(layer.forward.dispatch / 2 > b.total() - b.dispatch);
  REQUIRE(b.dispatch / 2 > layer.forward.total() - layer.forward.dispatch);
  // Each of stage 0's two layers pairs with one of stage 1's: the four phases last as the all-to-alls
  // do, F's two and B's two, and the rest of both stages (embedding, LM head) runs alone.
  const ppsim::PassTimes& s0 = model.stages()[0].times;
  const ppsim::PassTimes& s1 = model.stages()[1].times;
  const double alone = s0.forward.total() + full_backward(s1).total() - 2 * (layer.forward.total() + b.total());
  const double paired = 2 * (layer.forward.dispatch + b.dispatch);
  CHECK_THAT(model.overlap_time(0, Op::kBackward, 1), WithinRel(paired + alone, 1e-12));
  // The cost beyond the halves' compute is the communication's excess over the compute it hides.
  const double hidden_compute = 2 * (without_dispatch(layer.forward) + without_dispatch(b));
  CHECK_THAT(model.overlap_time(0, Op::kBackward, 1) -
                 (without_dispatch(s0.forward) + without_dispatch(full_backward(s1))),
             WithinRel(paired - hidden_compute, 1e-12));
}

TEST_CASE("Only as many MoE layers pair as both halves hold, and dense layers and a dense model run alone") {
  // Three layers on two stages: stage 0 holds two, stage 1 one. One pair; stage 0's second layer alone.
  const TrainingLayout l = two_stages();
  const Architecture arch = moe_model(3);
  ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  machine.intra_node_bandwidth /= 1000;
  const ppsim::TransformerCostModel model({arch, l, machine}, {0, 1});
  const ppsim::PassTimes layer = ppsim::layer_pass_times(arch, l, machine, true);
  const PassTime b = full_backward(layer);
  const ppsim::PassTimes& s0 = model.stages()[0].times;
  const ppsim::PassTimes& s1 = model.stages()[1].times;
  const double alone = s0.forward.total() + full_backward(s1).total() - (layer.forward.total() + b.total());
  CHECK_THAT(model.overlap_time(0, Op::kBackward, 1), WithinRel(layer.forward.dispatch + b.dispatch + alone, 1e-12));
  // The same model without experts: nothing to hide, the sum of the halves.
  Architecture dense = arch;
  dense.moe = {};
  TrainingLayout plain = l;
  plain.expert_parallel = 1;
  const ppsim::TransformerCostModel without({dense, plain, machine}, {0, 1});
  CHECK(without.overlap_time(0, Op::kBackward, 1) ==
        without.compute_time(Op::kForward, 0) + without.compute_time(Op::kBackward, 1));
}

TEST_CASE("On the H100 preset each phase's compute loses the SMs its all-to-all takes while it runs") {
  TrainingLayout l = two_stages();
  l.data_parallel = 16;
  l.expert_parallel = 16;
  Architecture arch = moe_model(4);
  arch.moe.experts = 16;
  const ppsim::HardwareProfile& h100 = *ppsim::find_hardware_preset("H100-SXM5-80GB");
  for (const char* dispatcher : {"alltoall", "deepep"}) {
    INFO(dispatcher);
    l.moe_dispatcher = dispatcher;
    const ppsim::TransformerCostModel model({arch, l, h100}, {0, 1});
    const ppsim::PassTimes layer = ppsim::layer_pass_times(arch, l, h100, true);
    const PassTime f = layer.forward;
    const PassTime b = layer.input_grad;
    // DeepEP's 20 SMs (DeepSeek-V3 report, 3.2.2); NCCL's 16 channels; of the H100's 132.
    const double taken = (std::string(dispatcher) == "deepep" ? 20.0 : 16.0) / 132;
    auto phase = [&](double compute, double communication) {
      return std::max(compute + std::min(compute, communication) * taken, communication);
    };
    const double paired = phase(f.total() - f.dispatch - f.experts, b.dispatch / 2) +
                          phase(b.experts, f.dispatch / 2) + phase(f.experts, b.dispatch / 2) +
                          phase(b.total() - b.dispatch - b.experts, f.dispatch / 2);
    const ppsim::PassTimes& s0 = model.stages()[0].times;
    const ppsim::PassTimes& s1 = model.stages()[1].times;
    const double alone = s0.forward.total() + s1.input_grad.total() - 2 * (f.total() + b.total());
    CHECK_THAT(model.overlap_time(0, Op::kBackwardInput, 1), WithinRel(2 * paired + alone, 1e-12));
    CHECK(model.overlap_time(0, Op::kBackwardInput, 1) <
          model.compute_time(Op::kForward, 0) + model.compute_time(Op::kBackwardInput, 1));
  }
}

TEST_CASE("With windowed and full MoE layers a pair pairs each stage's mean layer and stays within its halves") {
  // The pairing takes each stage's mean MoE layer, windowed and full ones differing in attention, so
  // what is left alone is the stage's own remainder, never less than nothing.
  Architecture arch = moe_model(4);
  arch.sliding_window = 128;  // every layer windowed
  const TrainingLayout l = two_stages();
  const ppsim::HardwareProfile& h100 = *ppsim::find_hardware_preset("H100-SXM5-80GB");
  const ppsim::TransformerCostModel model({arch, l, h100}, {0, 1});
  const ppsim::PassTimes& s0 = model.stages()[0].times;
  const ppsim::PassTimes& s1 = model.stages()[1].times;
  const double pair = model.overlap_time(0, Op::kBackward, 1);
  CHECK(pair >= without_dispatch(s0.forward));
  CHECK(pair >= without_dispatch(full_backward(s1)));
  CHECK(pair <= s0.forward.total() + full_backward(s1).total());
  // Stage 1 alone, paired with itself (no pipeline): the same bounds.
  const double self = model.overlap_time(1, Op::kBackward, 1);
  CHECK(self >= without_dispatch(full_backward(s1)));
  CHECK(self <= s1.forward.total() + full_backward(s1).total());
}
