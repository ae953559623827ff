// SPDX-License-Identifier: Apache-2.0
// The engine's two algorithms (sim/engine.hpp) must agree bit for bit: the in-order sweep, which
// every summary run takes, against the event queue, which the timeline invariants check op by op
// (tests/support/invariants.cpp). And a schedule run from its generators, never stored, must give
// what its stored Program gives.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "models/stage_table_cost_model.hpp"
#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/same_figures.hpp"

namespace {

using ppsim::CommMode;
using ppsim::EngineAlgorithm;
using ppsim::Result;

// Unbalanced stages (a slower, heavier last stage), messages that queue on slow links, stashes and
// static bytes: the costs under which an ordering mistake would show.
ppsim::StageTable unbalanced_table(int stages, int p) {
  ppsim::StageTable table;
  for (int s = 0; s < stages; ++s) {
    const double slow = s == stages - 1 ? 1.5 : 1.0 + 0.125 * (s % 3);
    table.stages.push_back({ppsim::Duration{1.0 * slow}, ppsim::Duration{2.0 * slow}, ppsim::Duration{0.75 * slow},
                            ppsim::ByteCount{1000 + 10 * s}});
  }
  for (int s = 0; s + 1 < stages; ++s) table.boundary_bytes.push_back(ppsim::ByteCount{40 + 5 * (s % 4)});
  for (int d = 0; d < p; ++d) table.static_bytes.push_back(ppsim::ByteCount{7 + d});
  table.latency = ppsim::Duration{0.2};
  table.bandwidth = ppsim::Bandwidth{100};
  return table;
}
ppsim::StageTableCostModel unbalanced_costs(int stages, int p) { return ppsim::StageTableCostModel(unbalanced_table(stages, p)); }

// unbalanced_costs without latency, the first half's boundaries sending empty messages and the
// second half's messages far longer than an op: with v = 2 (looped or V) each link then carries
// messages that take no time among ones that do. The trusted loop skips only links whose every
// message takes no time; an empty message sent while a long one is on its link waits for it.
ppsim::StageTableCostModel mixed_link_costs(int stages, int p) {
  ppsim::StageTable table = unbalanced_table(stages, p);
  table.latency = ppsim::Duration{0};
  for (std::size_t s = 0; s < table.boundary_bytes.size(); ++s) {
    table.boundary_bytes[s] = ppsim::ByteCount{2 * s + 1 < table.boundary_bytes.size() ? 0 : 5000};
  }
  return ppsim::StageTableCostModel(table);
}

Result run(const ppsim::Program& program, const ppsim::CostModel& costs, EngineAlgorithm algorithm, CommMode comm,
           bool stage_times) {
  ppsim::Engine engine;
  ppsim::EngineOptions options;
  options.algorithm = algorithm;
  options.comm = comm;
  options.record_stage_times = stage_times;
  const ppsim::SimulationOutcome outcome = engine.run(program, costs, options);
  REQUIRE(outcome.result.has_value());
  return *outcome.result;
}

}  // namespace

TEST_CASE("The in-order sweep gives the event queue's figures exactly for every schedule, size, cost and mode") {
  const auto [p, m] = GENERATE(table<int, int>({{1, 1}, {2, 3}, {3, 6}, {4, 4}, {4, 8}, {4, 11}, {5, 10}, {8, 16}, {4, 100}}));
  // Paired too: a send leaves when its receiver posts (Megatron's batched p2p), which the sweep
  // replays by holding the sender until the receiver's device reaches the op before the consumer.
  const CommMode comm = GENERATE(CommMode::kOverlap, CommMode::kBlocking, CommMode::kPaired);
  const bool unbalanced = GENERATE(false, true);
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    if (!info.generated()) continue;
    for (const int v : {1, 2, 3}) {
      const ppsim::ScheduleParams params{p, m, v};
      if (info.check(params)) continue;
      INFO(info.name << " p=" << p << " m=" << m << " v=" << v << (unbalanced ? " unbalanced" : " uniform")
                     << (comm == CommMode::kBlocking ? " blocking" : comm == CommMode::kPaired ? " paired" : " overlap"));
      const ppsim::Program program = info.build(params);
      REQUIRE_FALSE(ppsim::validate_program(program).has_value());
      ppsim::UniformCosts uniform;
      uniform.activation_bytes = ppsim::ByteCount{1000};
      uniform.static_bytes = ppsim::ByteCount{7};
      uniform.message_bytes = ppsim::ByteCount{50};
      uniform.bandwidth = ppsim::Bandwidth{100};
      uniform.latency = ppsim::Duration{0.25};
      uniform.overlap = ppsim::Duration{2.5};
      const ppsim::UniformCostModel uniform_model(uniform);
      const ppsim::StageTableCostModel table_model = unbalanced_costs(program.num_stages(), p);
      const ppsim::CostModel& costs = unbalanced ? static_cast<const ppsim::CostModel&>(table_model) : uniform_model;
      if (comm == CommMode::kPaired) {
        // Sends held until their receivers post can deadlock schedules that are not Megatron's (a
        // device that sends twice before it receives): the sweep then says what the event queue says.
        ppsim::Engine engine;
        ppsim::EngineOptions options;
        options.comm = comm;
        options.record_stage_times = unbalanced;
        options.algorithm = EngineAlgorithm::kEventQueue;
        const ppsim::SimulationOutcome events = engine.run(program, costs, options);
        options.algorithm = EngineAlgorithm::kAuto;
        const ppsim::SimulationOutcome sweep = engine.run(program, costs, options);
        REQUIRE(events.result.has_value() == sweep.result.has_value());
        if (events.deadlock) {
          CHECK(sweep.deadlock->summary() == events.deadlock->summary());
        } else {
          ppsim::test::check_same_figures(*events.result, *sweep.result);
        }
        continue;
      }
      const Result events = run(program, costs, EngineAlgorithm::kEventQueue, comm, unbalanced);
      const Result sweep = run(program, costs, EngineAlgorithm::kSweep, comm, unbalanced);
      ppsim::test::check_same_figures(events, sweep);
    }
  }
}

TEST_CASE("A schedule replayed from its generators gives what its stored program gives, and stores no program") {
  // Generated runs take the trusted loop (engine_sweep.cpp: one 64-action window a visit, phases
  // noted at marks, messages counted afterwards); with per-stage times, the general one. Lists of
  // hundreds of actions cross many windows, and DualPipeV's overlapped pairs straddle some.
  const auto [p, m] = GENERATE(table<int, int>({{2, 4}, {4, 8}, {4, 13}, {3, 100}, {5, 77}, {8, 32}, {6, 1000}}));
  const CommMode comm = GENERATE(CommMode::kOverlap, CommMode::kBlocking);
  // Links: timed (latency and bandwidth), free (messages arrive as they are sent: the trusted loop
  // skips their links) and, with unbalanced stages, mixed (free messages behind timed ones).
  const bool unbalanced = GENERATE(false, true);
  const bool timed_links = GENERATE(true, false);
  const bool stage_times = GENERATE(false, true);
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    if (!info.generated()) continue;
    for (const int v : {1, 2}) {
      const ppsim::ScheduleParams params{p, m, v};
      if (info.check(params)) continue;
      INFO(info.name << " p=" << p << " m=" << m << " v=" << v << (unbalanced ? " unbalanced" : " uniform")
                     << (timed_links ? " timed links" : unbalanced ? " mixed links" : " free links")
                     << (comm == CommMode::kBlocking ? " blocking" : " overlap") << (stage_times ? " stage times" : ""));
      ppsim::UniformCosts uniform;
      uniform.activation_bytes = ppsim::ByteCount{1000};
      if (timed_links) {
        uniform.message_bytes = ppsim::ByteCount{50};
        uniform.bandwidth = ppsim::Bandwidth{100};
        uniform.latency = ppsim::Duration{0.25};
      }
      uniform.overlap = ppsim::Duration{2.5};
      uniform.weight_stash_fraction = 0.3;
      const ppsim::UniformCostModel uniform_model(uniform);
      const ppsim::Program program = info.build(params);
      const ppsim::StageTableCostModel table_model = timed_links ? unbalanced_costs(program.num_stages(), p)
                                                                 : mixed_link_costs(program.num_stages(), p);
      const ppsim::CostModel& costs = unbalanced ? static_cast<const ppsim::CostModel&>(table_model) : uniform_model;
      ppsim::EngineOptions options;
      options.comm = comm;
      options.record_stage_times = stage_times;
      ppsim::Engine engine;
      const auto stored = engine.run(program, costs, options);
      const auto generated = engine.run(info.streams(params), costs, options);  // the same engine: state reused
      REQUIRE(stored.result.has_value());
      REQUIRE(generated.result.has_value());
      ppsim::test::check_same_figures(*stored.result, *generated.result);
      ppsim::test::check_same_figures(run(program, costs, EngineAlgorithm::kEventQueue, comm, stage_times),
                                      *generated.result);
    }
  }
}

TEST_CASE("The in-order sweep reports the event queue's deadlock, device for device") {
  // Device 1 wants micro-batch 1 first, device 0 sends 0 first and waits for its gradient.
  ppsim::Program program;
  program.num_devices = 2;
  program.num_microbatches = 2;
  program.stage_device = {0, 1};
  program.actions = {{{0, ppsim::Op::kForward, 0}, {0, ppsim::Op::kBackward, 0}, {0, ppsim::Op::kForward, 1},
                      {0, ppsim::Op::kBackward, 1}},
                     {{1, ppsim::Op::kForward, 1}, {1, ppsim::Op::kBackward, 1}, {1, ppsim::Op::kForward, 0},
                      {1, ppsim::Op::kBackward, 0}}};
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{});
  ppsim::Engine engine;
  ppsim::EngineOptions events;
  events.algorithm = EngineAlgorithm::kEventQueue;
  ppsim::EngineOptions sweep;
  sweep.algorithm = EngineAlgorithm::kSweep;
  const auto a = engine.run(program, costs, events);
  const auto b = engine.run(program, costs, sweep);
  REQUIRE(a.deadlock.has_value());
  REQUIRE(b.deadlock.has_value());
  CHECK(b.deadlock->summary() == a.deadlock->summary());
  CHECK(b.deadlock->summary() ==
        "deadlock: device 0 at step 1 (0B0) waits for the gradient of 1B0 or 1I0 from device 1; "
        "device 1 at step 0 (1F1) waits for 0F1 from device 0");
}

TEST_CASE("Forcing the in-order sweep where it cannot run is refused") {
  const ppsim::Program program = ppsim::find_schedule("1f1b")->build({2, 2, 1});
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{});
  ppsim::Engine engine;
  ppsim::EngineOptions options;
  options.algorithm = EngineAlgorithm::kSweep;
  options.record_timeline = true;
  CHECK_THROWS_AS(engine.run(program, costs, options), std::invalid_argument);
  options.record_timeline = false;
  options.comm = CommMode::kPaired;
  options.record_critical_path = true;
  CHECK_THROWS_AS(engine.run(program, costs, options), std::invalid_argument);
}

TEST_CASE("A paired program that deadlocks on the sweep is reported as the event queue reports it") {
  // Both devices send first and receive after: with paired sends each is held until the other posts.
  ppsim::Program program;
  program.num_devices = 2;
  program.num_microbatches = 2;
  program.stage_device = {0, 1};
  program.actions = {{{0, ppsim::Op::kForward, 0}, {0, ppsim::Op::kForward, 1}, {0, ppsim::Op::kBackward, 0},
                      {0, ppsim::Op::kBackward, 1}},
                     {{1, ppsim::Op::kForward, 1}, {1, ppsim::Op::kBackward, 1}, {1, ppsim::Op::kForward, 0},
                      {1, ppsim::Op::kBackward, 0}}};
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{ppsim::Duration{1}, ppsim::Duration{2}, ppsim::Duration{1},
                                                         ppsim::ByteCount{0}, 0.5, ppsim::ByteCount{0},
                                                         ppsim::ByteCount{0}, ppsim::Duration{0.1}});
  ppsim::Engine engine;
  ppsim::EngineOptions events;
  events.algorithm = EngineAlgorithm::kEventQueue;
  events.comm = CommMode::kPaired;
  ppsim::EngineOptions sweep = events;
  sweep.algorithm = EngineAlgorithm::kAuto;
  const auto a = engine.run(program, costs, events);
  const auto b = engine.run(program, costs, sweep);
  REQUIRE(a.deadlock.has_value());
  REQUIRE(b.deadlock.has_value());
  CHECK(b.deadlock->summary() == a.deadlock->summary());
}

TEST_CASE("The engine refuses a list that ends in an overlapped pair's first half", "[regression]") {
  // The event queue would read past the list for the pair's second half.
  ppsim::Program program = ppsim::find_schedule("1f1b")->build({2, 2, 1});
  program.actions[1].back() = {1, ppsim::Op::kForward, 1, /*fused=*/true};
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{});
  ppsim::Engine engine;
  for (const EngineAlgorithm algorithm : {EngineAlgorithm::kEventQueue, EngineAlgorithm::kSweep}) {
    ppsim::EngineOptions options;
    options.algorithm = algorithm;
    CHECK_THROWS_AS(engine.run(program, costs, options), std::invalid_argument);
  }
}
