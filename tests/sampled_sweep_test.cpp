// SPDX-License-Identifier: Apache-2.0
// Monte-Carlo samples on the in-order sweep: the same draws as the event queue (so the same op times
// and makespans), and the critical path found as the sweep runs equal to the one walked back on the
// event queue's timeline, for every registry schedule, both comm modes, free and timed links.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "models/noise.hpp"
#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "sim/critical_path.hpp"
#include "sim/engine.hpp"

namespace {

ppsim::Result run(const ppsim::Program& program, const ppsim::CostModel& costs, const ppsim::NoiseModel& noise,
                  ppsim::CommMode comm, bool sweep) {
  ppsim::Engine engine;
  ppsim::EngineOptions options;
  options.comm = comm;
  options.noise = &noise;
  options.algorithm = sweep ? ppsim::EngineAlgorithm::kSweep : ppsim::EngineAlgorithm::kEventQueue;
  options.record_timeline = !sweep;
  options.record_critical_path = sweep;
  const ppsim::SimulationOutcome outcome = engine.run(program, costs, options);
  REQUIRE(outcome.result.has_value());
  return *outcome.result;
}

}  // namespace

TEST_CASE("A noisy sample on the sweep draws what the event queue draws and finds the same critical path",
          "[noise][critical]") {
  ppsim::UniformCosts uniform;
  const bool timed = GENERATE(false, true);
  if (timed) {
    uniform.latency = ppsim::Duration{0.1};
    uniform.bandwidth = ppsim::Bandwidth{1e9};
    uniform.message_bytes = ppsim::ByteCount{100'000'000};
  }
  uniform.overlap = ppsim::Duration{2.5};
  const ppsim::UniformCostModel costs(uniform);
  const ppsim::CommMode comm = GENERATE(ppsim::CommMode::kOverlap, ppsim::CommMode::kBlocking);
  ppsim::NoiseModel noise;
  noise.op_cv = {0.2, 0.1, 0.15, 0.3};
  noise.link_cv = timed ? 0.25 : 0.0;
  noise.distribution = GENERATE(ppsim::NoiseDistribution::kLognormal, ppsim::NoiseDistribution::kGamma);
  noise.seed = 11;
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    if (!info.generated()) continue;
    for (const auto& [p, m] : {std::pair{4, 8}, std::pair{4, 12}, std::pair{8, 16}}) {
      const ppsim::ScheduleParams params{p, m, info.default_v};
      if (info.check(params)) continue;
      const ppsim::Program program = info.build(params);
      for (std::uint64_t sample = 0; sample < 3; ++sample) {
        INFO(info.name << " p=" << p << " m=" << m << " timed=" << timed << " sample=" << sample);
        noise.sample = sample;
        const ppsim::Result queue = run(program, costs, noise, comm, /*sweep=*/false);
        const ppsim::Result sweep = run(program, costs, noise, comm, /*sweep=*/true);
        // The same draws: every device starts and ends at the same times, bit for bit.
        CHECK(sweep.makespan == queue.makespan);
        REQUIRE(sweep.per_device.size() == queue.per_device.size());
        for (std::size_t d = 0; d < queue.per_device.size(); ++d) {
          CHECK(sweep.per_device[d].start == queue.per_device[d].start);
          CHECK(sweep.per_device[d].end == queue.per_device[d].end);
          CHECK(sweep.per_device[d].peak_memory_bytes == queue.per_device[d].peak_memory_bytes);
          // Busy time is the drawn costs summed in another order (the event queue moves the plain sum).
          CHECK_THAT(sweep.per_device[d].busy, Catch::Matchers::WithinRel(queue.per_device[d].busy, 1e-12));
        }
        CHECK(sweep.critical_time == ppsim::critical_time_by_device(program, *queue.timeline));
      }
    }
  }
}

TEST_CASE("The critical path found by the sweep holds the path and what is in flight, not every op",
          "[noise][critical]") {
  // 1F1B at p = 4, m = 4096: a node per op would be 32,768 (and a timeline's records more); the live
  // ones are the path so far (the last device runs all its 2m ops on it) and the ops in flight, whose
  // paths meet it a few ops back.
  const ppsim::ScheduleInfo& info = *ppsim::find_schedule("1f1b");
  const ppsim::Program program = info.build({4, 4096, 1});
  ppsim::NoiseModel noise;
  noise.op_cv = {0.1, 0.1, 0.1, 0.1};
  noise.seed = 3;
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{});
  ppsim::Engine engine;
  ppsim::EngineOptions options;
  options.noise = &noise;
  options.record_critical_path = true;
  const ppsim::SimulationOutcome outcome = engine.run(program, costs, options);
  REQUIRE(outcome.result.has_value());
  double on_path = 0;
  for (const double time : outcome.result->critical_time) on_path += time;
  // The path spans the step: its compute is the makespan less the waits on it (none on free links
  // once a device's chain is the binding one), and never more.
  CHECK(on_path <= outcome.result->makespan * (1 + 1e-12));
  CHECK(on_path >= 0.9 * outcome.result->makespan);
  CHECK(engine.critical_path_nodes() <= 2 * 4096 + 8 * 4);
}

TEST_CASE("The critical path needs the in-order sweep: a timeline, paired sends or the event queue are refused",
          "[noise][critical]") {
  const ppsim::Program program = ppsim::find_schedule("1f1b")->build({2, 4, 1});
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{});
  ppsim::Engine engine;
  ppsim::EngineOptions options;
  options.record_critical_path = true;
  options.record_timeline = true;
  CHECK_THROWS_AS(engine.run(program, costs, options), std::invalid_argument);
  options.record_timeline = false;
  options.comm = ppsim::CommMode::kPaired;
  CHECK_THROWS_AS(engine.run(program, costs, options), std::invalid_argument);
  options.comm = ppsim::CommMode::kOverlap;
  options.algorithm = ppsim::EngineAlgorithm::kEventQueue;
  CHECK_THROWS_AS(engine.run(program, costs, options), std::invalid_argument);
}
