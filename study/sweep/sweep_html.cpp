// SPDX-License-Identifier: Apache-2.0
#include "study/sweep/sweep_html.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "sim/report/format.hpp"
#include "sim/report/markup.hpp"
#include "sim/report/time_axis.hpp"
#include "study/sweep/sweep_summary.hpp"

namespace ppsim {
namespace {

// Chart geometry in px: the plotting area sits inside these margins.
constexpr double kChartWidth = 800;
constexpr double kPlotLeft = 72;
constexpr double kPlotRight = 24;
constexpr double kPlotTop = 16;
constexpr double kPlotHeight = 300;
constexpr double kAxisHeight = 44;        // tick labels and the axis's name under the plot
constexpr double kLegendCharWidth = 6.5;  // of an 11px label, generously
constexpr double kLegendRowHeight = 18;
constexpr std::size_t kFrontRows = 20;  // as in the terminal summary

// Tableau 10: distinct at a glance, and readable on white.
constexpr std::array<const char*, 10> kPalette = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                                  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
// Per schedule in the bubble chart, so that schedules with the same bubble still show both.
constexpr std::array<const char*, 4> kDashes = {"", "7 4", "2 3", "10 3 2 3"};

const char* colour(std::size_t i) { return kPalette[i % kPalette.size()]; }

double plot_width() { return kChartWidth - kPlotLeft - kPlotRight; }

// A value axis: where `value` lands between the plot's ends, linear from `low` or in log2.
struct Axis {
  double low = 0;
  double high = 1;
  bool log2 = false;
  double fraction(double value) const {
    if (log2) return (std::log2(value) - std::log2(low)) / (std::log2(high) - std::log2(low));
    return (value - low) / (high - low);
  }
};

double x_of(const Axis& axis, double value) { return kPlotLeft + axis.fraction(value) * plot_width(); }
double y_of(const Axis& axis, double value) { return kPlotTop + (1 - axis.fraction(value)) * kPlotHeight; }

std::string point_at(double x, double y) { return fixed(x, 1) + "," + fixed(y, 1); }

// A legend entry's width: a sample 30 px wide, then the longest label.
double legend_width(const std::vector<std::string>& labels) {
  std::size_t longest = 0;
  for (const std::string& label : labels) longest = std::max(longest, label.size());
  return std::clamp(40 + kLegendCharWidth * static_cast<double>(longest), 120.0, plot_width());
}

std::size_t legend_per_row(double entry_width) {
  return std::max<std::size_t>(1, static_cast<std::size_t>(plot_width() / entry_width));
}

// The chart's <svg> opening tag and its frame; the legend rows follow the axis labels.
std::string open_chart(const std::string& id, std::size_t legend_entries, double entry_width) {
  const std::size_t per_row = legend_per_row(entry_width);
  const std::size_t rows = (legend_entries + per_row - 1) / per_row;
  const double height = kPlotTop + kPlotHeight + kAxisHeight + static_cast<double>(rows) * kLegendRowHeight + 8;
  return "<svg class=\"sweep-chart\" id=\"" + id + "\" width=\"" + fixed(kChartWidth) + "\" height=\"" + fixed(height) +
         "\" viewBox=\"0 0 " + fixed(kChartWidth) + " " + fixed(height) + "\">\n" + "<rect class=\"plot\" x=\"" +
         fixed(kPlotLeft) + "\" y=\"" + fixed(kPlotTop) + "\" width=\"" + fixed(plot_width()) + "\" height=\"" +
         fixed(kPlotHeight) + "\"/>\n";
}

// Where legend entry `i` goes: rows of fixed-width entries under the axis labels.
std::pair<double, double> legend_slot(std::size_t i, double entry_width) {
  const std::size_t per_row = legend_per_row(entry_width);
  return {kPlotLeft + static_cast<double>(i % per_row) * entry_width,
          kPlotTop + kPlotHeight + kAxisHeight + static_cast<double>(i / per_row) * kLegendRowHeight + 8};
}

std::string x_tick(double x, const std::string& label) {
  return "<line class=\"grid\" x1=\"" + fixed(x, 1) + "\" y1=\"" + fixed(kPlotTop) + "\" x2=\"" + fixed(x, 1) +
         "\" y2=\"" + fixed(kPlotTop + kPlotHeight) + "\"/><text class=\"tick\" x=\"" + fixed(x, 1) + "\" y=\"" +
         fixed(kPlotTop + kPlotHeight + 14) + "\" text-anchor=\"middle\">" + xml_escape(label) + "</text>\n";
}

std::string y_tick(double y, const std::string& label) {
  return "<line class=\"grid\" x1=\"" + fixed(kPlotLeft) + "\" y1=\"" + fixed(y, 1) + "\" x2=\"" +
         fixed(kPlotLeft + plot_width()) + "\" y2=\"" + fixed(y, 1) + "\"/><text class=\"tick\" x=\"" +
         fixed(kPlotLeft - 6) + "\" y=\"" + fixed(y + 4, 1) + "\" text-anchor=\"end\">" + xml_escape(label) +
         "</text>\n";
}

std::string axis_names(const std::string& x_name, const std::string& y_name) {
  const double middle_y = kPlotTop + kPlotHeight / 2;
  return "<text class=\"label\" x=\"" + fixed(kPlotLeft + plot_width() / 2) + "\" y=\"" +
         fixed(kPlotTop + kPlotHeight + 34) + "\" text-anchor=\"middle\">" + xml_escape(x_name) + "</text>\n" +
         "<text class=\"label\" x=\"16\" y=\"" + fixed(middle_y) +
         "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " + fixed(middle_y) + ")\">" + xml_escape(y_name) +
         "</text>\n";
}

// A small marker: circle, square, diamond, triangle, by `shape` (the schedule's position), holding
// `content` (a tooltip) when given.
std::string marker(std::size_t shape, double x, double y, const std::string& attributes,
                   const std::string& content = "") {
  const std::string cx = fixed(x, 1);
  const std::string cy = fixed(y, 1);
  std::string tag;
  std::string geometry;
  switch (shape % 4) {
    case 0:
      tag = "circle";
      geometry = "cx=\"" + cx + "\" cy=\"" + cy + "\" r=\"2.6\"";
      break;
    case 1:
      tag = "rect";
      geometry = "x=\"" + fixed(x - 2.4, 1) + "\" y=\"" + fixed(y - 2.4, 1) + "\" width=\"4.8\" height=\"4.8\"";
      break;
    case 2:
      tag = "path";
      geometry = "d=\"M" + cx + " " + fixed(y - 3.4, 1) + "l3.4 3.4l-3.4 3.4l-3.4 -3.4z\"";
      break;
    default:
      tag = "path";
      geometry = "d=\"M" + cx + " " + fixed(y - 3.2, 1) + "l3.2 5.6h-6.4z\"";
  }
  const std::string open = "<" + tag + " " + geometry + attributes;
  return content.empty() ? open + "/>" : open + ">" + content + "</" + tag + ">";
}

// A series of the bubble chart: one schedule, p and v, with the lowest bubble at each m.
struct Series {
  std::string schedule;
  int p = 0;
  int v = 1;
  std::map<int, std::size_t> at_m;  // m -> position in `points`
};

std::vector<std::string> schedule_order(const std::vector<PointResult>& points) {
  std::vector<std::string> order;
  for (const PointResult& point : points) {
    if (point.run && std::find(order.begin(), order.end(), point.schedule) == order.end()) {
      order.push_back(point.schedule);
    }
  }
  return order;
}

std::size_t position_of(const std::vector<std::string>& order, const std::string& schedule) {
  return static_cast<std::size_t>(std::find(order.begin(), order.end(), schedule) - order.begin());
}

// The most lines one bubble chart draws before it is faceted by schedule.
constexpr std::size_t kMaxLinesPerChart = 12;

std::string bubble_chart(const Study& study, const std::vector<PointResult>& points,
                         const std::vector<std::string>& schedules) {
  std::vector<Series> series;
  std::map<std::tuple<std::string, int, int>, std::size_t> series_of;
  std::set<int> ms;
  std::set<std::pair<int, int>> layouts;  // (p, v): a colour each
  double top_bubble = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const PointResult& point = points[i];
    if (!point.run) continue;
    const auto [it, inserted] = series_of.emplace(std::make_tuple(point.schedule, point.p, point.v), series.size());
    if (inserted) series.push_back({point.schedule, point.p, point.v, {}});
    // Over the study's other axes, the lowest bubble (first point on ties), as the choose-m table.
    auto [slot, fresh] = series[it->second].at_m.emplace(point.m, i);
    if (!fresh && point.figures.bubble_ratio < points[slot->second].figures.bubble_ratio) slot->second = i;
    ms.insert(point.m);
    layouts.emplace(point.p, point.v);
    top_bubble = std::max(top_bubble, point.figures.bubble_ratio);
  }
  std::string out = "<h2>Bubble ratio against m</h2>\n";
  if (ms.size() < 2) {
    out += "<p class=\"caption\" id=\"bubble-caption\">";
    out += ms.empty() ? "No point ran, so there is no bubble to draw."
                      : "Every point of the study has m = " + std::to_string(*ms.begin()) +
                            ", so there is no curve of the bubble against m to draw; give the study an m axis "
                            "(or a global-batch or micro-batch axis) to see one.";
    out += "</p>\n";
    return out;
  }
  const bool show_v = std::any_of(series.begin(), series.end(), [](const Series& s) { return s.v != 1; });
  const int m_low = *ms.begin();
  const int m_high = *ms.rbegin();
  Axis x;
  if (m_high > 8 * m_low) {
    x.log2 = true;
    x.low = std::exp2(std::floor(std::log2(m_low)));
    x.high = std::exp2(std::ceil(std::log2(m_high)));
  } else {
    x.high = nice_ceiling(m_high);
  }
  Axis y;
  const bool target_shown = study.bubble_target > 0 && study.bubble_target < 1;
  y.high = nice_ceiling(std::max(top_bubble, target_shown ? study.bubble_target * 1.2 : 0.0));

  auto name_of = [&](const Series& s) {
    return s.schedule + " p=" + std::to_string(s.p) + (show_v ? " v=" + std::to_string(s.v) : "");
  };
  // One chart of the series in `members`; every chart shares the axes, so facets compare at a glance.
  const auto draw = [&](const std::vector<std::size_t>& members, const std::string& id) {
    std::vector<std::string> labels = {"(p-1)/(m+p-1)"};
    for (const std::size_t k : members) labels.push_back(name_of(series[k]));
    const double entry_width = legend_width(labels);
    out += open_chart(id, members.size() + 1, entry_width);
    for (const double tick : axis_ticks(y.high, 5)) out += y_tick(y_of(y, tick), format_figure(tick));
    if (x.log2) {
      const int first = static_cast<int>(std::lround(std::log2(x.low)));
      const int last = static_cast<int>(std::lround(std::log2(x.high)));
      const int stride = std::max(1, (last - first + 11) / 12);
      for (int power = first; power <= last; power += stride) {
        const double m = std::exp2(power);
        out += x_tick(x_of(x, m), format_figure(m));
      }
    } else {
      for (const double tick : axis_ticks(x.high, 8)) out += x_tick(x_of(x, tick), format_figure(tick));
    }
    out += axis_names(x.log2 ? "m, micro-batches (log scale)" : "m, micro-batches", "bubble ratio");

    // The closed form of GPipe and 1F1B (uniform costs, free links), faint, one curve per p.
    std::set<int> ps;
    for (const std::size_t k : members) ps.insert(series[k].p);
    for (const int p : ps) {
      std::string vertices;
      std::size_t count = 0;
      for (const int m : ms) {
        const double bubble = static_cast<double>(p - 1) / static_cast<double>(m + p - 1);
        if (bubble > y.high) continue;  // above the chart: the curve enters it at a larger m
        vertices += (count++ == 0 ? "" : " ") + point_at(x_of(x, m), y_of(y, bubble));
      }
      if (count < 2) continue;
      out += "<polyline class=\"closed-form\" data-p=\"" + std::to_string(p) + "\" points=\"" + vertices + "\"/>\n";
    }
    if (target_shown) {
      const double ty = y_of(y, study.bubble_target);
      out += "<line class=\"target\" x1=\"" + fixed(kPlotLeft) + "\" y1=\"" + fixed(ty, 1) + "\" x2=\"" +
             fixed(kPlotLeft + plot_width()) + "\" y2=\"" + fixed(ty, 1) + "\"/><text class=\"tick target-label\" x=\"" +
             fixed(kPlotLeft + plot_width() - 4) + "\" y=\"" + fixed(ty - 4, 1) + "\" text-anchor=\"end\">target " +
             format_figure(study.bubble_target) + "</text>\n";
    }

    const std::vector<std::pair<int, int>> layout_list(layouts.begin(), layouts.end());
    for (std::size_t slot = 0; slot < members.size(); ++slot) {
      const Series& s = series[members[slot]];
      const std::size_t shape = position_of(schedules, s.schedule);
      const auto layout_index = static_cast<std::size_t>(
          std::find(layout_list.begin(), layout_list.end(), std::make_pair(s.p, s.v)) - layout_list.begin());
      const std::string stroke = colour(layout_index);
      const std::string dash = kDashes[shape % kDashes.size()];
      out += "<g class=\"series\" data-schedule=\"" + xml_escape(s.schedule) + "\" data-p=\"" + std::to_string(s.p) +
             "\" data-v=\"" + std::to_string(s.v) + "\" stroke=\"" + stroke + "\" fill=\"" + stroke + "\">\n";
      out += "<polyline class=\"line\"" + (dash.empty() ? std::string() : " stroke-dasharray=\"" + dash + "\"") +
             " points=\"";
      bool first = true;
      for (const auto& [m, position] : s.at_m) {
        out += (first ? "" : " ") + point_at(x_of(x, m), y_of(y, points[position].figures.bubble_ratio));
        first = false;
      }
      out += "\"/>\n";
      if (s.at_m.size() <= kMaxSeriesMarkers) {
        for (const auto& [m, position] : s.at_m) {
          const PointResult& point = points[position];
          const std::string hollow = point.figures.fits ? "" : " fill=\"#fff\"";
          const std::string title = name_of(s) + " m=" + std::to_string(m) + ": bubble " +
                                    format_figure(point.figures.bubble_ratio) + " (point " + std::to_string(point.index) +
                                    ")";
          out += marker(shape, x_of(x, m), y_of(y, point.figures.bubble_ratio), " class=\"mark\"" + hollow,
                        "<title>" + xml_escape(title) + "</title>") +
                 "\n";
        }
      }
      out += "</g>\n";
      const auto [lx, ly] = legend_slot(slot, entry_width);
      out += "<g class=\"legend\" stroke=\"" + stroke + "\" fill=\"" + stroke + "\"><line class=\"line\" x1=\"" +
             fixed(lx, 1) + "\" y1=\"" + fixed(ly, 1) + "\" x2=\"" + fixed(lx + 24, 1) + "\" y2=\"" + fixed(ly, 1) +
             "\"" + (dash.empty() ? std::string() : " stroke-dasharray=\"" + dash + "\"") + "/>" +
             marker(shape, lx + 12, ly, "") + "<text class=\"tick\" x=\"" + fixed(lx + 30, 1) + "\" y=\"" +
             fixed(ly + 4, 1) + "\">" + xml_escape(name_of(s)) + "</text></g>\n";
    }
    const auto [lx, ly] = legend_slot(members.size(), entry_width);
    out += "<g class=\"legend\"><line class=\"closed-form\" x1=\"" + fixed(lx, 1) + "\" y1=\"" + fixed(ly, 1) +
           "\" x2=\"" + fixed(lx + 24, 1) + "\" y2=\"" + fixed(ly, 1) + "\"/><text class=\"tick\" x=\"" +
           fixed(lx + 30, 1) + "\" y=\"" + fixed(ly + 4, 1) + "\">(p\u22121)/(m+p\u22121)</text></g>\n";
    out += "</svg>\n";
  };
  // Up to kMaxLinesPerChart lines share one chart; beyond that, with several schedules, one small
  // chart per schedule (small multiples), in the order the study's points first ran them.
  std::vector<std::size_t> everything(series.size());
  for (std::size_t k = 0; k < series.size(); ++k) everything[k] = k;
  const bool facets = series.size() > kMaxLinesPerChart && schedules.size() > 1;
  if (!facets) {
    draw(everything, "bubble-chart");
  } else {
    for (std::size_t f = 0; f < schedules.size(); ++f) {
      std::vector<std::size_t> members;
      for (std::size_t k = 0; k < series.size(); ++k) {
        if (series[k].schedule == schedules[f]) members.push_back(k);
      }
      if (members.empty()) continue;
      out += "<h3 class=\"facet\">" + xml_escape(schedules[f]) + "</h3>\n";
      draw(members, "bubble-chart-" + std::to_string(f));
    }
  }
  out +=
      "<p class=\"caption\" id=\"bubble-caption\">" +
      std::string(series.size() > kMaxLinesPerChart && schedules.size() > 1
                      ? "More lines than one chart holds: one chart per schedule, on the same axes. "
                      : "") +
      "One line per schedule, p and v: at each m, the lowest bubble "
      "over the study's other axes (hollow markers: that point does not fit). Colour is p, the dash and marker "
      "the schedule. Faint grey: (p\u22121)/(m+p\u22121), the bubble of GPipe and 1F1B with uniform costs and "
      "free links, for reference.";
  if (target_shown) out += " Dashed red: the bubble target of the choose-m table.";
  out += "</p>\n";
  return out;
}

// The binary unit that keeps `bytes` below 1024 of it.
std::pair<double, std::string> byte_unit(double bytes) {
  constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  double unit = 1;
  std::size_t k = 0;
  while (bytes >= 1024 * unit && k + 1 < kUnits.size()) {
    unit *= 1024;
    ++k;
  }
  return {unit, kUnits[k]};
}

std::string memory_chart(const Study& study, const std::vector<PointResult>& points,
                         const std::vector<std::string>& schedules, const std::vector<std::size_t>& front) {
  std::string out = "<h2>" + std::string(study.objective == Objective::kTime ? "Speed (1 / step time)" : "Throughput") +
                    " against peak memory</h2>\n";
  double top_memory = 0;
  double low_memory = std::numeric_limits<double>::infinity();  // the least positive peak
  double top_speed = 0;
  std::optional<std::int64_t> capacity;
  bool one_capacity = true;
  for (const PointResult& point : points) {
    if (!point.run) continue;
    top_memory = std::max(top_memory, static_cast<double>(point.figures.peak_memory_bytes));
    if (point.figures.peak_memory_bytes > 0) {
      low_memory = std::min(low_memory, static_cast<double>(point.figures.peak_memory_bytes));
    }
    top_speed = std::max(top_speed, pareto_speed(study, point));
    if (point.figures.memory_capacity > 0) {
      if (capacity && *capacity != point.figures.memory_capacity) one_capacity = false;
      capacity = point.figures.memory_capacity;
    }
  }
  if (top_speed <= 0) {
    out += "<p class=\"caption\" id=\"memory-caption\">No point ran, so there is nothing to draw.</p>\n";
    return out;
  }
  // Vertical lines: the study's memory limit, and the hardware's capacity when every point shares it.
  std::vector<std::pair<std::int64_t, std::string>> limits;
  if (study.memory_limit) limits.emplace_back(*study.memory_limit, "memory limit");
  if (capacity && one_capacity && (!study.memory_limit || *capacity != *study.memory_limit)) {
    limits.emplace_back(*capacity, "capacity");
  }
  for (const auto& [bytes, name] : limits) {
    top_memory = std::max(top_memory, static_cast<double>(bytes));
    if (bytes > 0) low_memory = std::min(low_memory, static_cast<double>(bytes));
  }
  const auto [unit, unit_name] = byte_unit(top_memory);
  // Peaks that span more than 10x (a sweep over m, recomputation or the schedule's stash) would
  // crowd the small ones into the left edge on a linear axis: log2 then, by powers of two. Both
  // axes end just past the data (4 %), so that no chart is half empty.
  constexpr double kMargin = 1.04;
  Axis x;
  x.log2 = low_memory > 0 && std::isfinite(low_memory) && top_memory > 10 * low_memory;
  if (x.log2) {
    x.low = std::exp2(std::floor(std::log2(low_memory)));
    x.high = std::exp2(std::ceil(std::log2(top_memory)));
  } else {
    x.high = top_memory * kMargin;
  }
  Axis y;
  y.high = top_speed * kMargin;

  std::vector<std::string> labels = schedules;
  labels.push_back("Pareto front");
  const double entry_width = legend_width(labels);
  out += open_chart("memory-chart", schedules.size() + 2, entry_width);
  for (const double tick : axis_ticks(y.high, 5)) out += y_tick(y_of(y, tick), format_figure(tick));
  if (x.log2) {
    const int first = static_cast<int>(std::lround(std::log2(x.low)));
    const int last = static_cast<int>(std::lround(std::log2(x.high)));
    const int stride = std::max(1, (last - first + 7) / 8);
    for (int power = first; power <= last; power += stride) {
      out += x_tick(x_of(x, std::exp2(power)), format_bytes(static_cast<std::int64_t>(std::exp2(power))));
    }
  } else {
    for (const double tick : axis_ticks(x.high / unit, 8)) {
      out += x_tick(x_of(x, tick * unit), fixed(tick) + " " + unit_name);
    }
  }
  std::string speed_name;
  if (study.objective == Objective::kTime) {
    speed_name = study.model ? "steps per second (1 / step time)" : "steps per time unit (1 / makespan)";
  } else {
    speed_name = study.model ? "tokens per second" : "samples per time unit (m * b / makespan)";
  }
  out += axis_names(x.log2 ? "peak memory of the busiest device (log scale)" : "peak memory of the busiest device",
                    speed_name);
  for (const auto& [bytes, name] : limits) {
    const double lx = x_of(x, static_cast<double>(bytes));
    out += "<line class=\"limit\" x1=\"" + fixed(lx, 1) + "\" y1=\"" + fixed(kPlotTop) + "\" x2=\"" + fixed(lx, 1) +
           "\" y2=\"" + fixed(kPlotTop + kPlotHeight) + "\"/><text class=\"tick limit-label\" x=\"" + fixed(lx - 4, 1) +
           "\" y=\"" + fixed(kPlotTop + 12) + "\" text-anchor=\"end\">" + xml_escape(name + " " + format_bytes(bytes)) +
           "</text>\n";
  }

  // Every point that ran, one dot per pixel and kind, so that a large study stays a small file.
  std::set<std::string> drawn;
  out += "<g class=\"points\">\n";
  for (const PointResult& point : points) {
    if (!point.run) continue;
    const std::string cx = fixed(x_of(x, static_cast<double>(point.figures.peak_memory_bytes)), 1);
    const std::string cy = fixed(y_of(y, pareto_speed(study, point)), 1);
    const std::size_t schedule = position_of(schedules, point.schedule);
    const std::string kind = point.figures.fits ? std::to_string(schedule) : "unfit";
    if (!drawn.insert(kind + " " + cx + " " + cy).second) continue;
    out += point.figures.fits ? "<circle class=\"dot\" cx=\"" + cx + "\" cy=\"" + cy + "\" r=\"2.2\" fill=\"" +
                                    colour(schedule) + "\"/>\n"
                              : "<circle class=\"dot unfit\" cx=\"" + cx + "\" cy=\"" + cy + "\" r=\"2.2\"/>\n";
  }
  out += "</g>\n";

  // The front as a staircase: from each point, the speed holds until the next point's memory.
  if (!front.empty()) {
    std::string indices;
    std::string vertices;
    for (std::size_t k = 0; k < front.size(); ++k) {
      const PointResult& point = points[front[k]];
      const double fx = x_of(x, static_cast<double>(point.figures.peak_memory_bytes));
      const double fy = y_of(y, pareto_speed(study, point));
      if (k > 0) {
        const double previous_y = y_of(y, pareto_speed(study, points[front[k - 1]]));
        vertices += " " + point_at(fx, previous_y) + " ";
        indices += " ";
      }
      vertices += point_at(fx, fy);
      indices += std::to_string(point.index);
    }
    out += "<polyline class=\"front\" data-points=\"" + indices + "\" points=\"" + vertices + "\"/>\n";
    for (const std::size_t position : front) {
      const PointResult& point = points[position];
      out += "<circle class=\"front-point\" data-point=\"" + std::to_string(point.index) + "\" cx=\"" +
             fixed(x_of(x, static_cast<double>(point.figures.peak_memory_bytes)), 1) + "\" cy=\"" +
             fixed(y_of(y, pareto_speed(study, point)), 1) + "\" r=\"4\" fill=\"" +
             colour(position_of(schedules, point.schedule)) + "\"><title>" +
             xml_escape("point " + std::to_string(point.index) + ", " + describe_point(study, point) + ": " +
                        format_figure(pareto_speed(study, point)) + " at " +
                        format_bytes(point.figures.peak_memory_bytes)) +
             "</title></circle>\n";
    }
  }

  for (std::size_t k = 0; k < schedules.size(); ++k) {
    const auto [lx, ly] = legend_slot(k, entry_width);
    out += "<g class=\"legend\"><circle cx=\"" + fixed(lx + 12, 1) + "\" cy=\"" + fixed(ly, 1) + "\" r=\"3\" fill=\"" +
           colour(k) + "\"/><text class=\"tick\" x=\"" + fixed(lx + 30, 1) + "\" y=\"" + fixed(ly + 4, 1) + "\">" +
           xml_escape(schedules[k]) + "</text></g>\n";
  }
  const auto [ux, uy] = legend_slot(schedules.size(), entry_width);
  out += "<g class=\"legend\"><circle class=\"dot unfit\" cx=\"" + fixed(ux + 12, 1) + "\" cy=\"" + fixed(uy, 1) +
         "\" r=\"3\"/><text class=\"tick\" x=\"" + fixed(ux + 30, 1) + "\" y=\"" + fixed(uy + 4, 1) +
         "\">does not fit</text></g>\n";
  const auto [fx, fy] = legend_slot(schedules.size() + 1, entry_width);
  out += "<g class=\"legend\"><line class=\"front\" x1=\"" + fixed(fx, 1) + "\" y1=\"" + fixed(fy, 1) + "\" x2=\"" +
         fixed(fx + 24, 1) + "\" y2=\"" + fixed(fy, 1) + "\"/><text class=\"tick\" x=\"" + fixed(fx + 30, 1) +
         "\" y=\"" + fixed(fy + 4, 1) + "\">Pareto front</text></g>\n";
  out += "</svg>\n";
  out +=
      "<p class=\"caption\" id=\"memory-caption\">Every point that ran, coloured by schedule; grey rings do not "
      "fit. The black staircase is the Pareto front (" +
      std::to_string(front.size()) + (front.size() == 1 ? " point" : " points") +
      "): the best speed for any memory budget, each of its points beating every cheaper one.";
  if (!limits.empty()) out += " Dashed red: the memory a device has.";
  if (top_memory <= 0) out += " No point holds memory: give the study activation-bytes or a model to see it.";
  out += "</p>\n";
  return out;
}

std::string html_table(const SummaryTable& table, const std::string& id) {
  std::string out = "<table id=\"" + id + "\">\n<tr>";
  auto cell_class = [&](std::size_t column) {
    return column < table.align.size() && table.align[column] == Align::kLeft ? " class=\"l\"" : "";
  };
  for (std::size_t c = 0; c < table.header.size(); ++c) {
    out += "<th" + std::string(cell_class(c)) + ">" + xml_escape(table.header[c]) + "</th>";
  }
  out += "</tr>\n";
  for (const std::vector<std::string>& row : table.rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      out += "<td" + std::string(cell_class(c)) + ">" + xml_escape(row[c]) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string page_style() {
  return "body{margin:0;padding:16px 20px;background:#fff;color:#222;font:13px/20px sans-serif;max-width:1200px}\n"
         "h1{margin:0 0 4px;font-size:20px;line-height:32px}\n"
         "h2{margin:20px 0 6px;font-size:16px}\n"
         "p{margin:0 0 6px}\n"
         ".description,.caption,.notes{color:#555;max-width:800px}\n"
         "ul{margin:0 0 6px;padding-left:20px}\n"
         "table{border-collapse:collapse}\n"
         "th,td{padding:1px 10px;white-space:nowrap;text-align:right}\n"
         "th{border-bottom:1px solid #999}\n"
         "th.l,td.l{text-align:left}\n"
         "tr:nth-child(odd) td{background:#f4f4f4}\n"
         "svg{display:block}\n"
         ".sweep-chart text{font-family:sans-serif;fill:#222;stroke:none}\n"
         ".sweep-chart .tick{font-size:11px}\n"
         ".sweep-chart .label{font-size:12px}\n"
         ".sweep-chart .plot{fill:#fafafa;stroke:#bbb;stroke-width:1}\n"
         ".sweep-chart .grid{stroke:#e0e0e0;stroke-width:1}\n"
         ".sweep-chart .line{fill:none;stroke-width:1.5}\n"
         ".sweep-chart .mark{stroke-width:1}\n"
         ".sweep-chart .closed-form{fill:none;stroke:#bbb;stroke-width:1;stroke-dasharray:3 2}\n"
         ".sweep-chart .target,.sweep-chart .limit{stroke:#d62728;stroke-width:1.5;stroke-dasharray:6 4}\n"
         ".sweep-chart .target-label,.sweep-chart .limit-label{fill:#d62728}\n"
         ".sweep-chart .dot{stroke:none;fill-opacity:0.75}\n"
         ".sweep-chart .dot.unfit{fill:none;stroke:#999;stroke-width:1}\n"
         ".sweep-chart .front{fill:none;stroke:#111;stroke-width:2}\n"
         ".sweep-chart .front-point{stroke:#111;stroke-width:1.5}\n";
}

}  // namespace

std::string render_sweep_html(const Study& study, const std::vector<PointResult>& points, std::size_t shard_index,
                              std::size_t shard_count) {
  const SweepCounts counts = sweep_counts(points);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  out += "<title>ppsim sweep: " + xml_escape(study.origin) + "</title>\n";
  out += "<style>\n" + page_style() + "</style>\n</head>\n<body>\n";
  out += "<h1>ppsim sweep: " + xml_escape(study.origin) + "</h1>\n";
  if (!study.description.empty()) out += "<p class=\"description\">" + xml_escape(study.description) + "</p>\n";
  std::string count_line = std::to_string(study.points) + " points";
  if (shard_count > 1) {
    count_line += "; shard " + std::to_string(shard_index) + "/" + std::to_string(shard_count) + " has " +
                  std::to_string(points.size());
  }
  count_line += " · run " + std::to_string(counts.ran) + ", skipped " + std::to_string(counts.skipped) +
                ", not fitting " + std::to_string(counts.unfit);
  out += "<p class=\"counts\" id=\"counts\">" + xml_escape(count_line) + "</p>\n";
  if (!counts.reasons.empty()) {
    out += "<p>Skipped, by reason:</p>\n<ul class=\"reasons\">\n";
    for (const auto& [reason, count] : counts.reasons) {
      out += "<li>" + std::to_string(count) + ": " + xml_escape(reason) + "</li>\n";
    }
    out += "</ul>\n";
  }

  const std::vector<std::string> schedules = schedule_order(points);
  const std::vector<std::size_t> front = pareto_front(study, points);
  out += bubble_chart(study, points, schedules);
  out += memory_chart(study, points, schedules, front);

  if (counts.ran > 0) {
    const std::vector<std::size_t> top = top_points(study, points);
    const bool any_fits = counts.ran > counts.unfit;
    out += "<h2>Top " + std::to_string(top.size()) + " by " + xml_escape(objective_heading(study)) +
           (any_fits ? "" : "; no point fits, so all are ranked") + "</h2>\n";
    out += html_table(point_table_cells(study, points, top, true), "top-table");
    if (!front.empty()) {
      const std::vector<std::size_t> shown(
          front.begin(), front.begin() + static_cast<std::ptrdiff_t>(std::min(front.size(), kFrontRows)));
      out += "<h2>Pareto front, " + std::string(study.objective == Objective::kTime ? "step time" : "throughput") +
             " against peak memory (" + std::to_string(front.size()) + (front.size() == 1 ? " point" : " points") +
             ")</h2>\n";
      out += html_table(point_table_cells(study, points, shown, false), "front-table");
      if (front.size() > shown.size()) {
        out += "<p>... " + std::to_string(front.size() - shown.size()) + " more in the output file</p>\n";
      }
    }
    out += "<h2>Choose m: the smallest m with bubble_ratio &lt;= " + format_figure(study.bubble_target) +
           " for each schedule and p</h2>\n";
    out +=
        "<p class=\"caption\">Over the study's other axes, beside the rule of thumb m &gt;= 2p..4p (\"&gt; M\": "
        "no m up to M reaches it).</p>\n";
    out += html_table(choose_m_cells(study, points), "choose-m-table");
    out += "<h2>Advice</h2>\n";
    const std::vector<std::string> advice = sweep_advice(study, points);
    if (advice.empty()) out += "<p>None: links, m and stage balance look fine.</p>\n";
    if (!advice.empty()) {
      out += "<ul class=\"advice\">\n";
      for (const std::string& line : advice) out += "<li>" + xml_escape(line) + "</li>\n";
      out += "</ul>\n";
    }
  }
  out +=
      "<p class=\"notes\">Written by ppsim sweep; no scripts, fonts or links. The tables are the terminal "
      "summary's.</p>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace ppsim
