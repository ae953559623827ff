// SPDX-License-Identifier: Apache-2.0
// The textbook closed forms for GPipe and 1F1B with uniform costs and free links, pinned over a grid
// of (p, m, F:B) and a seeded random sample beyond it.
//
// Why they hold (so that the numbers below are derived, not copied from a run):
// - GPipe: device d runs F(j) at (d + j)F; the last device ends its forwards at (m + p - 1)F and runs
//   B(j) from there back to back; device d's B(j) starts (p - 1 - d)B after the last device's, so
//   device 0 ends at (m + p - 1)F + (p - 1)B + mB = (m + p - 1)(F + B).
// - 1F1B (m >= 1): the same length: the last device runs F(j), B(j) back to back from (p - 1)F, and
//   every other device's steady state keeps pace with it, so device 0's last B ends at (m + p - 1)(F + B).
// - Both do p·m·(F + B) of work, so bubble_ratio = 1 - m/(m + p - 1) = (p - 1)/(m + p - 1) and
//   bubble_overhead = (p·makespan - busy)/busy = (p - 1)/m.
// - Stash: GPipe runs all m forwards before any backward; 1F1B's device d has min(p - d - 1, m) warmup
//   forwards plus the one of its first pair in flight before its first backward: min(p - d, m).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>

#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "sim/engine.hpp"
#include "support/invariants.hpp"

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

struct Ratio {
  double forward;
  double backward;
};

constexpr std::int64_t kActivationBytes = 3 << 20;
constexpr std::int64_t kStaticBytes = std::int64_t{40} << 30;

ppsim::UniformCostModel uniform(double forward, double backward) {
  ppsim::UniformCosts costs;
  costs.forward = ppsim::Duration{forward};
  costs.backward = ppsim::Duration{backward};
  costs.activation_bytes = ppsim::ByteCount{kActivationBytes};
  costs.static_bytes = ppsim::ByteCount{kStaticBytes};
  return ppsim::UniformCostModel(costs);
}

ppsim::Program build(const std::string& name, int p, int m) {
  const ppsim::ScheduleInfo* info = ppsim::find_schedule(name);
  REQUIRE(info != nullptr);
  return info->build({p, m, 1});
}

double expected_peak_stashed(const std::string& name, int p, int m, int d) {
  return name == "gpipe" ? m : std::min(p - d, m);
}

// The closed forms of one (schedule, p, m, F, B) point, to 1e-12 relative. The two ratios cancel
// (bubble_ratio = 1 - busy/(p makespan)): their absolute rounding error is that of the quotient, a few
// 1e-16 when busy and makespan are summed in different orders, so a bubble near zero (p = 1: zero;
// p = 2, m = 512: 0.002) is held to 1e-13 absolute where that is looser than 1e-12 relative.
void check_closed_forms(ppsim::Engine& engine, const std::string& name, int p, int m, Ratio r) {
  const ppsim::Program program = build(name, p, m);
  const ppsim::UniformCostModel costs = uniform(r.forward, r.backward);
  const ppsim::SimulationOutcome outcome = engine.run(program, costs);
  REQUIRE(outcome.result.has_value());
  const ppsim::Result& result = *outcome.result;
  const double step = r.forward + r.backward;

  CHECK_THAT(result.makespan, WithinRel((m + p - 1) * step, 1e-12));
  const double bubble = static_cast<double>(p - 1) / (m + p - 1);
  const double overhead = static_cast<double>(p - 1) / m;
  CHECK_THAT(result.bubble_ratio, WithinRel(bubble, 1e-12) || WithinAbs(bubble, 1e-13));
  CHECK_THAT(result.bubble_overhead, WithinRel(overhead, 1e-12) || WithinAbs(overhead, 1e-13));
  CHECK_THAT(result.total_busy, WithinRel(p * m * step, 1e-12));
  CHECK(result.compute_ops == 2 * static_cast<std::int64_t>(p) * m);
  for (int d = 0; d < p; ++d) {
    const ppsim::DeviceFigures& device = result.per_device[static_cast<std::size_t>(d)];
    const double stashed = expected_peak_stashed(name, p, m, d);
    INFO("device " << d);
    CHECK(device.peak_stashed == stashed);
    CHECK(device.peak_activation_bytes == static_cast<std::int64_t>(stashed) * kActivationBytes);
    CHECK(device.peak_memory_bytes == kStaticBytes + device.peak_activation_bytes);
  }
}

}  // namespace

TEST_CASE("GPipe and 1F1B with uniform costs and free links meet the closed forms for p up to 16, m up to 64") {
  const std::string name = GENERATE(as<std::string>{}, "gpipe", "1f1b");
  const Ratio ratio = GENERATE(values<Ratio>({{1, 2}, {1, 1}, {1, 3}, {0.7, 1.3}}));
  const int p = GENERATE(range(1, 17));
  ppsim::Engine engine;
  for (int m = 1; m <= 64; ++m) {
    INFO(name << " p=" << p << " m=" << m << " F=" << ratio.forward << " B=" << ratio.backward);
    check_closed_forms(engine, name, p, m, ratio);
  }
}

TEST_CASE("The closed forms hold on a seeded random sample of p up to 64, m up to 512 and any F, B") {
  std::mt19937_64 random(0x5eed'2019'0001ULL);  // fixed: the same 200 points on every run
  std::uniform_int_distribution<int> devices(1, 64);
  std::uniform_int_distribution<int> microbatches(1, 512);
  std::uniform_real_distribution<double> cost(0.1, 10.0);
  ppsim::Engine engine;
  for (int point = 0; point < 200; ++point) {
    const int p = devices(random);
    const int m = microbatches(random);
    const Ratio ratio{cost(random), cost(random)};
    const std::string name = point % 2 == 0 ? "gpipe" : "1f1b";
    INFO(name << " p=" << p << " m=" << m << " F=" << ratio.forward << " B=" << ratio.backward);
    check_closed_forms(engine, name, p, m, ratio);
  }
}

TEST_CASE("1F1B does not halve GPipe's bubble, it bounds the stash at p") {
  struct Point {
    int p;
    int m;
  };
  const Point point = GENERATE(values<Point>({{2, 2}, {4, 8}, {8, 8}, {8, 32}, {16, 64}, {4, 3}}));
  const ppsim::UniformCostModel costs = uniform(1, 2);
  ppsim::Engine engine;
  const auto gpipe = engine.run(build("gpipe", point.p, point.m), costs).result;
  const auto one_f_one_b = engine.run(build("1f1b", point.p, point.m), costs).result;
  REQUIRE(gpipe.has_value());
  REQUIRE(one_f_one_b.has_value());
  INFO("p=" << point.p << " m=" << point.m);

  // Same makespan, same bubble: reordering the ops does not shorten the fill and drain.
  CHECK(one_f_one_b->makespan == Approx(gpipe->makespan).epsilon(1e-12));
  CHECK(one_f_one_b->bubble_ratio == Approx(gpipe->bubble_ratio).epsilon(1e-12));
  CHECK(one_f_one_b->bubble_ratio > 0.5 * gpipe->bubble_ratio);
  // What 1F1B buys is memory: device 0 stashes min(p, m) micro-batches instead of m.
  CHECK(gpipe->per_device.front().peak_stashed == point.m);
  CHECK(one_f_one_b->per_device.front().peak_stashed == std::min(point.p, point.m));
  CHECK(one_f_one_b->per_device.back().peak_stashed == 1);
}

TEST_CASE("Every run of the closed-form grid with p*m <= 256 satisfies the engine invariants") {
  const std::string name = GENERATE(as<std::string>{}, "gpipe", "1f1b");
  const Ratio ratio = GENERATE(values<Ratio>({{1, 2}, {0.7, 1.3}}));
  const ppsim::UniformCostModel costs = uniform(ratio.forward, ratio.backward);
  for (int p = 1; p <= 16; ++p) {
    for (int m = 1; m <= 64 && p * m <= 256; ++m) {
      INFO(name << " p=" << p << " m=" << m);
      const ppsim::Result result = ppsim::run_checked(build(name, p, m), costs);
      CHECK_THAT(result.makespan, WithinRel((m + p - 1) * (ratio.forward + ratio.backward), 1e-12));
    }
  }
}
