// SPDX-License-Identifier: Apache-2.0
#pragma once
// The ASCII timeline taken record by record, so a run too large to keep (a table's --timeline above
// 2,000,000 ops) is drawn as the engine runs: one pass finds the grid (TimelineGridFinder), a second
// fills the cells (AsciiTimelineDigest). Memory grows with the devices and the columns, not the ops.
// A kept timeline goes through both too, so it gives the same picture.

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "sim/timeline_sink.hpp"

namespace ppsim {

// How time maps onto columns.
struct TimelineGrid {
  double origin = 0;        // time at the left edge of column 0 (the first op start)
  double slot = 0;          // time one column stands for
  std::size_t columns = 0;  // 0 when there is nothing to draw
  bool exact = false;       // every op start and end falls on a column edge
};

// Gathers what the grid depends on: the first start, last end and shortest duration of the ops that
// take time, and their boundaries while a grid of at most `columns_bound` columns could still fit
// them all (a device with more ops than that rules it out); and the widest cell label.
class TimelineGridFinder final : public TimelineSink {
 public:
  TimelineGridFinder(std::size_t devices, bool several_stages, std::size_t columns_bound);
  void on_span(const Span& span) override;
  void on_message(const MessageSpan&) override {}
  void on_memory(const MemorySample&) override {}

  // The largest slot such that every op boundary is a whole number of slots, when that needs at
  // most `max_columns` (≤ the bound) columns; otherwise makespan / max_columns.
  TimelineGrid grid(std::size_t max_columns) const;
  std::size_t widest_label() const { return widest_label_; }

 private:
  bool several_stages_;
  std::size_t columns_bound_;
  double first_;
  double last_;
  double shortest_;
  std::size_t widest_label_ = 1;
  bool boundaries_kept_ = true;
  std::vector<std::size_t> visible_per_device_;
  std::vector<std::pair<double, double>> boundaries_;  // of the ops that take time, while kept
};

// The cells of each device's row and the column edges where its phases meet (before its first
// backward, after its last forward), for spans given in each device's order.
class AsciiTimelineDigest final : public TimelineSink {
 public:
  AsciiTimelineDigest(const TimelineGrid& grid, std::size_t devices, bool several_stages, std::size_t widest_label);
  void on_span(const Span& span) override;
  void on_message(const MessageSpan&) override {}
  void on_memory(const MemorySample&) override {}
  void finish();

  const TimelineGrid& grid() const { return grid_; }
  std::size_t widest_label() const { return widest_label_; }
  // The picture, as render_ascii_timeline prints it.
  std::string render() const;

 private:
  struct Row {
    std::vector<std::string> cells;
    bool first_backward_seen = false;
    bool last_forward_drawn = false;  // the latest forward noted is a span's own action, not a partner
    double last_forward_end = 0;
    std::set<std::size_t> edges;
  };
  void note(Row& row, const Action& action, const Span* span);

  TimelineGrid grid_;
  bool several_stages_;
  std::size_t widest_label_;
  std::vector<Row> rows_;
};

// Index of the column edge at `time`: the number of columns whose midpoint lies before it.
std::size_t edge_column(double time, const TimelineGrid& grid);

// The cell of one action: `F3`, or `0F3` when a device holds several stages.
std::string cell_label(const Action& action, bool several_stages_per_device);

// The most columns that keep a row within `characters` (at least 16) for `devices` rows and cells
// of `widest_label` characters.
std::size_t timeline_columns(std::size_t widest_label, int devices, std::size_t characters);

}  // namespace ppsim
