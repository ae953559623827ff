// SPDX-License-Identifier: Apache-2.0
#pragma once
// The picture files of `ppsim run` and `ppsim compare` (--svg, --html, --trace), and the HTML report
// the default study writes.

#include <span>
#include <string>
#include <vector>

#include "sim/report/report.hpp"
#include "study/common/output_file.hpp"
#include "study/input/scenario.hpp"

namespace ppsim {

// Where the default command (`ppsim` without arguments) writes its HTML report.
inline constexpr const char* kDefaultReportPath = "ppsim-report.html";

struct PictureFiles {
  std::string svg;    // --svg FILE
  std::string html;   // --html FILE
  std::string trace;  // --trace FILE
  double width = 0;   // --width PX of the SVG and HTML figures; 0: grows with the ops (figure_scale)
  bool any() const { return !svg.empty() || !html.empty() || !trace.empty(); }
};

// The HTML report of `reports`, with each schedule's closed forms evaluated for `scenario`.
std::string html_report(const Scenario& scenario, std::span<const Report> reports, double width = 0);

// The files asked for, rendered: the reports need their timelines, kept or digested (a trace only
// from a kept one). `extra` (a trace streamed to disk) joins them, to be written all or none.
std::vector<OutputFile> render_pictures(const Scenario& scenario, std::span<const Report> reports,
                                        const PictureFiles& files);

// Renders and writes every file asked for, all or none. Throws InputError("--svg: cannot write
// PATH") when a file cannot be written.
void write_pictures(const Scenario& scenario, std::span<const Report> reports, const PictureFiles& files);

}  // namespace ppsim
