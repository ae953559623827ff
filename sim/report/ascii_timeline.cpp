#include "sim/report/ascii_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "sim/report/format.hpp"

namespace ppsim {
namespace {

// Op times are sums of costs, so a boundary may miss a slot edge by rounding noise only.
constexpr double kTolerance = 1e-9;

bool visible(const Span& span) { return span.end > span.start; }

bool on_grid(double time, double origin, double slot) {
  const double x = (time - origin) / slot;
  return std::fabs(x - std::round(x)) <= kTolerance * std::max(1.0, std::fabs(x));
}

// Index of the column edge at `time`: the number of columns whose midpoint lies before it.
// Exact grids give the edge itself; scaled grids agree with the midpoint rule used for cells.
std::size_t edge_column(double time, const TimelineGrid& grid) {
  const double x = std::ceil((time - grid.origin) / grid.slot - 0.5 - kTolerance);
  if (x <= 0) return 0;
  return std::min(grid.columns, static_cast<std::size_t>(x));
}

std::string cell_label(const Action& action, bool several_stages_per_device) {
  if (several_stages_per_device) return to_string(action);
  return op_letter(action.op) + std::to_string(action.microbatch);
}

// An overlapped F&B op shows both halves, "0F3+3B1".
std::string span_label(const Span& span, bool several_stages_per_device) {
  std::string label = cell_label(span.action, several_stages_per_device);
  if (span.action.fused_with_next) label += "+" + cell_label(span.partner, several_stages_per_device);
  return label;
}

// Column edges where a device's phases meet: before its first backward, after its last forward.
// The actions come from the program when it lists this device, else from the spans' own order.
std::set<std::size_t> phase_edges(const std::vector<Span>& spans, const std::vector<Action>* actions,
                                  const TimelineGrid& grid) {
  std::optional<Action> first_backward;
  std::optional<Action> last_forward;
  auto note = [&](const Action& action) {
    if (is_backward_input(action.op) && !first_backward) first_backward = action;
    if (action.op == Op::kForward) last_forward = action;
  };
  if (actions != nullptr) {
    for (const Action& action : *actions) note(action);
  } else {
    for (const Span& span : spans) note(span.action);
  }
  std::set<std::size_t> edges;
  for (const Span& span : spans) {
    if (first_backward && span.action == *first_backward) edges.insert(edge_column(span.start, grid));
    if (last_forward && span.action == *last_forward) edges.insert(edge_column(span.end, grid));
  }
  // The row's frame already marks column 0, and nothing follows the last column.
  edges.erase(0);
  edges.erase(grid.columns);
  return edges;
}

std::string slot_caption(const TimelineGrid& grid) {
  std::string caption = "1 column = " + format_figure(grid.slot) + (grid.slot == 1 ? " time unit" : " time units");
  if (!grid.exact) caption += " (scaled to fit; each cell shows the op at its midpoint)";
  return caption;
}

}  // namespace

TimelineGrid choose_timeline_grid(const Timeline& timeline, std::size_t max_columns) {
  TimelineGrid grid;
  max_columns = std::max<std::size_t>(max_columns, 1);
  double first = std::numeric_limits<double>::infinity();
  double last = -std::numeric_limits<double>::infinity();
  double shortest = std::numeric_limits<double>::infinity();
  for (const Span& span : timeline.spans) {
    if (!visible(span)) continue;
    first = std::min(first, span.start);
    last = std::max(last, span.end);
    shortest = std::min(shortest, span.end - span.start);
  }
  if (!(last > first)) return grid;  // nothing with a duration: no columns
  grid.origin = first;
  const double makespan = last - first;

  // Any common divisor of the boundaries divides the shortest op, so the candidates are
  // shortest / k; the first that fits every boundary is the largest.
  for (std::size_t k = 1;; ++k) {
    const double slot = shortest / static_cast<double>(k);
    const double columns = makespan / slot;
    if (columns > static_cast<double>(max_columns) * (1 + kTolerance)) break;
    const bool fits = std::all_of(timeline.spans.begin(), timeline.spans.end(), [&](const Span& span) {
      return !visible(span) || (on_grid(span.start, first, slot) && on_grid(span.end, first, slot));
    });
    if (fits) {
      grid.slot = slot;
      grid.columns = static_cast<std::size_t>(std::llround(columns));
      grid.exact = true;
      return grid;
    }
  }
  grid.slot = makespan / static_cast<double>(max_columns);
  grid.columns = max_columns;
  grid.exact = false;
  return grid;
}

std::size_t timeline_columns_for_width(const Report& report, std::size_t characters) {
  const Program& program = report.program;
  const bool several_stages = program.num_stages() > program.num_devices;
  std::size_t label = 1;
  for (const auto& list : program.actions) {
    for (const Action& action : list) {
      // A pair's label is both halves' with a "+"; counting the forward's twice and one more bounds it.
      const std::size_t width = cell_label(action, several_stages).size();
      label = std::max(label, action.fused_with_next ? 2 * width + 2 : width);
    }
  }
  const std::size_t frame = 3 + std::to_string(std::max(program.num_devices - 1, 0)).size();  // "d12 |"
  const std::size_t room = characters > frame ? characters - frame : 0;
  return std::max<std::size_t>(16, room / (label + 1));
}

std::string render_ascii_timeline(const Report& report, std::size_t max_columns) {
  if (!report.result.timeline) return "(no timeline recorded)\n";
  const Timeline& timeline = *report.result.timeline;
  const TimelineGrid grid = choose_timeline_grid(timeline, max_columns);
  if (grid.columns == 0) return "(empty timeline: no op takes any time)\n";

  const Program& program = report.program;
  const bool several_stages = program.num_stages() > program.num_devices;
  int devices = std::max(report.result.p, program.num_devices);
  for (const Span& span : timeline.spans) devices = std::max(devices, span.device + 1);

  // Spans per device in start order; stable, so zero-length ops keep their program order.
  std::vector<std::vector<Span>> rows(static_cast<std::size_t>(devices));
  for (const Span& span : timeline.spans) rows[static_cast<std::size_t>(span.device)].push_back(span);
  for (auto& row : rows) {
    std::stable_sort(row.begin(), row.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  }

  // Cells first, so every cell can be padded to the widest label.
  std::vector<std::vector<std::string>> cells(rows.size());
  std::size_t width = 1;
  for (std::size_t d = 0; d < rows.size(); ++d) {
    std::size_t next = 0;
    cells[d].reserve(grid.columns);
    for (std::size_t c = 0; c < grid.columns; ++c) {
      const double midpoint = grid.origin + (static_cast<double>(c) + 0.5) * grid.slot;
      while (next < rows[d].size() && rows[d][next].end <= midpoint) ++next;
      std::string label = ".";
      if (next < rows[d].size() && rows[d][next].start <= midpoint) {
        label = span_label(rows[d][next], several_stages);
      }
      width = std::max(width, label.size());
      cells[d].push_back(std::move(label));
    }
  }

  const std::size_t name_width = 1 + std::to_string(std::max(devices - 1, 0)).size();
  std::string out = slot_caption(grid) + "\n";
  out += "legend: | separates warmup | steady | cooldown; . idle\n";
  for (std::size_t d = 0; d < rows.size(); ++d) {
    const std::vector<Action>* actions = d < program.actions.size() ? &program.actions[d] : nullptr;
    const std::set<std::size_t> edges = phase_edges(rows[d], actions, grid);
    std::string line = pad("d" + std::to_string(d), name_width) + " |";
    for (std::size_t c = 0; c < grid.columns; ++c) {
      if (c > 0) line += edges.contains(c) ? '|' : ' ';
      line += pad(cells[d][c], width);
    }
    while (line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace ppsim
