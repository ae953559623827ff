// SPDX-License-Identifier: Apache-2.0
// Programs that cannot finish end in a deadlock report naming every stuck device, its next action and
// what it waits for; never a hang, never a partial result.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/invariants.hpp"

using Catch::Matchers::Contains;
using ppsim::Action;
using ppsim::Op;
using ppsim::Program;

namespace {

ppsim::UniformCostModel unit_costs() {
  ppsim::UniformCosts costs;
  costs.forward = ppsim::Duration{1};
  costs.backward = ppsim::Duration{2};
  costs.latency = ppsim::Duration{0.5};
  return ppsim::UniformCostModel(costs);
}

Program one_stage_per_device(int m, std::vector<std::vector<Action>> actions) {
  Program program;
  program.num_devices = static_cast<int>(actions.size());
  program.num_microbatches = m;
  program.stage_device = ppsim::loop_stage_mapping(program.num_devices, 1);
  program.actions = std::move(actions);
  return program;
}

}  // namespace

TEST_CASE("A cross-device cycle passes validation and deadlocks, naming both devices and what they wait for") {
  // Device 0 wants 0B0 (the gradient of 1B0) before it sends 0F1; device 1 wants 1F1 (the activation
  // of 0F1) before it runs 1F0 and 1B0. Each waits for an op queued behind the other's wait.
  const Program program = one_stage_per_device(
      2, {{{0, Op::kForward, 0}, {0, Op::kBackward, 0}, {0, Op::kForward, 1}, {0, Op::kBackward, 1}},
          {{1, Op::kForward, 1}, {1, Op::kBackward, 1}, {1, Op::kForward, 0}, {1, Op::kBackward, 0}}});
  // Every (stage, micro-batch) has its ops once, in a legal per-device order: the cycle only shows in time.
  CHECK_FALSE(ppsim::validate_program(program).has_value());

  ppsim::Engine engine;
  const ppsim::SimulationOutcome outcome = engine.run(program, unit_costs());
  CHECK_FALSE(outcome.result.has_value());
  REQUIRE(outcome.deadlock.has_value());
  const ppsim::Deadlock& deadlock = *outcome.deadlock;
  REQUIRE(deadlock.devices.size() == 2);
  CHECK(deadlock.devices[0].device == 0);
  CHECK(deadlock.devices[0].step == 1);
  CHECK(deadlock.devices[0].next == Action{0, Op::kBackward, 0});
  CHECK(deadlock.devices[1].device == 1);
  CHECK(deadlock.devices[1].step == 0);
  CHECK(deadlock.devices[1].next == Action{1, Op::kForward, 1});
  CHECK(deadlock.summary() ==
        "deadlock: device 0 at step 1 (0B0) waits for the gradient of 1B0 or 1I0 from device 1; "
        "device 1 at step 0 (1F1) waits for 0F1 from device 0");
}

TEST_CASE("A program missing an op deadlocks on the op that needs it, and finished devices are not listed") {
  // 1B0 is missing: device 1 finishes after 1F0, device 0 waits for a gradient that never comes.
  const Program program =
      one_stage_per_device(1, {{{0, Op::kForward, 0}, {0, Op::kBackward, 0}}, {{1, Op::kForward, 0}}});
  REQUIRE(ppsim::validate_program(program).has_value());  // validation would have caught it; the engine must too

  ppsim::Engine engine;
  const ppsim::SimulationOutcome outcome = engine.run(program, unit_costs());
  CHECK_FALSE(outcome.result.has_value());
  REQUIRE(outcome.deadlock.has_value());
  CHECK(outcome.deadlock->summary() ==
        "deadlock: device 0 at step 1 (0B0) waits for the gradient of 1B0 or 1I0 from device 1");
}

TEST_CASE("An op queued before its own forward or input-gradient backward deadlocks and says which") {
  ppsim::Engine engine;
  SECTION("a B before its F on one device") {
    const Program program = one_stage_per_device(
        1, {{{0, Op::kBackward, 0}, {0, Op::kForward, 0}}, {{1, Op::kForward, 0}, {1, Op::kBackward, 0}}});
    const auto outcome = engine.run(program, unit_costs());
    REQUIRE(outcome.deadlock.has_value());
    CHECK(outcome.deadlock->summary() ==
          "deadlock: device 0 at step 0 (0B0) waits for its forward 0F0; "
          "device 1 at step 0 (1F0) waits for 0F0 from device 0");
  }
  SECTION("a W before its I") {
    const Program program =
        one_stage_per_device(1, {{{0, Op::kForward, 0}, {0, Op::kBackwardWeight, 0}, {0, Op::kBackwardInput, 0}}});
    const auto outcome = engine.run(program, unit_costs());
    REQUIRE(outcome.deadlock.has_value());
    CHECK(outcome.deadlock->summary() ==
          "deadlock: device 0 at step 1 (0W0) waits for its input-gradient backward 0I0");
  }
  SECTION("a forward queued before its producer on the same device") {
    // Two stages on one device, 1F0 listed before 0F0: no message to wait for, only the device itself.
    Program program;
    program.num_devices = 1;
    program.num_microbatches = 1;
    program.stage_device = {0, 0};
    program.actions = {{{1, Op::kForward, 0}, {0, Op::kForward, 0}, {1, Op::kBackward, 0}, {0, Op::kBackward, 0}}};
    const auto outcome = engine.run(program, unit_costs());
    REQUIRE(outcome.deadlock.has_value());
    CHECK(outcome.deadlock->summary() == "deadlock: device 0 at step 0 (1F0) waits for 0F0 on this device");
  }
}

TEST_CASE("Shuffled programs always end, either with a full result or with a deadlock naming a waiting action") {
  std::mt19937_64 random(20240607);  // fixed: the same shuffles on every run
  ppsim::Engine engine;
  const ppsim::UniformCostModel costs = unit_costs();
  int deadlocks = 0;
  int finished = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int p = 1 + trial % 4;
    const int m = 1 + (trial / 4) % 4;
    Program program = ppsim::find_schedule(trial % 2 == 0 ? "gpipe" : "1f1b")->build({p, m, 1});
    // Shuffle one device's list, or swap two neighbours on every device: both keep the set of ops.
    if (trial % 3 == 0) {
      auto& list = program.actions[static_cast<std::size_t>(trial % p)];
      std::shuffle(list.begin(), list.end(), random);
    } else {
      for (auto& list : program.actions) {
        std::uniform_int_distribution<std::size_t> at(0, list.size() - 2);  // lists hold 2m >= 2 actions
        const std::size_t k = at(random);
        std::swap(list[k], list[k + 1]);
      }
    }
    INFO("trial " << trial << " p=" << p << " m=" << m);
    const ppsim::SimulationOutcome outcome = engine.run(program, costs);
    REQUIRE(outcome.result.has_value() != outcome.deadlock.has_value());
    if (outcome.result) {
      ++finished;
      CHECK(outcome.result->compute_ops == static_cast<std::int64_t>(program.num_ops()));
      continue;
    }
    ++deadlocks;
    const ppsim::Deadlock& deadlock = *outcome.deadlock;
    REQUIRE_FALSE(deadlock.devices.empty());
    const std::string summary = deadlock.summary();
    for (const ppsim::StuckDevice& stuck : deadlock.devices) {
      const auto& list = program.actions[static_cast<std::size_t>(stuck.device)];
      REQUIRE(stuck.step < list.size());
      CHECK(stuck.next == list[stuck.step]);
      CHECK_FALSE(stuck.waits_for.empty());
      CHECK_THAT(summary, Contains("device " + std::to_string(stuck.device) + " at step " + std::to_string(stuck.step) +
                                   " (" + ppsim::to_string(stuck.next) + ") waits for"));
    }
  }
  // The sample exercises both endings.
  CHECK(deadlocks > 0);
  CHECK(finished > 0);
}

TEST_CASE("An engine reused after a deadlock runs the next program from a clean state") {
  ppsim::Engine engine;
  const Program stuck =
      one_stage_per_device(1, {{{0, Op::kForward, 0}, {0, Op::kBackward, 0}}, {{1, Op::kForward, 0}}});
  REQUIRE(engine.run(stuck, unit_costs()).deadlock.has_value());
  const Program fine = ppsim::find_schedule("1f1b")->build({2, 1, 1});
  const ppsim::SimulationOutcome outcome = engine.run(fine, unit_costs());
  REQUIRE(outcome.result.has_value());
  // p=2, m=1, F=1, B=2, L=0.5: 1F0 at 1.5, 1B0 ends 4.5, 0B0 from 5 to 7.
  CHECK(outcome.result->makespan == 7);
}
