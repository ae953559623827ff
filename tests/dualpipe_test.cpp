// SPDX-License-Identifier: Apache-2.0
// DualPipe, the bidirectional original (dualpipe.cpp): its orders against the reference's, its size
// rules, and what the engine makes of two pipelines over replicated stages (Program::num_pipelines):
// each direction's first stage reads its own micro-batches, nothing flows between the directions,
// and the README's bubble and PP+1 activation peak hold.
//
// The goldens tests/golden/dualpipe_p*_m*.txt are the per-rank compute orders of
// deepseek-ai/DualPipe's dualpipe.py (DualPipe.step, commit 3da1bbea), replayed by a Python port of
// its bookkeeping that records each _forward_chunk, _backward_chunk, _forward_backward_chunk and
// _weight_chunk instead of running it, in the reference's own notation: `<direction><op><micro-batch>`,
// micro-batches numbered per direction, an overlapped chunk as `(F;B)`, I for a backward run with
// enable_zb and W for each WeightGradStore.pop().
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/golden.hpp"
#include "support/invariants.hpp"

using ppsim::Action;
using ppsim::Op;

namespace {

const ppsim::ScheduleInfo& dualpipe() { return *ppsim::find_schedule("dualpipe"); }

ppsim::Program build(int p, int m) { return dualpipe().build({p, m, 1}); }

// One rank's list in the reference's notation: direction 0 for stages 0..p-1, 1 for p..2p-1.
std::string reference_row(const ppsim::Program& program, std::size_t rank) {
  const int p = program.num_devices;
  const auto& list = program.actions[rank];
  auto one = [&](const Action& a) {
    return std::to_string(a.stage < p ? 0 : 1) + ppsim::op_letter(a.op) + std::to_string(a.microbatch);
  };
  std::string row = "rank" + std::to_string(rank) + ": ";
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0) row += ",";
    if (list[i].fused_with_next) {
      row += "(" + one(list[i]) + ";" + one(list[i + 1]) + ")";
      ++i;
    } else {
      row += one(list[i]);
    }
  }
  return row;
}


ppsim::UniformCosts unit_costs() {
  ppsim::UniformCosts costs;  // F = 1, B = 2, W = 1: F = I = W, as the README's figure
  costs.weight = ppsim::Duration{1};
  return costs;
}

ppsim::Result simulate(const ppsim::Program& program, const ppsim::UniformCosts& costs, bool timeline = false) {
  ppsim::Engine engine;
  ppsim::EngineOptions options;
  options.record_timeline = timeline;
  ppsim::SimulationOutcome outcome = engine.run(program, ppsim::UniformCostModel(costs), options);
  REQUIRE(outcome.result.has_value());
  return std::move(*outcome.result);
}

}  // namespace

TEST_CASE("DualPipe's orders are dualpipe.py's, rank for rank and chunk for chunk") {
  const auto [p, m] = GENERATE(table<int, int>({{2, 4}, {4, 8}, {4, 10}, {6, 14}, {8, 20}}));
  const std::string name = "dualpipe_p" + std::to_string(p) + "_m" + std::to_string(m) + ".txt";
  INFO(name);
  const ppsim::Program program = build(p, m);
  REQUIRE_FALSE(ppsim::validate_program(program).has_value());
  const std::vector<std::string> golden = ppsim::read_golden_lines(name);
  REQUIRE(golden.size() == static_cast<std::size_t>(p));
  for (std::size_t r = 0; r < golden.size(); ++r) CHECK(reference_row(program, r) == golden[r]);
}

TEST_CASE("DualPipe runs two pipelines of p stages in opposite directions, m/2 micro-batches each") {
  const ppsim::Program program = build(4, 8);
  CHECK(program.num_pipelines == 2);
  CHECK(program.num_microbatches == 4);
  CHECK(program.microbatches_per_step() == 8);
  // Direction 0's stage j on device j; direction 1's stage j (program stage 4 + j) on device 3 - j.
  CHECK(program.stage_device == std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0});
  const ppsim::PipelineShape shape = program.pipeline_shape();
  CHECK(shape.first(0));
  CHECK(shape.last(3));
  CHECK(shape.first(4));
  CHECK(shape.last(7));
  CHECK(shape.logical(6) == 2);
}

TEST_CASE("DualPipe refuses what dualpipe.py asserts: odd p, odd m, m below 2p, and v other than 1") {
  const auto& info = dualpipe();
  const auto odd_p = info.check({3, 12, 1});
  REQUIRE(odd_p.has_value());
  CHECK(odd_p->starts_with("needs p even"));
  for (const int m : {9, 6, 2}) {
    INFO("m=" << m);
    const auto why = info.check({4, m, 1});
    REQUIRE(why.has_value());
    CHECK(why->starts_with("needs m even and m >= 2p"));
  }
  const auto two_chunks = info.check({4, 8, 2});
  REQUIRE(two_chunks.has_value());
  CHECK(two_chunks->starts_with("needs v = 1"));
  CHECK_FALSE(info.check({4, 8, 1}).has_value());
  CHECK_FALSE(info.check({2, 4, 1}).has_value());
}

TEST_CASE("DualPipe's second direction starts at device p-1 at time 0, waiting for nothing from the first") {
  const ppsim::Program program = build(4, 8);
  const ppsim::Result result = simulate(program, unit_costs(), /*timeline=*/true);
  // Device 3 holds direction 0's last stage and direction 1's first: its first op, 1F0 in the
  // reference's notation (program stage 4), runs at once, as device 0's 0F0 does.
  bool seen = false;
  for (const ppsim::Span& span : result.timeline->spans) {
    if (span.action.stage == 4 && span.action.op == Op::kForward && span.action.microbatch == 0) {
      CHECK(span.device == 3);
      CHECK(span.start == 0);
      seen = true;
    }
  }
  CHECK(seen);
  // No message crosses from stage 3 (direction 0's last) to stage 4 (direction 1's first).
  for (const ppsim::MessageSpan& message : result.timeline->messages) {
    CHECK_FALSE((message.from.stage == 3 && message.from.op == Op::kForward));
    CHECK_FALSE((message.from.stage == 4 && message.from.op != Op::kForward));
  }
}

TEST_CASE("DualPipe's bubble is its README's (PP/2-1)(F&B+B-3W) on every rank, and every rank stashes PP+1 chunks") {
  const auto [p, m] = GENERATE(table<int, int>({{4, 8}, {4, 16}, {8, 16}, {8, 32}, {16, 64}}));
  INFO("p=" << p << " m=" << m);
  const ppsim::Result result = simulate(build(p, m), unit_costs());
  // F = I = W = 1, B = 2, F&B = F + B = 3: (p/2-1)(3 + 2 - 3) idle on every device, beside its 3m of work.
  const double bubble = (p / 2.0 - 1) * (3 + 2 - 3);
  CHECK(result.makespan == 3.0 * m + bubble);
  for (const ppsim::DeviceFigures& device : result.per_device) {
    CHECK(device.busy == 3.0 * m);
    CHECK(result.makespan - device.busy == bubble);
    CHECK(device.peak_stashed == p + 1);
  }
}

TEST_CASE("DualPipe at p=8, m=32 beats DualPipeV by one unit on half its chunk stashes' memory each way") {
  // Costs per device's share of the model: DualPipeV's chunks are half a stage (F = 0.5, ...).
  const ppsim::Result bidirectional = simulate(build(8, 32), unit_costs());
  ppsim::UniformCosts halves;
  halves.forward = ppsim::Duration{0.5};
  halves.backward = ppsim::Duration{1};
  halves.weight = ppsim::Duration{0.5};
  const ppsim::Result v = simulate(ppsim::find_schedule("dualpipev")->build({8, 32, 2}), halves);
  CHECK(bidirectional.makespan == 102);  // (3m + p - 2)F
  CHECK(v.makespan == 103);              // (6m + 2p - 2) F/2
  // p + 1 = 9 stashes of a p-th of the model, against 2p + 1 = 17 of a 2p-th: 9/8 against 17/16.
  CHECK(bidirectional.per_device[0].peak_stashed == 9);
  CHECK(v.per_device[0].peak_stashed == 17);
}

// Not in Megatron's paired mode: a send there blocks until its receiver posts, which DualPipe's
// two-way traffic deadlocks at p = 6 as DualPipeV's does at p = 4; dualpipe.py's own batched
// isend/irecv never waits for a receiver, and that is the overlap mode, its default.
TEST_CASE("DualPipe keeps the engine's invariants with slow links, sends asynchronous or blocking") {
  const auto comm = GENERATE(ppsim::CommMode::kOverlap, ppsim::CommMode::kBlocking);
  const auto [p, m] = GENERATE(table<int, int>({{2, 4}, {4, 8}, {6, 12}}));
  INFO("p=" << p << " m=" << m);
  ppsim::run_checked(build(p, m), ppsim::UniformCostModel(ppsim::slow_link_costs()), comm);
}

TEST_CASE("A program whose stages do not split into its pipelines is refused") {
  ppsim::Program program = build(4, 8);
  program.num_pipelines = 3;
  const auto problem = ppsim::validate_program(program);
  REQUIRE(problem.has_value());
  CHECK(problem->message == "program has 8 stages, which do not split into 3 pipelines of equal length");
  program.num_pipelines = 0;
  CHECK(ppsim::validate_program(program).has_value());
}

TEST_CASE("DualPipe read as one pipeline is a different schedule: the pipeline count is what separates them") {
  // The same lists with num_pipelines = 1 chain stage 3 into stage 4: direction 1 would wait for
  // direction 0's forwards, and the order deadlocks or slows; two pipelines run as dualpipe.py does.
  ppsim::Program chained = build(4, 8);
  chained.num_pipelines = 1;
  chained.num_microbatches = 4;
  ppsim::Engine engine;
  const ppsim::SimulationOutcome outcome = engine.run(chained, ppsim::UniformCostModel(unit_costs()));
  const bool slower = !outcome.result || outcome.result->makespan > simulate(build(4, 8), unit_costs()).makespan;
  CHECK(slower);
}
