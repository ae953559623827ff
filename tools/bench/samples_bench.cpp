// SPDX-License-Identifier: Apache-2.0
// Monte-Carlo steps over the real schedule: 1,000 samples of ZB-V at p = 8, m = 64 with 5% kernel
// jitter and 10% message jitter, as `ppsim run --samples 1000` runs them (the event queue drawing
// every op's factor, the timeline the critical path walks). The budget: 2 s on one core.
#include <benchmark/benchmark.h>

#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "study/run/monte_carlo.hpp"

namespace {

void BM_ThousandSamplesZBV(benchmark::State& state) {
  ppsim::Scenario scenario;
  scenario.samples = 1000;
  scenario.noise.op_cv.fill(0.05);
  scenario.noise.link_cv = 0.1;
  const ppsim::ScheduleInfo& info = *ppsim::find_schedule("zbv");
  const ppsim::Program program = info.build(ppsim::ScheduleParams{8, 64, 2});
  ppsim::UniformCosts uniform;
  uniform.latency = ppsim::Duration{0.05};
  const ppsim::UniformCostModel costs(uniform);
  for (auto _ : state) {
    const ppsim::SampleFigures figures = ppsim::sample_steps(scenario, program, costs, ppsim::EngineOptions{});
    benchmark::DoNotOptimize(figures.makespan.p99);
  }
  state.counters["ops_per_second"] = benchmark::Counter(
      static_cast<double>(program.num_ops()) * 1000, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK(BM_ThousandSamplesZBV)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
