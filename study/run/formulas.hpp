// SPDX-License-Identifier: Apache-2.0
#pragma once
// `ppsim formulas`: each schedule's closed forms beside the simulated figures, and `--check`,
// which compares them over a grid inside each formula's regime.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "schedules/closed_forms.hpp"
#include "sim/report/closed_form_note.hpp"
#include "sim/report/report.hpp"
#include "sim/result.hpp"
#include "study/input/scenario.hpp"

namespace ppsim {

// Relative tolerance of --check (absolute below 1).
inline constexpr double kFormulaTolerance = 1e-9;

// The scenario as a closed form's input, or nothing when it is outside every closed form
// (per-stage lists are not uniform costs).
std::optional<FormulaInput> formula_input(const Scenario& scenario);

// The simulated counterpart of a closed form's figure.
double simulated_figure(const Result& result, Figure figure, int device);

// The closed forms of `report`'s schedule evaluated for `scenario` (as given to simulate_all, before
// a schedule's own v splits the costs), beside the report's figures; empty for a custom schedule.
std::vector<ClosedFormNote> closed_form_notes(const Scenario& scenario, const Report& report);

// Prints the closed forms of the scenario's schedules beside one simulation of each.
void write_formulas(const Scenario& scenario, std::ostream& out);

// What --check covers: every registry schedule over p = 1..8, v = 1..3 and m = 1..4p, each size a
// schedule accepts, unless -s, -p, -v or -m narrow it (a given m is checked at every p).
struct FormulaGrid {
  std::vector<std::string> schedules;  // empty: every schedule
  std::optional<int> p;
  std::optional<int> v;
  std::optional<int> m;
};

// Runs the grid; prints a summary (and every deviation) and returns whether all agreed. A grid in
// which no closed form holds is an InputError: a check that checks nothing must not pass.
bool check_formulas(std::ostream& out, const FormulaGrid& grid = {});

}  // namespace ppsim
