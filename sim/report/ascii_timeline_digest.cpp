// SPDX-License-Identifier: Apache-2.0
#include "sim/report/ascii_timeline_digest.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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

// An overlapped F&B op shows both halves, "0F3+3B1".
std::string span_label(const Span& span, bool several_stages_per_device) {
  std::string label = cell_label(span.action, several_stages_per_device);
  if (span.action.fused_with_next) label += "+" + cell_label(span.partner, several_stages_per_device);
  return label;
}

}  // namespace

std::size_t edge_column(double time, const TimelineGrid& grid) {
  // Exact grids give the edge itself; scaled grids agree with the midpoint rule used for cells.
  const double x = std::ceil((time - grid.origin) / grid.slot - 0.5 - kTolerance);
  if (x <= 0) return 0;
  return std::min(grid.columns, static_cast<std::size_t>(x));
}

std::string cell_label(const Action& action, bool several_stages_per_device) {
  if (several_stages_per_device) return to_string(action);
  return op_letter(action.op) + std::to_string(action.microbatch);
}

std::size_t timeline_columns(std::size_t widest_label, int devices, std::size_t characters) {
  const std::size_t frame = 3 + std::to_string(std::max(devices - 1, 0)).size();  // "d12 |"
  const std::size_t room = characters > frame ? characters - frame : 0;
  return std::max<std::size_t>(16, room / (widest_label + 1));
}

TimelineGridFinder::TimelineGridFinder(std::size_t devices, bool several_stages, std::size_t columns_bound)
    : several_stages_(several_stages),
      columns_bound_(columns_bound),
      first_(std::numeric_limits<double>::infinity()),
      last_(-std::numeric_limits<double>::infinity()),
      shortest_(std::numeric_limits<double>::infinity()),
      visible_per_device_(devices, 0) {}

void TimelineGridFinder::on_span(const Span& span) {
  // A pair's label is both halves' with a "+"; its second half is an action of its own in the list.
  const std::size_t width = cell_label(span.action, several_stages_).size();
  widest_label_ = std::max(widest_label_, span.action.fused_with_next ? 2 * width + 2 : width);
  if (span.action.fused_with_next) {
    widest_label_ = std::max(widest_label_, cell_label(span.partner, several_stages_).size());
  }
  if (!visible(span)) return;
  first_ = std::min(first_, span.start);
  last_ = std::max(last_, span.end);
  shortest_ = std::min(shortest_, span.end - span.start);
  if (!boundaries_kept_) return;
  // A grid of n columns has room for n ops per device at most (each takes a slot or more).
  const auto device = static_cast<std::size_t>(span.device);
  if (device < visible_per_device_.size() && ++visible_per_device_[device] > columns_bound_ + 1) {
    boundaries_kept_ = false;
    boundaries_.clear();
    boundaries_.shrink_to_fit();
    return;
  }
  boundaries_.emplace_back(span.start, span.end);
}

TimelineGrid TimelineGridFinder::grid(std::size_t max_columns) const {
  TimelineGrid grid;
  max_columns = std::max<std::size_t>(max_columns, 1);
  if (!(last_ > first_)) return grid;  // nothing with a duration: no columns
  grid.origin = first_;
  const double makespan = last_ - first_;
  // Any common divisor of the boundaries divides the shortest op, so the candidates are
  // shortest / k; the first that fits every boundary is the largest.
  for (std::size_t k = 1; boundaries_kept_ && max_columns <= columns_bound_; ++k) {
    const double slot = shortest_ / static_cast<double>(k);
    const double columns = makespan / slot;
    if (columns > static_cast<double>(max_columns) * (1 + kTolerance)) break;
    const bool fits = std::all_of(boundaries_.begin(), boundaries_.end(), [&](const auto& span) {
      return on_grid(span.first, first_, slot) && on_grid(span.second, first_, slot);
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

AsciiTimelineDigest::AsciiTimelineDigest(const TimelineGrid& grid, std::size_t devices, bool several_stages,
                                         std::size_t widest_label)
    : grid_(grid), several_stages_(several_stages), widest_label_(widest_label), rows_(devices) {
  for (Row& row : rows_) row.cells.reserve(grid.columns);
}

void AsciiTimelineDigest::note(Row& row, const Action& action, const Span* span) {
  // `span` is null for a pair's second half: no span has it as its action, so it marks no edge.
  if (is_backward_input(action.op) && !row.first_backward_seen) {
    row.first_backward_seen = true;
    if (span != nullptr) row.edges.insert(edge_column(span->start, grid_));
  }
  if (action.op == Op::kForward) {
    row.last_forward_drawn = span != nullptr;
    if (span != nullptr) row.last_forward_end = span->end;
  }
}

void AsciiTimelineDigest::on_span(const Span& span) {
  const auto device = static_cast<std::size_t>(span.device);
  if (device >= rows_.size()) return;
  Row& row = rows_[device];
  note(row, span.action, &span);
  if (span.action.fused_with_next) note(row, span.partner, nullptr);
  // Each column shows the op covering its midpoint: the first op (in the device's order) ending after it.
  while (row.cells.size() < grid_.columns) {
    const double midpoint = grid_.origin + (static_cast<double>(row.cells.size()) + 0.5) * grid_.slot;
    if (span.end <= midpoint) break;
    row.cells.push_back(span.start <= midpoint ? span_label(span, several_stages_) : ".");
  }
}

void AsciiTimelineDigest::finish() {
  for (Row& row : rows_) {
    row.cells.resize(grid_.columns, ".");
    if (row.last_forward_drawn) row.edges.insert(edge_column(row.last_forward_end, grid_));
    // The row's frame already marks column 0, and nothing follows the last column.
    row.edges.erase(0);
    row.edges.erase(grid_.columns);
  }
}

std::string AsciiTimelineDigest::render() const {
  std::size_t width = 1;
  for (const Row& row : rows_) {
    for (const std::string& cell : row.cells) width = std::max(width, cell.size());
  }
  const auto devices = static_cast<int>(rows_.size());
  const std::size_t name_width = 1 + std::to_string(std::max(devices - 1, 0)).size();
  std::string caption =
      "1 column = " + format_figure(grid_.slot) + (grid_.slot == 1 ? " time unit" : " time units");
  if (!grid_.exact) caption += " (scaled to fit; each cell shows the op at its midpoint)";
  std::string out = caption + "\n";
  out += "legend: | separates warmup | steady | cooldown; . idle\n";
  for (std::size_t d = 0; d < rows_.size(); ++d) {
    std::string line = pad("d" + std::to_string(d), name_width) + " |";
    for (std::size_t c = 0; c < grid_.columns; ++c) {
      if (c > 0) line += rows_[d].edges.contains(c) ? '|' : ' ';
      line += pad(rows_[d].cells[c], width);
    }
    while (line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace ppsim
