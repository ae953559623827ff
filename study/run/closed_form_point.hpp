// SPDX-License-Identifier: Apache-2.0
#pragma once
// A sweep point answered by its schedule's closed forms instead of a simulation, where they are
// exact: uniform costs on free links, for the schedules that stash whole micro-batches (GPipe,
// 1F1B, interleaved 1F1B, looped BFS), inside each form's regime (schedules/closed_forms.cpp, the
// regime `ppsim formulas --check` verifies), and with costs whose sums the engine adds up without
// rounding (multiples of 2^-20 far below 2^53 of them), so the figures are the simulation's to the
// last bit. tests/sweep_test.cpp checks that on a grid; `ppsim sweep --simulate-all` turns it off.

#include <optional>
#include <string_view>

#include "sim/report/report.hpp"
#include "study/input/scenario.hpp"

namespace ppsim {

// `scenario` as the schedule runs it (scenario_for_schedule, its size checked). The report carries
// the figures a sweep point reads: makespan, bubble ratio and overhead, busy time, comm ratio,
// messages, and per device busy, idle and peak stashes and memory; no phases, times or links.
std::optional<Report> closed_form_report(const Scenario& scenario, std::string_view schedule);

}  // namespace ppsim
