// SPDX-License-Identifier: Apache-2.0
// The closed-form table: every entry names a registry schedule, evaluates to the textbook values,
// and agrees with the engine inside its regime.
#include "schedules/closed_forms.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "models/sliced_cost_model.hpp"
#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "sim/engine.hpp"

namespace {

const ppsim::ClosedForm& form(std::string_view schedule, ppsim::Figure figure, bool with_latency = false) {
  for (const auto& candidate : ppsim::closed_forms()) {
    const bool latency_form = std::string_view(candidate.expression).find('L') != std::string_view::npos;
    if (candidate.schedule == schedule && candidate.figure == figure && latency_form == with_latency) return candidate;
  }
  FAIL("no closed form for " << schedule << " " << ppsim::figure_name(figure));
  throw;
}

}  // namespace

TEST_CASE("Every closed form belongs to a registry schedule and cites its source", "[closed-forms]") {
  REQUIRE(!ppsim::closed_forms().empty());
  for (const auto& entry : ppsim::closed_forms()) {
    INFO(entry.schedule << " " << ppsim::figure_name(entry.figure));
    CHECK(ppsim::find_schedule(entry.schedule) != nullptr);
    CHECK_FALSE(entry.expression.empty());
    CHECK_FALSE(entry.regime.empty());
    CHECK_FALSE(entry.source.empty());
  }
}

TEST_CASE("The closed forms give the textbook numbers at p=4, m=8, F=1, B=2", "[closed-forms]") {
  ppsim::FormulaInput in;
  in.params = {4, 8, 1};
  for (const char* schedule : {"gpipe", "1f1b"}) {
    CHECK(form(schedule, ppsim::Figure::kMakespan).value(in, 0) == 33);
    CHECK(form(schedule, ppsim::Figure::kBubbleRatio).value(in, 0) == Approx(3.0 / 11.0));
    CHECK(form(schedule, ppsim::Figure::kBubbleOverhead).value(in, 0) == Approx(3.0 / 8.0));
    CHECK(form(schedule, ppsim::Figure::kMessages).value(in, 0) == 48);
  }
  CHECK(form("gpipe", ppsim::Figure::kPeakStashed).value(in, 3) == 8);
  CHECK(form("1f1b", ppsim::Figure::kPeakStashed).value(in, 0) == 4);
  CHECK(form("1f1b", ppsim::Figure::kPeakStashed).value(in, 3) == 1);
  in.latency = 0.5;
  CHECK(form("gpipe", ppsim::Figure::kMakespan, true).value(in, 0) == 36);
  CHECK(form("1f1b", ppsim::Figure::kMakespan, true).value(in, 0) == 41);
  CHECK_FALSE(form("1f1b", ppsim::Figure::kMakespan).holds(in));  // latency leaves the free-link regime
  CHECK(form("1f1b", ppsim::Figure::kMakespan, true).holds(in));
  in.transfer = 0.1;
  CHECK_FALSE(form("1f1b", ppsim::Figure::kMakespan, true).holds(in));  // queueing is outside every makespan form
  CHECK(form("1f1b", ppsim::Figure::kPeakStashed).holds(in));           // the order alone fixes the stash
}

TEST_CASE("Inside its regime every closed form agrees with the engine", "[closed-forms]") {
  const int p = GENERATE(range(1, 7));
  const int m = GENERATE(1, 2, 5, 12);
  const double latency = GENERATE(0.0, 0.25);
  ppsim::FormulaInput in;
  in.params = {p, m, 1};
  in.forward = 0.7;
  in.backward = 1.9;
  in.weight = 0.9;
  in.latency = latency;
  ppsim::UniformCosts costs;
  costs.forward = ppsim::Duration{in.forward};
  costs.backward = ppsim::Duration{in.backward};
  costs.weight = ppsim::Duration{in.weight};
  costs.latency = ppsim::Duration{latency};
  const ppsim::UniformCostModel model(costs);
  ppsim::Engine engine;
  for (const auto& entry : ppsim::closed_forms()) {
    if (!entry.holds(in)) continue;
    const ppsim::ScheduleInfo* info = ppsim::find_schedule(entry.schedule);
    REQUIRE(info != nullptr);
    if (info->check(in.params)) continue;
    const ppsim::Program program = info->build(in.params);
    // F and B are a micro-batch's: Seq1F1B's k slices cost 1/k of them each.
    const auto outcome = program.units_per_microbatch > 1
                             ? engine.run(program, ppsim::SlicedCostModel(std::make_unique<ppsim::UniformCostModel>(costs),
                                                                          program.units_per_microbatch))
                             : engine.run(program, model);
    REQUIRE(outcome.result);
    INFO(entry.schedule << " " << ppsim::figure_name(entry.figure) << " = " << entry.expression << " p=" << p
                        << " m=" << m << " L=" << latency);
    const auto& result = *outcome.result;
    switch (entry.figure) {
      case ppsim::Figure::kMakespan:
        CHECK(result.makespan == Approx(entry.value(in, 0)).epsilon(1e-12));
        break;
      case ppsim::Figure::kBubbleRatio:
        CHECK(result.bubble_ratio == Approx(entry.value(in, 0)).epsilon(1e-9));
        break;
      case ppsim::Figure::kBubbleOverhead:
        CHECK(result.bubble_overhead == Approx(entry.value(in, 0)).epsilon(1e-9));
        break;
      case ppsim::Figure::kMessages:
        CHECK(static_cast<double>(result.messages) == entry.value(in, 0));
        break;
      case ppsim::Figure::kPeakStashed:
        for (int d = 0; d < p; ++d) {
          CHECK(result.per_device[static_cast<std::size_t>(d)].peak_stashed == Approx(entry.value(in, d)));
        }
        break;
      case ppsim::Figure::kDeviceBubble:
        for (int d = 0; d < p; ++d) {
          const auto& device = result.per_device[static_cast<std::size_t>(d)];
          CHECK(device.end - device.start - device.busy == Approx(entry.value(in, d)).margin(1e-9));
        }
        break;
    }
  }
}
