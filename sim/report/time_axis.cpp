// SPDX-License-Identifier: Apache-2.0
#include "sim/report/time_axis.hpp"

#include <cmath>

namespace ppsim {

bool times_in_seconds(const Report& report) { return times_in_seconds(report.scenario); }

bool times_in_seconds(const nlohmann::ordered_json& scenario) {
  if (!scenario.is_object()) return false;
  const auto unit = scenario.find("time-unit");
  if (unit != scenario.end() && unit->is_string()) return unit->get<std::string>() == "s";
  // The transformer cost model (--model) computes its times in seconds from FLOPs and bandwidths.
  return scenario.contains("model");
}

TimeUnit display_time_unit(bool seconds, double extent) {
  if (!seconds) return {};
  if (extent >= 1) return {1, "s"};
  if (extent >= 1e-3) return {1e3, "ms"};
  return {1e6, "µs"};
}

std::vector<double> axis_ticks(double end, int max_ticks) {
  std::vector<double> ticks;
  if (!(end > 0) || max_ticks < 1) return {0};
  const double raw = end / max_ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * power;
  for (const double factor : {1.0, 2.0, 5.0}) {
    if (factor * power >= raw * (1 - 1e-12)) {
      step = factor * power;
      break;
    }
  }
  // Counting steps (not adding them) keeps 0.1-sized steps free of accumulated rounding.
  for (long i = 0;; ++i) {
    const double tick = static_cast<double>(i) * step;
    if (tick > end * (1 + 1e-12)) break;
    ticks.push_back(tick);
  }
  return ticks;
}

double nice_ceiling(double value) {
  if (!(value > 0)) return 1;
  const double power = std::pow(10.0, std::floor(std::log10(value)));
  for (const double factor : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (factor * power >= value * (1 - 1e-12)) return factor * power;
  }
  return 10 * power;
}

}  // namespace ppsim
