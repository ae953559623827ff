// SPDX-License-Identifier: Apache-2.0
#include "study/output/pictures.hpp"

#include <vector>

#include "sim/report/chrome_trace.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/svg_timeline.hpp"
#include "study/run/formulas.hpp"

namespace ppsim {
namespace {

std::vector<std::vector<ClosedFormNote>> notes_of(const Scenario& scenario, std::span<const Report> reports) {
  std::vector<std::vector<ClosedFormNote>> notes;
  for (const Report& report : reports) notes.push_back(closed_form_notes(scenario, report));
  return notes;
}

}  // namespace

std::string html_report(const Scenario& scenario, std::span<const Report> reports, double width) {
  return render_html_report(reports, notes_of(scenario, reports), width);
}

std::vector<OutputFile> render_pictures(const Scenario& scenario, std::span<const Report> reports,
                                        const PictureFiles& files) {
  std::vector<OutputFile> outputs;
  if (!files.svg.empty()) {
    std::vector<std::string> captions;
    for (const auto& notes : notes_of(scenario, reports)) captions.push_back(bubble_caption(notes));
    outputs.push_back({files.svg, render_svg(reports, captions, files.width), "--svg"});
  }
  if (!files.html.empty()) outputs.push_back({files.html, html_report(scenario, reports, files.width), "--html"});
  if (!files.trace.empty()) outputs.push_back({files.trace, render_chrome_trace(reports), "--trace"});
  return outputs;
}

void write_pictures(const Scenario& scenario, std::span<const Report> reports, const PictureFiles& files) {
  // All rendered first, then written all or none: one path that cannot be written leaves none.
  write_files_atomically(render_pictures(scenario, reports, files));
}

}  // namespace ppsim
