// SPDX-License-Identifier: Apache-2.0
// The sweep's closed-form fast path (study/run/closed_form_point.hpp) must give the simulation's
// figures to the last bit wherever it answers, and must decline where the closed forms are not
// exact: the output bytes of a sweep do not depend on --simulate-all.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "schedules/registry.hpp"
#include "sim/engine.hpp"
#include "study/common/errors.hpp"
#include "study/run/closed_form_point.hpp"
#include "study/run/study.hpp"
#include "support/same_figures.hpp"

namespace {

struct Costs {
  double forward;
  double backward;
  double latency;
  std::int64_t message_bytes;
};

ppsim::Scenario scenario_of(const std::string& schedule, int p, int m, int v, const Costs& costs) {
  ppsim::Scenario scenario;
  scenario.schedules = {schedule};
  scenario.params = {p, m, v};
  scenario.forward = {ppsim::Duration{costs.forward}};
  scenario.backward = {ppsim::Duration{costs.backward}};
  scenario.activation_bytes = {ppsim::ByteCount{3 << 20}};
  scenario.static_bytes = {ppsim::ByteCount{12345}};
  scenario.latency = ppsim::Duration{costs.latency};
  scenario.message_bytes = {ppsim::ByteCount{costs.message_bytes}};
  scenario.bandwidth = ppsim::Bandwidth{1e9};
  return scenario;
}

}  // namespace

TEST_CASE("The closed-form fast path gives the simulated figures to the last bit wherever it answers") {
  const Costs costs = GENERATE(Costs{1, 2, 0, 0}, Costs{0.5, 1.25, 0, 0}, Costs{3, 3, 0, 0}, Costs{0.1, 0.2, 0, 0},
                               Costs{1, 2, 0.5, 0}, Costs{1, 2, 0, 1000});
  int answered = 0;
  int declined = 0;
  ppsim::Engine engine;
  for (const char* schedule : {"gpipe", "1f1b", "interleaved-1f1b", "looped-bfs", "zb-h1", "zbv", "dualpipev"}) {
    const ppsim::ScheduleInfo& info = *ppsim::find_schedule(schedule);
    for (int p = 1; p <= 8; ++p) {
      for (int m = 1; m <= 3 * p + 1; ++m) {
        for (const int v : {1, 2, 3}) {
          if (info.check({p, m, v})) continue;
          const ppsim::Scenario scenario = scenario_of(schedule, p, m, v, costs);
          INFO(schedule << " p=" << p << " m=" << m << " v=" << v << " F=" << costs.forward
                        << " B=" << costs.backward << " L=" << costs.latency << " bytes=" << costs.message_bytes);
          const ppsim::Report simulated = ppsim::simulate_schedule(scenario, schedule, false, engine);
          const ppsim::Report summary = ppsim::summarize_schedule(scenario, schedule, engine);
          const ppsim::Result& a = simulated.result;
          const ppsim::Result& b = summary.result;
          if (b.per_link.empty() && !a.per_link.empty()) {
            ++answered;  // the fast path leaves the links out; the simulation always has them for p > 1
          } else {
            ++declined;
          }
          ppsim::test::check_same_summary(a, b);
        }
      }
    }
  }
  const bool exact = costs.latency == 0 && costs.message_bytes == 0 && costs.forward != 0.1;
  // Dyadic costs on free links: GPipe, 1F1B and looped BFS always, interleaved 1F1B where p | m.
  if (exact) CHECK(answered > 200);
  if (!exact) CHECK(answered == 0);
  CHECK(declined > 0);
}

TEST_CASE("The closed-form fast path declines what its forms do not cover exactly") {
  const Costs free{1, 2, 0, 0};
  CHECK(ppsim::closed_form_report(scenario_of("1f1b", 4, 8, 1, free), "1f1b").has_value());
  CHECK_FALSE(ppsim::closed_form_report(scenario_of("zbv", 4, 8, 2, free), "zbv").has_value());  // I/W split stashes
  CHECK_FALSE(ppsim::closed_form_report(scenario_of("1f1b", 4, 8, 1, {0.1, 0.2, 0, 0}), "1f1b").has_value());
  CHECK_FALSE(ppsim::closed_form_report(scenario_of("1f1b", 4, 8, 1, {1, 2, 1e-3, 0}), "1f1b").has_value());
  ppsim::Scenario per_stage = scenario_of("1f1b", 4, 8, 1, free);
  per_stage.forward = {ppsim::Duration{1}, ppsim::Duration{1}, ppsim::Duration{1}, ppsim::Duration{1.5}};
  CHECK_FALSE(ppsim::closed_form_report(per_stage, "1f1b").has_value());
  // Sums of 2^53 units would round: F = 2^40 at m = 2^14 is past that.
  CHECK_FALSE(ppsim::closed_form_report(scenario_of("gpipe", 4, 1 << 14, 1, {0x1p40, 0x1p41, 0, 0}), "gpipe")
                  .has_value());
}

TEST_CASE("The closed-form fast path skips the points a simulation refuses, W longer than B", "[regression]") {
  ppsim::Scenario heavy_weight = scenario_of("1f1b", 4, 8, 1, {1, 2, 0, 0});
  heavy_weight.weight = {ppsim::Duration{3}};
  CHECK_FALSE(ppsim::closed_form_report(heavy_weight, "1f1b").has_value());
  ppsim::Engine engine;
  CHECK_THROWS_AS(ppsim::summarize_schedule(heavy_weight, "1f1b", engine), ppsim::InputError);
}

TEST_CASE("The closed-form exactness bound covers looped BFS's longer makespan at m < p", "[regression]") {
  // Looped BFS at m < p runs max(m, p)·v + min(m, p) - 1 ops end to end, more than m·v + p: here
  // 128 ops of 2^25 + 2^26, past 2^53 units of 2^-20, which the engine's sums would round.
  CHECK_FALSE(
      ppsim::closed_form_report(scenario_of("looped-bfs", 64, 1, 2, {0x1p25, 0x1p26, 0, 0}), "looped-bfs").has_value());
  CHECK(ppsim::closed_form_report(scenario_of("looped-bfs", 64, 1, 2, {1, 2, 0, 0}), "looped-bfs").has_value());
}
