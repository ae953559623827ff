// SPDX-License-Identifier: Apache-2.0
// Megatron-LM's combined 1F1B (--overlap-moe-expert-parallel-comm): the golden order is Megatron's
// own schedule table for p = 2, v = 2, m = 4 with the flag on (schedules.py,
// forward_backward_pipelining_with_interleaving: one more warmup forward, then forward k + w merged
// with backward k), and combined_1f1b.py's order without pipelining.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "models/transformer/transformer_cost_model.hpp"
#include "schedules/builders.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/golden.hpp"
#include "support/ideal_machine.hpp"
#include "support/invariants.hpp"
#include "models/uniform_cost_model.hpp"

namespace {

// A device's list as torch prints it, an overlapped pair as one "(0F3;2B0)OVERLAP_F_B" cell.
std::string row(const std::vector<ppsim::Action>& list) {
  std::string text;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const bool pair = list[i].fused_with_next && i + 1 < list.size();
    text += (text.empty() ? "" : ",") + ppsim::cell_text(list[i], pair ? &list[i + 1] : nullptr);
    if (pair) ++i;
  }
  return text;
}

ppsim::Program combined(int p, int m, int v) { return ppsim::collect_program(ppsim::combined_one_f_one_b_streams({p, m, v})); }

}  // namespace

TEST_CASE("Combined 1F1B at p=2, v=2, m=4 runs Megatron's table: one more warmup forward, then F and B merged") {
  const std::string golden = ppsim::read_text(std::string(PPSIM_GOLDEN_DIR) + "/combined-1f1b_p2_m4_v2.csv");
  const ppsim::Program program = combined(2, 4, 2);
  CHECK(row(program.actions[0]) + "\n" + row(program.actions[1]) + "\n" == golden);
  CHECK_FALSE(ppsim::validate_program(program).has_value());
}

TEST_CASE("Combined 1F1B without pipelining runs F0, then each forward with the previous micro-batch's backward") {
  const ppsim::Program program = combined(1, 4, 1);
  CHECK(row(program.actions[0]) ==
        "0F0,(0F1;0B0)OVERLAP_F_B,(0F2;0B1)OVERLAP_F_B,(0F3;0B2)OVERLAP_F_B,0B3");
  CHECK_FALSE(ppsim::validate_program(program).has_value());
}

TEST_CASE("Combined 1F1B refuses a pipeline without virtual stages, as Megatron-LM does, and keeps interleaved's rules") {
  const auto why = ppsim::check_combined_one_f_one_b({4, 8, 1});
  REQUIRE(why.has_value());
  CHECK(why->starts_with("needs v >= 2 when p > 1"));
  CHECK_FALSE(ppsim::check_combined_one_f_one_b({1, 8, 1}).has_value());
  CHECK(ppsim::check_combined_one_f_one_b({4, 6, 2}) == ppsim::check_interleaved({4, 6, 2}));
  CHECK(ppsim::resolve_schedule("overlap_moe_expert_parallel_comm") == ppsim::find_schedule("combined-1f1b"));
}

TEST_CASE("On an MoE model combined 1F1B hides the all-to-alls that interleaved 1F1B pays in full") {
  ppsim::Architecture arch = ppsim::test::swiglu("moe-test", 8);
  arch.moe = {.experts = 8, .top_k = 2, .expert_ffn_hidden = 512};
  ppsim::TrainingLayout l;
  l.seq = 2048;
  l.pipeline = 2;
  l.chunks = 2;
  l.data_parallel = 8;
  l.expert_parallel = 8;
  ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  machine.intra_node_bandwidth /= 20;  // all-to-alls as long as the compute they can hide behind
  const ppsim::ScheduleParams params{2, 8, 2};
  const ppsim::Program interleaved = ppsim::find_schedule("interleaved-1f1b")->build(params);
  const ppsim::Program merged = ppsim::find_schedule("combined-1f1b")->build(params);
  const ppsim::TransformerCostModel model({arch, l, machine}, interleaved.stage_device);
  ppsim::Engine engine;
  const auto plain = engine.run(interleaved, model);
  const auto overlapped = engine.run(merged, model);
  REQUIRE(plain.result);
  REQUIRE(overlapped.result);
  CHECK(overlapped.result->makespan < plain.result->makespan);
  // Each device runs the same ops: the saving is at most the dispatch time the pairs hold.
  double dispatch = 0;
  for (const auto& stage : model.stages()) dispatch += stage.times.forward.dispatch + stage.times.input_grad.dispatch;
  CHECK(plain.result->makespan - overlapped.result->makespan < dispatch * 8);
}

TEST_CASE("A combined step frees its backward's stash layer by layer as its forward fills its own") {
  // Megatron interleaves the two halves layer by layer (model_chunk_schedule_plan.py), so a pair
  // never holds both micro-batches whole: without pipelining one micro-batch's stash at most, where
  // a pair run half after half (torch's OVERLAP_F_B, DualPipe's count) would hold two.
  ppsim::UniformCosts uniform;
  uniform.activation_bytes = ppsim::ByteCount{1000};
  const ppsim::UniformCostModel costs(uniform);
  ppsim::Program program = combined(1, 4, 1);
  REQUIRE(program.layerwise_pairs);
  CHECK(ppsim::run_checked(program, costs, ppsim::CommMode::kOverlap).per_device[0].peak_stashed == 1);
  program.layerwise_pairs = false;
  CHECK(ppsim::run_checked(program, costs, ppsim::CommMode::kOverlap).per_device[0].peak_stashed == 2);
  // With a pipeline: interleaved 1F1B's peak, its one more warmup forward matched by the release.
  const ppsim::Program interleaved = ppsim::find_schedule("interleaved-1f1b")->build({2, 4, 2});
  const ppsim::Result a = ppsim::run_checked(interleaved, costs, ppsim::CommMode::kOverlap);
  const ppsim::Result b = ppsim::run_checked(combined(2, 4, 2), costs, ppsim::CommMode::kOverlap);
  for (std::size_t d = 0; d < 2; ++d) CHECK(b.per_device[d].peak_stashed == a.per_device[d].peak_stashed);
}
