// SPDX-License-Identifier: Apache-2.0
#include "sim/report/svg_timeline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>

#include "sim/report/figure_digest.hpp"
#include "sim/report/format.hpp"
#include "sim/report/markup.hpp"
#include "sim/report/time_axis.hpp"

namespace ppsim {
namespace {

using figure_geometry::kBinPx;
using figure_geometry::kFigureWidth;
using figure_geometry::kPlotLeft;
using figure_geometry::kPlotRight;

// Vertical layout in px.
constexpr double kTitleBaseline = 18;
constexpr double kCaptionBaseline = 36;
constexpr double kLegendTop = 45;
constexpr double kLanesTop = 66;
constexpr double kLegendRow = 18;  // a second legend row, for the all-to-all strips' key
constexpr double kAxisHeight = 38;
constexpr double kMemoryHeading = 18;
constexpr double kMemoryHeight = 100;
constexpr double kMemoryBottom = 14;
constexpr double kCharWidth = 6.2;  // an 11 px sans-serif character, for placing legend items
constexpr double kDigitWidth = 6;   // a 10 px label character, to decide whether a label fits its box
constexpr double kTinyDigitWidth = 4.8;  // the same at 8 px, for boxes too narrow for 10 px labels

constexpr std::size_t kNumKinds = kNumFigureKinds;
constexpr std::array<const char*, kNumKinds> kKindClass = {"f", "b", "i", "w", "fb"};
constexpr std::array<const char*, kNumKinds> kKindLegend = {"F forward", "B backward", "I input gradient",
                                                            "W weight gradient", "F&B overlapped"};
// Labels are dark on the light boxes and light on the dark ones.
constexpr std::array<const char*, kNumKinds> kLabelClass = {"mb", "mb light", "mb light", "mb", "mb light"};

constexpr std::array<const char*, 10> kDeviceColours = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                                        "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#7f7f7f"};

const char* device_colour(std::size_t d) { return kDeviceColours[d % kDeviceColours.size()]; }

double last_time(const Report& report) {
  double end = 0;
  if (!report.result.timeline) return report.figure_digest ? report.figure_digest->last_time() : report.result.makespan;
  for (const Span& span : report.result.timeline->spans) end = std::max(end, span.end);
  for (const MessageSpan& message : report.result.timeline->messages) end = std::max(end, message.arrival);
  return end;
}

bool has_bytes(const Report& report) {
  return std::any_of(report.result.per_device.begin(), report.result.per_device.end(),
                     [](const DeviceFigures& f) { return f.peak_memory_bytes != 0; });
}

// The digest a figure is drawn from: the report's own (a timeline streamed into it as the engine
// ran), or one filled from its kept timeline here.
std::shared_ptr<const FigureDigest> digest_of(const Report& report, const FigureScale& scale) {
  if (!report.result.timeline) {
    const auto& digest = report.figure_digest;
    if (digest && (digest->time_end() != scale.time_end || digest->memory_bytes() != scale.memory_bytes)) {
      throw std::logic_error("render_svg_figure: the report's figure digest was made for another scale");
    }
    return digest;
  }
  auto digest = std::make_shared<FigureDigest>(scale.time_end, scale.memory_bytes, report.result.per_device.size());
  const Timeline& timeline = *report.result.timeline;
  for (const Span& span : timeline.spans) digest->on_span(span);
  for (const MessageSpan& message : timeline.messages) digest->on_message(message);
  for (const MemorySample& sample : timeline.memory) digest->on_memory(sample);
  for (const ExchangeSpan& exchange : timeline.exchanges) digest->on_exchange(exchange);
  digest->finish();
  return digest;
}

// What the layout needs of a timeline, kept or digested.
struct TimelineCounts {
  bool any = false;  // a timeline was recorded
  bool messages_take_time = false;
  std::size_t spans = 0;
  std::size_t messages = 0;
  std::size_t exchanges = 0;
};

TimelineCounts timeline_counts(const Report& report) {
  TimelineCounts counts;
  if (report.result.timeline) {
    const Timeline& timeline = *report.result.timeline;
    counts.any = true;
    // Messages are worth a lane when they take time: the scenario gave the links a latency or a bandwidth.
    counts.messages_take_time =
        std::any_of(timeline.messages.begin(), timeline.messages.end(), [](const MessageSpan& message) {
          return message.arrival > message.depart_start || message.depart_end > message.depart_start;
        });
    counts.spans = timeline.spans.size();
    counts.messages = timeline.messages.size();
    counts.exchanges = timeline.exchanges.size();
  } else if (report.figure_digest) {
    counts.any = true;
    counts.messages_take_time = report.figure_digest->messages_take_time();
    counts.spans = report.figure_digest->spans();
    counts.messages = report.figure_digest->messages();
    counts.exchanges = report.figure_digest->exchanges();
  }
  return counts;
}

// A box's label, fullest first: with several stages per device the op as torch writes it ("7W0"),
// then the micro-batch alone ("0"; the stage and kind are in the tooltip and the shading); with one,
// the micro-batch. An overlapped pair joins its two with "+".
std::vector<std::string> op_labels(const Span& span, bool several_stages) {
  const auto label = [&](bool full) {
    const auto one = [&](const Action& action) { return full ? to_string(action) : std::to_string(action.microbatch); };
    std::string text = one(span.action);
    if (span.action.fused_with_next) text += "+" + one(span.partner);
    return text;
  };
  if (!several_stages) return {label(false)};
  return {label(true), label(false)};
}

// "t" in the figure's unit: "4.5", as the axis numbers it.
std::string at_time(double time, const TimeUnit& unit) { return format_figure(time * unit.scale); }

// A box's tooltip: the op, where and when it ran and for how long.
std::string op_title(const Span& span, const TimeUnit& unit) {
  std::string title = to_string(span.action);
  if (span.action.fused_with_next) title += "+" + to_string(span.partner);
  return title + " on d" + std::to_string(span.device) + ": " + at_time(span.start, unit) + " to " +
         at_time(span.end, unit) + " " + unit.name + " (" + at_time(span.end - span.start, unit) + " long)";
}

// A message's tooltip: what it carries, its time on the link and its arrival.
std::string message_title(const MessageSpan& message, const TimeUnit& unit) {
  return to_string(message.from) + " d" + std::to_string(message.src) + " to d" + std::to_string(message.dst) +
         ": on the link " + at_time(message.depart_start, unit) + " to " + at_time(message.depart_end, unit) +
         ", arrives " + at_time(message.arrival, unit) + " " + unit.name + ", " + format_bytes(message.bytes);
}

// An all-to-all's tooltip: what moves, for which op, and when.
std::string exchange_title(const ExchangeSpan& exchange, const TimeUnit& unit) {
  return std::string(exchange_name(exchange.kind)) + " all-to-all of " + to_string(exchange.action) +
         (exchange.recomputed ? " (recomputed forward)" : "") + " on d" + std::to_string(exchange.device) + ": " +
         at_time(exchange.start, unit) + " to " + at_time(exchange.end, unit) + " " + unit.name;
}

// For v > 1, each stage's chunk on its device (0 for its lowest stage, 1 for the next, ...): later
// chunks are drawn in lighter shades of their op's colour, so the chunks of one device tell apart.
std::vector<int> chunk_of_stage(const Program& program) {
  std::vector<int> chunk(program.stage_device.size(), 0);
  std::vector<int> seen(static_cast<std::size_t>(std::max(program.num_devices, 0)), 0);
  for (std::size_t s = 0; s < program.stage_device.size(); ++s) {
    const auto d = static_cast<std::size_t>(program.stage_device[s]);
    if (d < seen.size()) chunk[s] = seen[d]++;
  }
  return chunk;
}

// " c1", " c2": the shade class of a chunk (chunks past the third share the third's).
std::string chunk_class(const std::vector<int>& chunk, const Action& action) {
  const auto s = static_cast<std::size_t>(action.stage);
  const int k = s < chunk.size() ? std::min(chunk[s], 2) : 0;
  return k == 0 ? std::string() : " c" + std::to_string(k);
}

// Appends `<rect .../>` with attributes in a fixed order.
void rect(std::string& out, const char* cls, double x, double y, double width, double height,
          const std::string& extra = {}) {
  out += "<rect class=\"";
  out += cls;
  out += "\" x=\"" + fixed(x) + "\" y=\"" + fixed(y) + "\" width=\"" + fixed(std::max(width, 0.0)) + "\" height=\"" +
         fixed(height) + "\"" + extra + "/>\n";
}

void text(std::string& out, const char* cls, double x, double y, const std::string& content,
          const char* anchor = nullptr) {
  out += "<text class=\"";
  out += cls;
  out += "\" x=\"" + fixed(x) + "\" y=\"" + fixed(y) + "\"";
  if (anchor != nullptr) out += std::string(" text-anchor=\"") + anchor + "\"";
  out += ">" + xml_escape(content) + "</text>\n";
}

void line(std::string& out, const char* cls, double x1, double y1, double x2, double y2) {
  out += "<line class=\"";
  out += cls;
  out += "\" x1=\"" + fixed(x1) + "\" y1=\"" + fixed(y1) + "\" x2=\"" + fixed(x2) + "\" y2=\"" + fixed(y2) + "\"/>\n";
}

using Bins = FigureBins;

// Stacked bars of each bin's busy share, one <path> per kind; runs of equal bars merge into one.
void draw_bins(std::string& out, const Bins& bins, double bin_time, double left, double top, double height,
               const std::array<const char*, kNumKinds>& classes) {
  using Heights = std::array<double, kNumKinds>;
  // Steps of a twentieth of the lane (at least half a pixel): finer detail is invisible, and
  // coarser steps merge more bins.
  const double quantum = std::max(0.5, height / 20);
  auto heights_of = [&](const std::array<double, kNumKinds>& busy) {
    Heights heights{};
    for (std::size_t k = 0; k < kNumKinds; ++k) {
      heights[k] = std::round(std::min(busy[k] / bin_time, 1.0) * height / quantum) * quantum;
    }
    return heights;
  };
  std::array<std::string, kNumKinds> paths;
  auto flush = [&](std::size_t from, std::size_t to, const Heights& heights) {
    double bottom = top + height;
    const std::string x = fixed(left + static_cast<double>(from) * kBinPx);
    const std::string w = fixed(static_cast<double>(to - from) * kBinPx);
    for (std::size_t k = 0; k < kNumKinds; ++k) {
      if (heights[k] <= 0) continue;
      const double h = std::min(heights[k], bottom - top);
      paths[k] += "M" + x + "," + fixed(bottom - h) + "h" + w + "v" + fixed(h) + "h-" + w + "z";
      bottom -= h;
    }
  };
  std::size_t run_start = 0;
  Heights run{};
  for (std::size_t b = 0; b < bins.size(); ++b) {
    const Heights heights = heights_of(bins[b]);
    if (b == 0) {
      run = heights;
    } else if (heights != run) {
      flush(run_start, b, run);
      run_start = b;
      run = heights;
    }
  }
  if (!bins.empty()) flush(run_start, bins.size(), run);
  for (std::size_t k = 0; k < kNumKinds; ++k) {
    if (!paths[k].empty()) out += "<path class=\"bin " + std::string(classes[k]) + "\" d=\"" + paths[k] + "\"/>\n";
  }
}

void draw_heading(std::string& out, const Report& report, const FigureScale& scale, const FigureOptions& options,
                  const TimeUnit& unit) {
  const ScheduleParams& params = report.params;
  out += "<text class=\"title\" x=\"8\" y=\"" + fixed(kTitleBaseline) + "\">" + xml_escape(report.schedule) +
         "<tspan class=\"subtitle\"> p=" + std::to_string(params.p) + " m=" + std::to_string(params.m) +
         " v=" + std::to_string(params.v) + " · makespan " + format_figure(report.result.makespan * unit.scale) + " " +
         xml_escape(unit.name) + " · bubble_ratio " + format_figure(report.result.bubble_ratio) + "</tspan></text>\n";
  if (!options.caption.empty()) text(out, "caption", 8, kCaptionBaseline, options.caption);
  (void)scale;
}

// Each device's expert all-to-alls on a thin strip under its lane: a bar per dispatch and combine, or
// their busy share per bin when the lanes are aggregated.
void draw_exchanges(std::string& out, const Report& report, const FigureDigest& digest, const FigureScale& scale,
                    const FigureLayout& layout) {
  if (layout.exchange_top.empty()) return;
  const std::size_t devices = layout.exchange_top.size();
  const TimeUnit unit = display_time_unit(scale.seconds, scale.time_end);
  const double h = layout.exchange_height;
  std::vector<std::string> bars(devices);
  if (!layout.aggregated) {
    for (const ExchangeSpan& exchange : report.result.timeline->exchanges) {
      if (exchange.device < 0 || static_cast<std::size_t>(exchange.device) >= devices) continue;
      const auto d = static_cast<std::size_t>(exchange.device);
      const double x0 = figure_x(layout, scale, exchange.start);
      const double x1 = figure_x(layout, scale, exchange.end);
      bars[d] += std::string("<rect class=\"a2a ") + exchange_name(exchange.kind) + "\" x=\"" + fixed(x0) +
                 "\" y=\"" + fixed(layout.exchange_top[d]) + "\" width=\"" + fixed(std::max(x1 - x0, 0.0)) +
                 "\" height=\"" + fixed(h) + "\"><title>" + xml_escape(exchange_title(exchange, unit)) +
                 "</title></rect>\n";
    }
  }
  const std::array<const char*, kNumKinds> classes = {"a2a dispatch", "a2a combine", "a2a", "a2a", "a2a"};
  for (std::size_t d = 0; d < devices; ++d) {
    out += "<g class=\"all-to-all\" data-device=\"" + std::to_string(d) + "\">\n";
    if (layout.aggregated) {
      draw_bins(out, digest.exchange_lane(d), digest.bin_time(), layout.plot_left, layout.exchange_top[d], h, classes);
    } else {
      out += bars[d];
    }
    out += "</g>\n";
  }
}

// `chunked`: boxes of a device's later chunks are drawn lighter (v > 1, one box per op).
void draw_legend(std::string& out, const FigureDigest& digest, const FigureLayout& layout, const FigureOptions& options,
                 bool chunked) {
  const std::array<bool, kNumKinds>& present = digest.kinds_present();
  double x = 8;
  const double y = kLegendTop;
  auto item = [&](const std::string& swatch, const std::string& label) {
    out += swatch;
    text(out, "legend", x + 14, y + 9, label);
    x += 14 + static_cast<double>(label.size()) * kCharWidth + 14;
  };
  for (std::size_t k = 0; k < kNumKinds; ++k) {
    if (!present[k]) continue;
    std::string swatch;
    const std::string fill = k == kKindFB ? " fill=\"url(#" + options.id_prefix + "fb)\"" : "";
    rect(swatch, (std::string("key ") + kKindClass[k]).c_str(), x, y, 10, 10, fill);
    item(swatch, kKindLegend[k]);
  }
  if (chunked) {
    std::string shades;
    rect(shades, "key f", x, y, 5, 10);
    rect(shades, "key f c1", x + 5, y, 5, 10);
    item(shades, "later chunks");
  }
  std::string idle;
  rect(idle, "idle", x, y, 10, 10);
  item(idle, "idle");
  std::string phase;
  line(phase, "phase", x + 5, y - 1, x + 5, y + 11);
  item(phase, "warm-up | steady | cool-down");
  if (!layout.links.empty()) {
    std::string busy;
    rect(busy, "msg", x, y + 2, 10, 6);
    item(busy, "link busy");
    std::string flight;
    rect(flight, "flight", x, y + 3, 10, 4);
    item(flight, "in flight (latency)");
  }
  // The strips' key on a row of its own, which the lanes leave room for (figure_layout).
  if (!layout.exchange_top.empty()) {
    const double first_row_end = x;
    x = 8;
    const double row = y + kLegendRow;
    text(out, "legend", x, row + 9, "under each lane, its expert all-to-alls:");
    x += 14 + 40 * kCharWidth;
    std::string dispatch;
    rect(dispatch, "a2a dispatch", x, row + 2, 10, 6);
    text(out, "legend", x + 14, row + 9, "dispatch");
    x += 14 + 8 * kCharWidth + 14;
    rect(dispatch, "a2a combine", x, row + 2, 10, 6);
    out += dispatch;
    text(out, "legend", x + 14, row + 9, "combine");
    x = first_row_end;
  }
  if (layout.aggregated) {
    text(out, "legend", x, y + 9,
         std::to_string(digest.spans()) + " ops: bars show busy share per " + fixed(kBinPx) +
             " px");
  }
}

void draw_lanes(std::string& out, const Report& report, const FigureDigest& digest, const FigureScale& scale,
                const FigureLayout& layout, const FigureOptions& options) {
  const std::size_t devices = layout.lane_top.size();
  const bool several_stages = report.program.num_stages() > report.program.num_devices;
  const std::vector<int> chunk = several_stages ? chunk_of_stage(report.program) : std::vector<int>{};
  const TimeUnit unit = display_time_unit(scale.seconds, scale.time_end);
  const double end_x = figure_x(layout, scale, last_time(report));
  // Lane labels every k-th lane when lanes are too thin for a label each.
  const std::size_t label_every =
      layout.lane_height >= 9 ? 1 : static_cast<std::size_t>(std::ceil(9 / layout.lane_height));

  // One box per op needs the kept timeline; aggregated lanes come from the digest.
  std::vector<std::vector<const Span*>> rows(devices);
  if (!layout.aggregated) {
    for (const Span& span : report.result.timeline->spans) {
      if (span.device >= 0 && static_cast<std::size_t>(span.device) < devices) {
        rows[static_cast<std::size_t>(span.device)].push_back(&span);
      }
    }
  }
  for (std::size_t d = 0; d < devices; ++d) {
    const double top = layout.lane_top[d];
    const double h = layout.lane_height;
    out += "<g class=\"lane\" data-device=\"" + std::to_string(d) + "\">\n";
    if (d % label_every == 0) {
      text(out, "label", layout.plot_left - 6, top + h / 2 + 4, "d" + std::to_string(d), "end");
    }
    rect(out, "idle", layout.plot_left, top, end_x - layout.plot_left, h);
    if (layout.aggregated) {
      draw_bins(out, digest.lane(d), digest.bin_time(), layout.plot_left, top, h, kKindClass);
    } else {
      for (const Span* span : rows[d]) {
        const FigureKind kind = figure_kind(*span);
        const double x0 = figure_x(layout, scale, span->start);
        const double x1 = figure_x(layout, scale, span->end);
        const std::string fill = kind == kKindFB ? " fill=\"url(#" + options.id_prefix + "fb)\"" : "";
        const std::string shade = several_stages && kind != kKindFB ? chunk_class(chunk, span->action) : std::string();
        out += "<rect class=\"op " + std::string(kKindClass[kind]) + shade + "\" x=\"" + fixed(x0) + "\" y=\"" +
               fixed(top) + "\" width=\"" + fixed(std::max(x1 - x0, 0.0)) + "\" height=\"" + fixed(h) + "\"" + fill +
               "><title>" + xml_escape(op_title(*span, unit)) + "</title></rect>\n";
        // Every box gets the fullest label that fits it, at 10 px, else at 8 px; none where none fits.
        for (const std::string& label : op_labels(*span, several_stages)) {
          const double chars = static_cast<double>(label.size());
          if (h >= 12 && x1 - x0 >= chars * kDigitWidth + 2) {
            text(out, kLabelClass[kind], (x0 + x1) / 2, top + h / 2 + 3.5, label);
            break;
          }
          if (h >= 9 && x1 - x0 >= chars * kTinyDigitWidth + 0.5) {
            text(out, (std::string(kLabelClass[kind]) + " tiny").c_str(), (x0 + x1) / 2, top + h / 2 + 3, label);
            break;
          }
        }
      }
    }
    // Phase boundaries: before the first backward, after the last forward (as the ASCII timeline).
    const auto& phases = report.result.per_device[d].phases;
    const auto& warmup = phases[static_cast<std::size_t>(Phase::kWarmup)];
    const auto& steady = phases[static_cast<std::size_t>(Phase::kSteady)];
    const auto& cooldown = phases[static_cast<std::size_t>(Phase::kCooldown)];
    std::vector<double> marks;
    if (warmup.ops > 0 && steady.ops + cooldown.ops > 0)
      marks.push_back(steady.ops > 0 ? steady.start : cooldown.start);
    if (cooldown.ops > 0 && warmup.ops + steady.ops > 0) marks.push_back(steady.ops > 0 ? steady.end : warmup.end);
    for (const double t : marks) {
      const double x = figure_x(layout, scale, t);
      line(out, "phase", x, top - 2, x, top + h + 2);
    }
    out += "</g>\n";
  }
  draw_exchanges(out, report, digest, scale, layout);
}

void draw_links(std::string& out, const Report& report, const FigureDigest& digest, const FigureScale& scale,
                const FigureLayout& layout) {
  if (layout.links.empty()) return;
  std::map<std::pair<int, int>, std::size_t> lane_of;
  for (std::size_t i = 0; i < layout.links.size(); ++i) {
    const LinkFigures& link = report.result.per_link[layout.links[i]];
    lane_of[{link.src, link.dst}] = i;
  }
  std::vector<std::string> bars(layout.links.size());
  const double h = layout.link_height;
  const TimeUnit unit = display_time_unit(scale.seconds, scale.time_end);
  // One bar per message needs the kept timeline; aggregated lanes come from the digest.
  const std::vector<MessageSpan> none;
  for (const MessageSpan& message : layout.aggregated ? none : report.result.timeline->messages) {
    const auto it = lane_of.find({message.src, message.dst});
    if (it == lane_of.end()) continue;
    const std::size_t i = it->second;
    const double top = layout.link_top[i];
    const double x0 = figure_x(layout, scale, message.depart_start);
    const double x1 = figure_x(layout, scale, message.depart_end);
    const double x2 = figure_x(layout, scale, message.arrival);
    const std::string title = "<title>" + xml_escape(message_title(message, unit)) + "</title>";
    if (x2 > x1) {
      bars[i] += "<rect class=\"flight\" x=\"" + fixed(x1) + "\" y=\"" + fixed(top + h / 4) + "\" width=\"" +
                 fixed(x2 - x1) + "\" height=\"" + fixed(h / 2) + "\">" + title + "</rect>\n";
    }
    if (x1 > x0) {
      bars[i] += "<rect class=\"msg\" x=\"" + fixed(x0) + "\" y=\"" + fixed(top) + "\" width=\"" + fixed(x1 - x0) +
                 "\" height=\"" + fixed(h) + "\">" + title + "</rect>\n";
    }
  }
  const std::array<const char*, kNumKinds> link_classes = {"msg", "flight", "msg", "msg", "msg"};
  for (std::size_t i = 0; i < layout.links.size(); ++i) {
    const LinkFigures& link = report.result.per_link[layout.links[i]];
    out += "<g class=\"link\" data-src=\"" + std::to_string(link.src) + "\" data-dst=\"" + std::to_string(link.dst) +
           "\">\n";
    text(out, "label small", layout.plot_left - 6, layout.link_top[i] + h - 1,
         std::to_string(link.src) + "→" + std::to_string(link.dst), "end");
    if (layout.aggregated) {
      const FigureBins* busy = lane_of[{link.src, link.dst}] == i ? digest.link(link.src, link.dst) : nullptr;
      draw_bins(out, busy != nullptr ? *busy : Bins{}, digest.bin_time(), layout.plot_left, layout.link_top[i], h,
                link_classes);
    } else {
      out += bars[i];
    }
    out += "</g>\n";
  }
}

void draw_axis(std::string& out, const FigureScale& scale, const FigureLayout& layout, const TimeUnit& unit) {
  const double y = layout.axis_top;
  out += "<g class=\"time-axis\">\n";
  line(out, "axis", layout.plot_left, y, layout.plot_left + layout.plot_width, y);
  // About one tick per 100 px; labels in the display unit.
  for (const double tick : axis_ticks(scale.time_end * unit.scale, 11)) {
    const double x = figure_x(layout, scale, tick / unit.scale);
    line(out, "axis", x, y, x, y + 4);
    text(out, "tick", x, y + 15, format_figure(tick), "middle");
  }
  text(out, "tick", layout.plot_left + layout.plot_width / 2, y + 30, "time (" + unit.name + ")", "middle");
  out += "</g>\n";
}

std::string memory_text(double value, const FigureScale& scale) {
  return scale.memory_bytes ? format_bytes(static_cast<std::int64_t>(std::llround(value))) : format_figure(value);
}

void draw_memory(std::string& out, const Report& report, const FigureDigest& digest, const FigureScale& scale,
                 const FigureLayout& layout) {
  const double top = layout.memory_top;
  const double height = layout.memory_height;
  const double left = layout.plot_left;
  const double right = layout.plot_left + layout.plot_width;
  const std::size_t devices = layout.lane_top.size();
  auto y_of = [&](double value) { return top + height * (1 - std::clamp(value / scale.memory_top, 0.0, 1.05)); };

  out += "<g class=\"memory\">\n";
  const std::string heading = scale.memory_bytes ? "memory per device (static + activations)"
                                                 : "stashed micro-batches per device (no byte sizes given)";
  text(out, "legend", 8, top - 6, heading);
  // Device colours, after the heading (up to 16 listed; more cycle through the same colours).
  double x = 8 + static_cast<double>(heading.size()) * kCharWidth + 16;
  for (std::size_t d = 0; d < std::min<std::size_t>(devices, 16); ++d) {
    out += "<rect class=\"swatch\" x=\"" + fixed(x) + "\" y=\"" + fixed(top - 14) +
           "\" width=\"10\" height=\"10\" fill=\"" + device_colour(d) + "\"/>\n";
    text(out, "legend", x + 13, top - 6, "d" + std::to_string(d));
    x += 13 + kCharWidth * static_cast<double>(std::to_string(d).size() + 1) + 10;
  }
  if (devices > 16) text(out, "legend", x, top - 6, "... (colours repeat)");

  rect(out, "chart", left, top, layout.plot_width, height);
  for (const double fraction : {0.0, 0.5, 1.0}) {
    const double value = scale.memory_top * fraction;
    const double y = y_of(value);
    line(out, "grid", left, y, right, y);
    text(out, "tick", left - 6, y + 4, memory_text(value, scale), "end");
  }

  // Step curves of the value after each instant (the digest merges the samples at one instant: frees
  // come before allocations, so the samples between are dips no one would see). A device with many
  // points is drawn as its per-pixel envelope (low, high, last), which keeps every peak visible.
  const double end_x = figure_x(layout, scale, last_time(report));
  double overall_peak = -1;
  std::size_t overall_device = 0;
  double overall_x = 0;
  for (std::size_t d = 0; d < devices; ++d) {
    const MemoryCurve& curve = digest.memory(d);
    if (curve.empty) continue;
    // A step path: H to each change's time, V to its new value.
    std::string path = "M" + fixed(figure_x(layout, scale, curve.first.first)) + "," + fixed(y_of(curve.first.second));
    if (!curve.envelope) {
      double previous = curve.first.second;
      for (const auto& [time, value] : curve.points) {
        if (value == previous) continue;
        path += "H" + fixed(figure_x(layout, scale, time)) + "V" + fixed(y_of(value));
        previous = value;
      }
    } else {
      // Per bin of kBinPx: up to the highest value, down to the lowest, then the last.
      for (const MemoryCurve::Step& step : curve.steps) {
        path += "H" + fixed(layout.plot_left + step.column * kBinPx * layout.plot_width / figure_geometry::kPlotWidth, 1);
        if (step.high != step.previous) path += "V" + fixed(y_of(step.high), 1);
        if (step.low != step.high) path += "V" + fixed(y_of(step.low), 1);
        if (step.last != step.low) path += "V" + fixed(y_of(step.last), 1);
      }
    }
    path += "H" + fixed(end_x);
    out += "<path class=\"mem\" data-device=\"" + std::to_string(d) + "\" stroke=\"" + device_colour(d) + "\" d=\"" +
           path + "\"/>\n";

    // The device's peak: the first time it is reached.
    const double peak_value = curve.peak.second;
    const double px = figure_x(layout, scale, curve.peak.first);
    out += "<circle class=\"peak\" cx=\"" + fixed(px) + "\" cy=\"" + fixed(y_of(peak_value)) + "\" r=\"3\" fill=\"" +
           device_colour(d) + "\"><title>d" + std::to_string(d) + " peak " +
           xml_escape(memory_text(peak_value, scale)) + "</title></circle>\n";
    if (peak_value > overall_peak) {
      overall_peak = peak_value;
      overall_device = d;
      overall_x = px;
    }
  }
  if (overall_peak >= 0) {
    const bool near_right = overall_x > right - 160;
    text(out, "legend", overall_x + (near_right ? -6 : 6), y_of(overall_peak) - 5,
         "peak " + memory_text(overall_peak, scale) + " (d" + std::to_string(overall_device) + ")",
         near_right ? "end" : nullptr);
  }
  if (scale.memory_bytes && report.memory_capacity) {
    const double y = y_of(static_cast<double>(*report.memory_capacity));
    line(out, "cap", left, y, right, y);
    text(out, "legend cap-label", right - 4, y - 4, "capacity " + format_bytes(*report.memory_capacity), "end");
  }
  out += "</g>\n";
}

}  // namespace

double figure_x(const FigureLayout& layout, const FigureScale& scale, double t) {
  return layout.plot_left + layout.plot_width * t / scale.time_end;
}

FigureScale figure_scale(std::span<const Report> reports, double width) {
  FigureScale scale;
  if (width > 0) {
    scale.width = std::clamp(width, kMinFigureWidth, kMaxFigureWidth);
  } else {
    std::size_t busiest = 0;
    for (const Report& report : reports) {
      if (!report.result.timeline || report.result.timeline->spans.size() > kMaxDrawnOps) continue;
      std::vector<std::size_t> ops(report.result.per_device.size());
      for (const Span& span : report.result.timeline->spans) {
        if (span.device >= 0 && static_cast<std::size_t>(span.device) < ops.size()) ++ops[static_cast<std::size_t>(span.device)];
      }
      for (const std::size_t count : ops) busiest = std::max(busiest, count);
    }
    scale.width = std::clamp(kPlotLeft + kPlotRight + kPxPerOp * static_cast<double>(busiest), kFigureWidth,
                             kMaxAutomaticWidth);
  }
  double end = 0;
  double top = 0;
  scale.memory_bytes = std::any_of(reports.begin(), reports.end(), has_bytes);
  for (const Report& report : reports) {
    end = std::max(end, last_time(report));
    scale.seconds = scale.seconds || times_in_seconds(report);
    for (const DeviceFigures& f : report.result.per_device) {
      top = std::max(top, scale.memory_bytes ? static_cast<double>(f.peak_memory_bytes) : f.peak_stashed);
    }
    if (scale.memory_bytes && report.memory_capacity) top = std::max(top, static_cast<double>(*report.memory_capacity));
  }
  scale.time_end = end > 0 ? end : 1;
  if (scale.memory_bytes) {
    // A round top in the binary unit of the peak: "16 GiB", not "17.18 GB".
    double unit = 1;
    while (top >= 1024 * unit) unit *= 1024;
    scale.memory_top = nice_ceiling(top / unit) * unit;
  } else {
    scale.memory_top = nice_ceiling(top);
  }
  return scale;
}

FigureLayout figure_layout(const Report& report, const FigureScale& scale, std::size_t max_drawn_ops) {
  FigureLayout layout;
  layout.width = kFigureWidth;
  layout.plot_left = kPlotLeft;
  layout.plot_width = kFigureWidth - kPlotLeft - kPlotRight;
  const std::size_t devices = report.result.per_device.size();
  // Lanes get thinner with many devices so a figure stays within a screen or two.
  layout.lane_height = devices <= 16 ? 20 : std::max(3.0, std::floor(320.0 / static_cast<double>(devices)));
  const double gap = layout.lane_height >= 10 ? 4 : 1;
  const TimelineCounts counts = timeline_counts(report);
  // Expert all-to-alls get a strip under each device's lane.
  if (counts.exchanges > 0) layout.exchange_height = layout.lane_height >= 10 ? 6 : std::max(1.0, layout.lane_height / 3);
  double y = kLanesTop + (counts.exchanges > 0 ? kLegendRow : 0);
  for (std::size_t d = 0; d < devices; ++d) {
    layout.lane_top.push_back(y);
    y += layout.lane_height;
    if (counts.exchanges > 0) {
      layout.exchange_top.push_back(y + 1);
      y += 1 + layout.exchange_height;
    }
    y += gap;
  }
  if (counts.messages_take_time) {
    layout.link_height = layout.lane_height >= 10 ? 8 : std::max(2.0, layout.lane_height / 2);
    y += 4;
    for (std::size_t i = 0; i < report.result.per_link.size(); ++i) {
      if (report.result.per_link[i].messages == 0) continue;
      layout.links.push_back(i);
      layout.link_top.push_back(y);
      y += layout.link_height + 2;
    }
  }
  if (counts.any) {
    layout.aggregated = counts.spans > max_drawn_ops || (!layout.links.empty() && counts.messages > max_drawn_ops) ||
                        counts.exchanges > max_drawn_ops;
    if (!layout.aggregated && !report.result.timeline) {
      throw std::logic_error("figure_layout: a digest draws only aggregated lanes; this timeline needs keeping");
    }
  }
  // One box per op draws at the scale's width; a digest's bins were made for kFigureWidth.
  if (!layout.aggregated && report.result.timeline) {
    layout.width = scale.width;
    layout.plot_width = scale.width - kPlotLeft - kPlotRight;
  }
  layout.axis_top = y + 4;
  layout.memory_top = layout.axis_top + kAxisHeight + kMemoryHeading;
  layout.memory_height = kMemoryHeight;
  layout.height = layout.memory_top + kMemoryHeight + kMemoryBottom;
  return layout;
}

std::string figure_style() {
  return ".ppsim-figure text{font-family:sans-serif;fill:#222}\n"
         ".ppsim-figure .title{font-size:14px;font-weight:bold}\n"
         ".ppsim-figure .subtitle{font-weight:normal}\n"
         ".ppsim-figure .caption,.ppsim-figure .legend,.ppsim-figure .tick,.ppsim-figure .label{font-size:11px}\n"
         ".ppsim-figure .small{font-size:9px}\n"
         ".ppsim-figure .mb{font-size:10px;text-anchor:middle;fill:#111}\n"
         ".ppsim-figure .mb.light{fill:#fff}\n"
         ".ppsim-figure .mb.tiny{font-size:8px}\n"
         ".ppsim-figure .idle{fill:#e8e8e8}\n"
         ".ppsim-figure .op{stroke:#fff;stroke-width:0.5}\n"
         ".ppsim-figure .f{fill:#f28e2b}\n"
         ".ppsim-figure .b{fill:#1f4e8c}\n"
         ".ppsim-figure .i{fill:#3b7dd8}\n"
         ".ppsim-figure .w{fill:#9cc3ec}\n"
         // A device's later chunks (v > 1) in lighter shades of the same colours.
         ".ppsim-figure .f.c1{fill:#f7b26a}\n"
         ".ppsim-figure .f.c2{fill:#fbd3a4}\n"
         ".ppsim-figure .b.c1{fill:#4d7ab8}\n"
         ".ppsim-figure .b.c2{fill:#86a8d6}\n"
         ".ppsim-figure .i.c1{fill:#6fa0e6}\n"
         ".ppsim-figure .i.c2{fill:#a5c4f0}\n"
         ".ppsim-figure .w.c1{fill:#bcd7f3}\n"
         ".ppsim-figure .w.c2{fill:#dbe9f8}\n"
         ".ppsim-figure .phase{stroke:#111;stroke-width:2}\n"
         ".ppsim-figure .axis{stroke:#444;stroke-width:1}\n"
         ".ppsim-figure .grid{stroke:#d8d8d8;stroke-width:1}\n"
         ".ppsim-figure .chart{fill:#fafafa;stroke:#bbb;stroke-width:1}\n"
         ".ppsim-figure .msg{fill:#555}\n"
         ".ppsim-figure .flight{fill:#b8b8b8}\n"
         ".ppsim-figure .a2a.dispatch{fill:#59a14f}\n"
         ".ppsim-figure .a2a.combine{fill:#b07aa1}\n"
         ".ppsim-figure .mem{fill:none;stroke-width:1.5}\n"
         ".ppsim-figure .peak{stroke:#fff;stroke-width:1}\n"
         ".ppsim-figure .cap{stroke:#d62728;stroke-width:1.5;stroke-dasharray:6 4}\n"
         ".ppsim-figure .cap-label{fill:#d62728}\n";
}

std::string render_svg_figure(const Report& report, const FigureScale& scale, const FigureOptions& options) {
  const FigureLayout layout = figure_layout(report, scale, options.max_drawn_ops);
  const TimeUnit unit = display_time_unit(scale.seconds, scale.time_end);
  std::string out;
  out += "<svg class=\"ppsim-figure\"";
  if (options.namespace_attribute) out += " xmlns=\"http://www.w3.org/2000/svg\"";
  out += " width=\"" + fixed(layout.width) + "\" height=\"" + fixed(layout.height) + "\" viewBox=\"0 0 " +
         fixed(layout.width) + " " + fixed(layout.height) + "\" data-schedule=\"" + xml_escape(report.schedule) +
         "\">\n";
  // Overlapped F&B ops: forward orange and backward blue stripes.
  out += "<defs><pattern id=\"" + options.id_prefix +
         "fb\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
         "<rect width=\"3\" height=\"6\" fill=\"#f28e2b\"/><rect x=\"3\" width=\"3\" height=\"6\" fill=\"#1f4e8c\"/>"
         "</pattern></defs>\n";
  draw_heading(out, report, scale, options, unit);
  const std::shared_ptr<const FigureDigest> digest = digest_of(report, scale);
  if (!digest) {
    text(out, "caption", 8, kLanesTop + 12, "no timeline recorded");
  } else {
    draw_legend(out, *digest, layout, options,
                report.program.num_stages() > report.program.num_devices && !layout.aggregated);
    draw_lanes(out, report, *digest, scale, layout, options);
    draw_links(out, report, *digest, scale, layout);
    draw_axis(out, scale, layout, unit);
    draw_memory(out, report, *digest, scale, layout);
  }
  out += "</svg>\n";
  return out;
}

std::string render_svg(std::span<const Report> reports, std::span<const std::string> captions, double width) {
  const FigureScale scale = figure_scale(reports, width);
  constexpr double kGap = 8;
  double height = 0;
  double widest = kFigureWidth;
  for (const Report& report : reports) {
    const FigureLayout layout = figure_layout(report, scale);
    height += layout.height + kGap;
    widest = std::max(widest, layout.width);
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fixed(widest) + "\" height=\"" + fixed(height) +
         "\" viewBox=\"0 0 " + fixed(widest) + " " + fixed(height) + "\">\n";
  out += "<style>\n" + figure_style() + "</style>\n";
  // Opaque, so viewers with a dark background still show the picture.
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  double y = 0;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    FigureOptions options;
    options.id_prefix = "s" + std::to_string(i) + "-";
    options.namespace_attribute = false;  // the outer <svg> declares it
    if (i < captions.size()) options.caption = captions[i];
    out += "<g transform=\"translate(0," + fixed(y) + ")\">\n";
    out += render_svg_figure(reports[i], scale, options);
    out += "</g>\n";
    y += figure_layout(reports[i], scale).height + kGap;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace ppsim
