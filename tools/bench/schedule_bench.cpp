// SPDX-License-Identifier: Apache-2.0
// The cost of building every registry schedule at p = 100,000 devices: each builder must cost
// O(its actions), never O(p^2) (ZB-V once padded every device to 2p-1 micro-batches and took
// minutes here). Schedules that need m >= p or m >= 2p run at the largest p whose program stays
// under ten million actions. Reported as time per action built; never asserted in a test.
#include <benchmark/benchmark.h>

#include <string>

#include "schedules/registry.hpp"

namespace {

// The smallest m, from 8 up, that the schedule accepts at (p, v).
int smallest_m(const ppsim::ScheduleInfo& info, int p, int v) {
  for (int m = 8; m <= 4 * p + 8; m += (m < 64 ? 1 : m / 8)) {
    if (!info.check(ppsim::ScheduleParams{p, m, v})) return m;
  }
  return 0;
}

void build(benchmark::State& state, const ppsim::ScheduleInfo* info) {
  const int v = info->default_v;
  int p = 100'000;
  int m = smallest_m(*info, p, v);
  // m grows with p for these: shrink p until the program is under ten million actions.
  while (m == 0 || 3.0 * p * v * m > 1e7) {
    p /= 2;
    m = smallest_m(*info, p, v);
  }
  std::size_t actions = 0;
  for (auto _ : state) {
    const ppsim::Program program = info->build(ppsim::ScheduleParams{p, m, v});
    actions = 0;
    for (const auto& list : program.actions) actions += list.size();
    benchmark::DoNotOptimize(program);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(actions));
  state.counters["p"] = p;
  state.counters["m"] = m;
  state.counters["actions"] = static_cast<double>(actions);
  state.counters["ns_per_action"] = benchmark::Counter(static_cast<double>(state.iterations() * actions),
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// One benchmark per registry row, so a new schedule is measured the moment it is added.
const bool kRegistered = [] {
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    if (!info.generated()) continue;  // custom: read from a file
    benchmark::RegisterBenchmark(("BM_Build/" + std::string(info.name)).c_str(), build, &info)
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
