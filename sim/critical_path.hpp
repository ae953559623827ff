// SPDX-License-Identifier: Apache-2.0
#pragma once
// The critical path of a recorded run: from the op that ends last, back through whatever its start
// waited for (the op before it on its device, or the op whose output it needed, message and all),
// to the first op. What it tells: which device's compute the step's length is made of.

#include <vector>

#include "schedules/program.hpp"
#include "sim/result.hpp"

namespace ppsim {

// Per device, the compute time of its ops on the critical path of `timeline`, a run of `program`.
std::vector<double> critical_time_by_device(const Program& program, const Timeline& timeline);

}  // namespace ppsim
