// SPDX-License-Identifier: Apache-2.0
#pragma once
// A published closed form evaluated for one simulated scenario, beside the simulated figure: what
// `ppsim formulas` prints as a row, and what the pictures write next to the bubble.

#include <string>
#include <vector>

#include "schedules/closed_forms.hpp"

namespace ppsim {

struct ClosedFormNote {
  Figure figure = Figure::kMakespan;
  int device = -1;         // the device of a per-device figure; -1 for the whole pipeline
  std::string expression;  // as people write it, "(p-1)/(m+p-1)"
  bool holds = false;      // the scenario is inside the formula's regime
  double predicted = 0;    // the closed form's value, when it holds
  double simulated = 0;
  std::string verdict;  // "agrees", "DIFFERS", or "outside: <regime>"
};

// "bubble_ratio", or "peak_stashed d2" for a per-device figure.
std::string note_figure_name(const ClosedFormNote& note);

// "(p-1)/(m+p-1) = 0.272727 (agrees)", or "(p-1)/(m+p-1): outside: <regime>".
std::string note_text(const ClosedFormNote& note);

// The notes on a schedule's bubble (bubble_ratio, bubble_overhead, device 0's bubble) in one line,
// "closed form: ...": those whose regime holds, or else the first with its regime; says so when the
// schedule has none.
std::string bubble_caption(const std::vector<ClosedFormNote>& notes);

}  // namespace ppsim
