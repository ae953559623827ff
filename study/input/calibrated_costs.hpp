// SPDX-License-Identifier: Apache-2.0
#pragma once
// --calibrated-from: a scenario's costs measured from a real run instead of given.
// resolve_calibration reads the files once (a cache keeps the last few, so a sweep's points share
// one read) and makes the run's p, m and schedule the defaults; calibrated_costs_for_schedule then
// gives each schedule's stages their measured costs, resampled over the model's depth when the
// schedule cuts it into another number of stages. Settings given beside it win.

#include "study/input/scenario.hpp"

namespace ppsim {

void resolve_calibration(Scenario& scenario);
// After the schedule's v is known (scenario_for_schedule).
void calibrated_costs_for_schedule(Scenario& scenario);

}  // namespace ppsim
