// SPDX-License-Identifier: Apache-2.0
#pragma once
// One self-contained HTML page comparing schedules: the summary table, every schedule's timeline
// and memory curve on one shared time axis, and the closed forms beside the simulated bubble.
// Inline CSS and SVG only (no scripts, fonts or links), so it opens anywhere, offline. It is also
// well-formed XML, so the tests parse it with the same checker as the SVG.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "sim/report/closed_form_note.hpp"
#include "sim/report/report.hpp"

namespace ppsim {

// Where a device's lane is drawn, in CSS px from the page's top-left corner.
struct HtmlLane {
  std::size_t schedule = 0;  // index into the reports
  std::size_t device = 0;
  double x = 0;
  double y = 0;
  double width = 0;  // up to the schedule's last op end
  double height = 0;
};

struct HtmlLayout {
  double width = 0;   // the page's content width plus margins
  double height = 0;  // the page's full height
  std::vector<HtmlLane> lanes;
};

// Every block of the page has a fixed height, so lane positions are known without a browser:
// the browser test checks the pixels there.
HtmlLayout html_layout(std::span<const Report> reports, double width = 0);

// `closed_forms[i]`, when given, holds report i's closed forms (ppsim formulas' rows).
// `width`: the figures' width in px, as --width gives it (0: figure_scale's automatic width).
std::string render_html_report(std::span<const Report> reports,
                               std::span<const std::vector<ClosedFormNote>> closed_forms = {}, double width = 0);

}  // namespace ppsim
