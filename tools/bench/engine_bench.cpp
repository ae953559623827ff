// SPDX-License-Identifier: Apache-2.0
// Engine throughput (simulated ops per second, ops = compute ops + messages) and the end-to-end
// cost of one small study, the unit of work inside sweeps of hundreds of thousands of points.
#include <benchmark/benchmark.h>

#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"

namespace {

const ppsim::ScheduleInfo& schedule(const char* name) { return *ppsim::find_schedule(name); }

ppsim::UniformCostModel link_costs() {
  ppsim::UniformCosts costs;
  costs.message_bytes = ppsim::ByteCount{1 << 20};
  costs.bandwidth = ppsim::Bandwidth{1e7};
  costs.latency = ppsim::Duration{0.01};
  return ppsim::UniformCostModel(costs);
}

// Replays a prebuilt program: the engine's cost per op, by the algorithm `options` selects (kAuto:
// the in-order sweep without a timeline, the event queue with one).
void simulate(benchmark::State& state, const char* name, bool timeline,
              ppsim::EngineAlgorithm algorithm = ppsim::EngineAlgorithm::kAuto) {
  const ppsim::ScheduleParams params{static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 1};
  const ppsim::ScheduleParams sized{params.p, params.m, schedule(name).default_v};
  const ppsim::Program program = schedule(name).build(sized);
  const ppsim::UniformCostModel model = link_costs();
  ppsim::EngineOptions options;
  options.record_timeline = timeline;
  options.algorithm = algorithm;
  ppsim::Engine engine;
  std::int64_t ops = 0;
  for (auto _ : state) {
    auto outcome = engine.run(program, model, options);
    ops = outcome.result->compute_ops + outcome.result->messages;
    benchmark::DoNotOptimize(outcome);
  }
  state.SetItemsProcessed(state.iterations() * ops);
  state.counters["ops"] = static_cast<double>(ops);
}

void BM_Simulate1F1B(benchmark::State& state) { simulate(state, "1f1b", false); }
void BM_Simulate1F1BEventQueue(benchmark::State& state) {
  simulate(state, "1f1b", false, ppsim::EngineAlgorithm::kEventQueue);
}
void BM_SimulateZBV(benchmark::State& state) { simulate(state, "zbv", false); }
void BM_SimulateZBVEventQueue(benchmark::State& state) {
  simulate(state, "zbv", false, ppsim::EngineAlgorithm::kEventQueue);
}

// Generated as it runs, never stored: what a summary run of a registry schedule does.
void generated(benchmark::State& state, const char* name, int v) {
  const ppsim::ScheduleParams params{static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), v};
  const ppsim::UniformCostModel model = link_costs();
  ppsim::Engine engine;
  std::int64_t ops = 0;
  for (auto _ : state) {
    auto outcome = engine.run(schedule(name).streams(params), model);
    ops = outcome.result->compute_ops + outcome.result->messages;
    benchmark::DoNotOptimize(outcome);
  }
  state.SetItemsProcessed(state.iterations() * ops);
  state.counters["ops"] = static_cast<double>(ops);
}
void BM_Generated1F1B(benchmark::State& state) { generated(state, "1f1b", 1); }
void BM_GeneratedZBV(benchmark::State& state) { generated(state, "zbv", 2); }
void BM_SimulateGPipe(benchmark::State& state) { simulate(state, "gpipe", false); }
void BM_Simulate1F1BWithTimeline(benchmark::State& state) { simulate(state, "1f1b", true); }

// Schedule built from the registry, simulated, summary made: one point of a sweep (the issue's
// definition). `validate` adds the static check the CLI runs on every program before replaying it.
void end_to_end(benchmark::State& state, bool validate) {
  const ppsim::ScheduleParams params{static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 1};
  const ppsim::UniformCostModel model(ppsim::UniformCosts{});
  ppsim::Engine engine;
  for (auto _ : state) {
    const ppsim::Program program = schedule("1f1b").build(params);
    if (validate && ppsim::validate_program(program)) state.SkipWithError("invalid program");
    auto outcome = engine.run(program, model);
    benchmark::DoNotOptimize(outcome.result->bubble_ratio);
  }
}

void BM_EndToEnd1F1B(benchmark::State& state) { end_to_end(state, false); }
void BM_EndToEndValidated1F1B(benchmark::State& state) { end_to_end(state, true); }

}  // namespace

BENCHMARK(BM_Simulate1F1B)->Args({64, 1024})->Args({8, 32})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Simulate1F1BEventQueue)->Args({64, 1024})->Args({8, 32})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SimulateZBV)->Args({64, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SimulateZBVEventQueue)->Args({64, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Generated1F1B)->Args({64, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GeneratedZBV)->Args({64, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SimulateGPipe)->Args({64, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Simulate1F1BWithTimeline)->Args({64, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EndToEnd1F1B)->Args({8, 32})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EndToEndValidated1F1B)->Args({8, 32})->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
