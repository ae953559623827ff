// SPDX-License-Identifier: Apache-2.0
#include "sim/report/ascii_timeline.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace ppsim {
namespace {

bool several_stages(const Report& report) { return report.program.num_stages() > report.program.num_devices; }

}  // namespace

TimelineGrid choose_timeline_grid(const Timeline& timeline, std::size_t max_columns) {
  TimelineGridFinder finder(0, false, std::numeric_limits<std::size_t>::max() - 1);
  for (const Span& span : timeline.spans) finder.on_span(span);
  return finder.grid(max_columns);
}

std::size_t timeline_columns_for_width(const Report& report, std::size_t characters) {
  const Program& program = report.program;
  std::size_t label = 1;
  if (report.ascii_timeline) {
    label = report.ascii_timeline->widest_label();
  } else {
    for (const auto& list : program.actions) {
      for (const Action& action : list) {
        // A pair's label is both halves' with a "+"; counting the forward's twice and one more bounds it.
        const std::size_t width = cell_label(action, several_stages(report)).size();
        label = std::max(label, action.fused_with_next ? 2 * width + 2 : width);
      }
    }
  }
  return timeline_columns(label, program.num_devices, characters);
}

std::string render_ascii_timeline(const Report& report, std::size_t max_columns) {
  if (!report.result.timeline) {
    if (!report.ascii_timeline) return "(no timeline recorded)\n";
    if (report.ascii_timeline->grid().columns == 0) return "(empty timeline: no op takes any time)\n";
    return report.ascii_timeline->render();
  }
  const Timeline& timeline = *report.result.timeline;
  const TimelineGrid grid = choose_timeline_grid(timeline, max_columns);
  if (grid.columns == 0) return "(empty timeline: no op takes any time)\n";

  int devices = std::max(report.result.p, report.program.num_devices);
  for (const Span& span : timeline.spans) devices = std::max(devices, span.device + 1);
  // Spans per device in start order; stable, so zero-length ops keep their program order.
  std::vector<std::vector<const Span*>> rows(static_cast<std::size_t>(devices));
  for (const Span& span : timeline.spans) rows[static_cast<std::size_t>(span.device)].push_back(&span);
  AsciiTimelineDigest digest(grid, rows.size(), several_stages(report), 1);
  for (auto& row : rows) {
    std::stable_sort(row.begin(), row.end(), [](const Span* a, const Span* b) { return a->start < b->start; });
    for (const Span* span : row) digest.on_span(*span);
  }
  digest.finish();
  return digest.render();
}

}  // namespace ppsim
