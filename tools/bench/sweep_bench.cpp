// SPDX-License-Identifier: Apache-2.0
// ppsim sweep's throughput: a 10,000-point uniform-cost study (two schedules, p up to 16, m up to
// 50, 25 link latencies), run whole with 1 and 2 threads. Points per second is items_per_second.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "study/sweep/sweep_runner.hpp"
#include "study/sweep/sweep_study.hpp"

namespace {

const ppsim::Study& study() {
  static const ppsim::Study kStudy = ppsim::parse_study(nlohmann::ordered_json::parse(R"({
    "fixed": {"forward": 1, "backward": 2, "message-bytes": "16 MiB", "bandwidth": "100 GB/s"},
    "axes": {
      "schedule": ["gpipe", "1f1b"],
      "p": {"from": 2, "to": 16, "times": 2},
      "m": {"from": 1, "to": 50, "step": 1},
      "latency": {"from": 0, "to": 0.96, "step": 0.04}
    }
  })"),
                                                                     "sweep_bench");
  return kStudy;
}

// The bubble table people ask for first (configs/studies/m_vs_p_bubble.json): free links, B = 2F,
// every point inside GPipe's and 1F1B's exact closed forms, answered without simulating unless
// `simulate_all`.
const ppsim::Study& bubble_table() {
  static const ppsim::Study kStudy = ppsim::parse_study(nlohmann::ordered_json::parse(R"({
    "fixed": {"forward": 1, "backward": 2, "activation-bytes": "1 GiB"},
    "axes": {"schedule": ["gpipe", "1f1b"], "p": {"from": 2, "to": 32, "times": 2}, "m": {"from": 4, "to": 640, "step": 4}}
  })"),
                                                                     "sweep_bench");
  return kStudy;
}

void bubble_sweep(benchmark::State& state, bool simulate_all) {
  ppsim::SweepOptions options;
  options.simulate_all = simulate_all;
  std::size_t points = 0;
  for (auto _ : state) {
    const auto results = ppsim::run_sweep(bubble_table(), options);
    points = results.size();
    benchmark::DoNotOptimize(results.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * points));
  state.counters["points"] = static_cast<double>(points);
}
void BM_BubbleTableClosedForms(benchmark::State& state) { bubble_sweep(state, false); }
void BM_BubbleTableSimulated(benchmark::State& state) { bubble_sweep(state, true); }

void BM_Sweep10kPoints(benchmark::State& state) {
  ppsim::SweepOptions options;
  options.threads = static_cast<unsigned>(state.range(0));
  std::size_t points = 0;
  for (auto _ : state) {
    const auto results = ppsim::run_sweep(study(), options);
    points = results.size();
    benchmark::DoNotOptimize(results.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * points));
  state.counters["points"] = static_cast<double>(points);
}

}  // namespace

BENCHMARK(BM_Sweep10kPoints)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BubbleTableClosedForms)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BubbleTableSimulated)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
