// SPDX-License-Identifier: Apache-2.0
#pragma once
// What ppsim plan writes: the table and launch settings as text, the same as JSON for scripts, and
// a self-contained HTML page with the Pareto front of step time against memory.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "study/plan/plan.hpp"

namespace ppsim {

void write_plan_text(const PlanResult& result, std::ostream& out);
nlohmann::ordered_json plan_json(const PlanResult& result);
std::string plan_html(const PlanResult& result);

}  // namespace ppsim
