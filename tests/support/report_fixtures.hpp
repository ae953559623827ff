// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the reporter tests: a Report from a simulated program, and text split into lines.

#include <string>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/program.hpp"
#include "sim/report/report.hpp"

namespace ppsim {

// Simulates `program` with a timeline (REQUIREs that it finishes) and wraps it as a Report.
Report simulate_report(const std::string& name, Program program, const UniformCosts& costs = {});

std::vector<std::string> lines_of(const std::string& text);

}  // namespace ppsim
