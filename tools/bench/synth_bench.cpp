// SPDX-License-Identifier: Apache-2.0
// ppsim synth at the size: p = 16, m = 64 on the V at V-Half's memory (9 GiB of 1 GiB stage
// stashes per device's share, split over the two chunks), with its default replay budget; the
// issue's budget is 10 s. Also the list scheduling alone, per policy.
#include <benchmark/benchmark.h>

#include "models/uniform_cost_model.hpp"
#include "synth/list_scheduler.hpp"
#include "synth/search.hpp"
#include "synth/stage_costs.hpp"

namespace {

ppsim::UniformCostModel per_chunk() {
  ppsim::UniformCosts costs;
  costs.forward = ppsim::Duration{0.5};
  costs.backward = ppsim::Duration{1};
  costs.weight = ppsim::Duration{0.5};
  costs.activation_bytes = ppsim::ByteCount{std::int64_t{1} << 29};  // half of 1 GiB per chunk
  return ppsim::UniformCostModel(costs);
}

ppsim::SynthRequest request() {
  ppsim::SynthRequest r;
  r.shape = {16, 64, ppsim::v_stage_mapping(16)};
  r.v = 2;
  r.memory_limit = std::int64_t{9} << 30;
  r.time_limit = 3600;  // the budget of replays ends it, never the clock
  return r;
}

void BM_SynthVHalfMemoryP16M64(benchmark::State& state) {
  const auto costs = per_chunk();
  const ppsim::SynthRequest r = request();
  std::int64_t replays = 0;
  for (auto _ : state) {
    const ppsim::SynthOutcome outcome = ppsim::synthesize(r, costs);
    replays = outcome.replays;
    benchmark::DoNotOptimize(outcome.makespan);
  }
  state.counters["replays"] = static_cast<double>(replays);
}

void BM_ListScheduleP16M64(benchmark::State& state) {
  const auto costs = per_chunk();
  const ppsim::SynthRequest r = request();
  const auto stages = ppsim::stage_costs(costs, r.shape.stage_device);
  ppsim::ListPolicy policy;
  policy.reserve_deeper = true;  // without it a V this tight fills with chunk-0 stashes and stops
  std::size_t ops = 0;
  for (auto _ : state) {
    auto program = ppsim::list_schedule(r.shape, stages, r.memory_limit, policy);
    ops = program ? program->num_ops() : 0;
    benchmark::DoNotOptimize(program);
  }
  state.counters["ops"] = static_cast<double>(ops);
}

}  // namespace

BENCHMARK(BM_SynthVHalfMemoryP16M64)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_ListScheduleP16M64)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
