// SPDX-License-Identifier: Apache-2.0
#pragma once
// SVG pictures of recorded timelines: one lane per device with ops as boxes coloured by kind (and,
// under expert parallelism, a strip beneath it of the MoE layers' dispatch and combine), the
// warm-up / steady / cool-down boundaries, a time axis with units, and memory over time beneath.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "sim/report/report.hpp"
#include "sim/report/figure_digest.hpp"

namespace ppsim {

// Above this many ops (or messages) a figure draws each lane's busy share per bin of a few pixels
// instead of one box per op, so files stay small and browsers stay fast.
inline constexpr std::size_t kMaxDrawnOps = 20'000;

// What every figure of one picture shares, so schedules compare at a glance.
struct FigureScale {
  double time_end = 1;        // right end of the time axis
  bool seconds = false;       // times are seconds (see times_in_seconds)
  bool memory_bytes = false;  // the memory chart shows bytes; otherwise stashed micro-batches
  double memory_top = 1;      // top of the memory chart's value axis
  // Width of a figure whose ops are drawn one box each (an aggregated one keeps kFigureWidth, the
  // width its digest's bins were made for): enough for the busiest device's ops to get a label.
  double width = figure_geometry::kFigureWidth;
};

// Widths a figure may have: --width's range, and the widest the automatic width grows to.
inline constexpr double kMinFigureWidth = 400;
inline constexpr double kMaxFigureWidth = 20000;
inline constexpr double kMaxAutomaticWidth = 4800;
// The px an op's box gets when the width grows with the op count: "63" at 10 px fits in 14.
inline constexpr double kPxPerOp = 14;

// The scale shared by `reports`: the latest op end, the highest memory peak or capacity, and the
// width: `width` px when given (--width), else from kFigureWidth up to kMaxAutomaticWidth as the
// busiest device's drawn ops need kPxPerOp each.
FigureScale figure_scale(std::span<const Report> reports, double width = 0);

struct FigureOptions {
  std::string id_prefix;            // keeps ids unique on a page holding several figures
  std::string caption;              // a second heading line, e.g. the closed form beside the bubble
  bool namespace_attribute = true;  // xmlns on the <svg>: needed in an SVG file, not inside HTML
  std::size_t max_drawn_ops = kMaxDrawnOps;
};

// Where a figure puts things, in px from its top-left corner; the HTML page and the tests use it too.
struct FigureLayout {
  double width = 0;
  double height = 0;
  double plot_left = 0;   // x of time 0
  double plot_width = 0;  // x of the scale's time_end is plot_left + plot_width
  double lane_height = 0;
  std::vector<double> lane_top;    // per device
  std::vector<std::size_t> links;  // indices into result.per_link of the links that get a lane
  std::vector<double> link_top;    // per drawn link
  double link_height = 0;
  std::vector<double> exchange_top;  // per device, the strip of its expert all-to-alls; empty without
  double exchange_height = 0;
  double axis_top = 0;
  double memory_top = 0;  // top of the memory chart's plotting area
  double memory_height = 0;
  bool aggregated = false;  // lanes show busy share per bin instead of one box per op
};

FigureLayout figure_layout(const Report& report, const FigureScale& scale, std::size_t max_drawn_ops = kMaxDrawnOps);

// The x of time `t` on a figure.
double figure_x(const FigureLayout& layout, const FigureScale& scale, double t);

// The CSS the figures' classes need; an SVG file and an HTML page each carry it once.
std::string figure_style();

// One schedule's figure as an <svg> element (no XML declaration).
std::string render_svg_figure(const Report& report, const FigureScale& scale, const FigureOptions& options);

// A standalone SVG document: every report's figure stacked on one shared time axis. `captions`,
// when not empty, holds one caption per report.
std::string render_svg(std::span<const Report> reports, std::span<const std::string> captions = {}, double width = 0);

}  // namespace ppsim
