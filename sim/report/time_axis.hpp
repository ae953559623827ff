// SPDX-License-Identifier: Apache-2.0
#pragma once
// How the pictures show time: the unit of the axis and where its ticks go.

#include <string>
#include <vector>

#include "sim/report/report.hpp"

namespace ppsim {

// Whether the report's times are seconds: its scenario says "time-unit": "s", or it names a
// "model" (the transformer cost model works in seconds). Otherwise costs were plain numbers in the
// caller's own time unit, and the pictures say "time units".
bool times_in_seconds(const Report& report);
// The same, from the scenario a report will carry (before the run, for a streamed trace).
bool times_in_seconds(const nlohmann::ordered_json& scenario);

// What an axis shows: value = time * scale, in `name` ("s", "ms", "µs" or "time units").
struct TimeUnit {
  double scale = 1;
  std::string name = "time units";
};

// Seconds are shown in the unit that keeps the axis's end (`extent`) between 1 and 1000, down to µs.
TimeUnit display_time_unit(bool seconds, double extent);

// Tick values 0, step, 2*step, ... up to `end`, with step 1, 2 or 5 times a power of ten chosen so
// that there are at most `max_ticks` intervals.
std::vector<double> axis_ticks(double end, int max_ticks);

// The smallest of 1, 2, 2.5, 5 times a power of ten that is >= value (> 0); 1 for value <= 0.
double nice_ceiling(double value);

}  // namespace ppsim
