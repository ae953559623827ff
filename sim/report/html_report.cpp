// SPDX-License-Identifier: Apache-2.0
#include "sim/report/html_report.hpp"

#include <algorithm>
#include <functional>
#include <string>

#include "sim/report/figure_digest.hpp"
#include "sim/report/format.hpp"
#include "sim/report/markup.hpp"
#include "sim/report/samples_html.hpp"
#include "sim/report/svg_timeline.hpp"
#include "sim/report/time_axis.hpp"

namespace ppsim {
namespace {

// Page layout in CSS px; the stylesheet below uses the same numbers.
constexpr double kPadTop = 16;
constexpr double kPadLeft = 20;
constexpr double kHeadingHeight = 36;
constexpr double kParamsHeight = 24;
constexpr double kRowHeight = 22;
constexpr double kSummaryGap = 16;
constexpr double kFigureGap = 12;
constexpr double kNotesHeight = 72;

struct SummaryRow {
  std::string name;
  std::vector<std::string> cells;   // one per report
  std::vector<std::string> titles;  // a cell's tooltip, when it has one
};

const ClosedFormNote* pick_note(const std::vector<ClosedFormNote>* notes, Figure figure) {
  if (notes == nullptr) return nullptr;
  const ClosedFormNote* chosen = nullptr;
  for (const ClosedFormNote& note : *notes) {
    if (note.figure != figure || note.device >= 0) continue;
    if (chosen == nullptr || (note.holds && !chosen->holds)) chosen = &note;
  }
  return chosen;
}

// The rows of the summary table: the side-by-side table reporter's figures, each bubble figure
// followed by its closed form.
std::vector<SummaryRow> summary_rows(std::span<const Report> reports,
                                     std::span<const std::vector<ClosedFormNote>> closed_forms) {
  std::vector<SummaryRow> rows;
  auto add = [&](std::string name, const std::function<std::string(std::size_t)>& cell) {
    SummaryRow row{std::move(name), {}, {}};
    for (std::size_t i = 0; i < reports.size(); ++i) row.cells.push_back(cell(i));
    rows.push_back(std::move(row));
  };
  auto result = [&](std::size_t i) -> const Result& { return reports[i].result; };
  // A formula outside its regime says so briefly; the regime, often long, is the cell's tooltip.
  auto closed_form = [&](Figure figure) {
    SummaryRow row{std::string(figure_name(figure)) + ", closed form", {}, {}};
    for (std::size_t i = 0; i < reports.size(); ++i) {
      const ClosedFormNote* note = pick_note(i < closed_forms.size() ? &closed_forms[i] : nullptr, figure);
      row.cells.push_back(note == nullptr ? "-" : note->holds ? note_text(*note) : "outside its regime");
      row.titles.push_back(note == nullptr || note->holds ? "" : note_text(*note));
    }
    rows.push_back(std::move(row));
  };
  add("p", [&](std::size_t i) { return std::to_string(reports[i].params.p); });
  add("m", [&](std::size_t i) { return std::to_string(reports[i].params.m); });
  add("v", [&](std::size_t i) { return std::to_string(reports[i].params.v); });
  add("makespan", [&](std::size_t i) { return format_figure(result(i).makespan); });
  add("bubble_ratio", [&](std::size_t i) { return format_figure(result(i).bubble_ratio); });
  closed_form(Figure::kBubbleRatio);
  add("bubble_overhead", [&](std::size_t i) { return format_figure(result(i).bubble_overhead); });
  closed_form(Figure::kBubbleOverhead);
  add("comm_ratio", [&](std::size_t i) { return format_figure(result(i).comm_ratio); });
  // A model's training step, first after the pipeline's own figures (a model comparison is for it),
  // and where its hardware numbers come from.
  if (std::any_of(reports.begin(), reports.end(), [](const Report& report) { return report.training.has_value(); })) {
    auto training = [&](const std::function<std::string(const TrainingFigures&)>& cell) {
      return [&, cell](std::size_t i) { return reports[i].training ? cell(*reports[i].training) : std::string("-"); };
    };
    add("step_time", training([](const TrainingFigures& t) { return format_figure(t.step_time) + " s"; }));
    add("tokens_per_second", training([](const TrainingFigures& t) { return format_figure(t.tokens_per_second); }));
    add("mfu", training([](const TrainingFigures& t) { return format_figure(100 * t.mfu) + "%"; }));
    add("hardware numbers",
        training([](const TrainingFigures& t) { return t.hardware + ": " + t.hardware_provenance; }));
  }

  std::size_t devices = 0;
  for (const Report& report : reports) devices = std::max(devices, report.result.per_device.size());
  const bool bytes = std::any_of(reports.begin(), reports.end(), [](const Report& report) {
    return std::any_of(report.result.per_device.begin(), report.result.per_device.end(),
                       [](const DeviceFigures& f) { return f.peak_memory_bytes != 0; });
  });
  auto device_rows = [&](const std::string& name, const std::function<std::string(const DeviceFigures&)>& cell) {
    for (const std::size_t d : listed_devices(devices)) {
      if (d == std::string::npos) {
        add("...", [](std::size_t) { return std::string(); });
        continue;
      }
      add(name + " d" + std::to_string(d), [&, d](std::size_t i) {
        const auto& per_device = result(i).per_device;
        return d < per_device.size() ? cell(per_device[d]) : std::string("-");
      });
    }
  };
  device_rows("peak_stashed", [](const DeviceFigures& f) { return format_figure(f.peak_stashed); });
  if (bytes) device_rows("peak_memory", [](const DeviceFigures& f) { return format_bytes(f.peak_memory_bytes); });
  const bool capacity = std::any_of(reports.begin(), reports.end(),
                                    [](const Report& report) { return report.memory_capacity.has_value(); });
  if (capacity) {
    add("memory_capacity", [&](std::size_t i) {
      return reports[i].memory_capacity ? format_bytes(*reports[i].memory_capacity) : std::string("-");
    });
    add("fits", [&](std::size_t i) -> std::string {
      if (!reports[i].memory_capacity) return "-";
      std::int64_t peak = 0;
      for (const DeviceFigures& f : result(i).per_device) peak = std::max(peak, f.peak_memory_bytes);
      return peak <= *reports[i].memory_capacity ? "yes" : "no: peak " + format_bytes(peak);
    });
  }
  return rows;
}

double summary_height(std::size_t rows) { return static_cast<double>(rows + 1) * kRowHeight + kSummaryGap; }

std::string page_style() {
  return "body{margin:0;padding:" + fixed(kPadTop) + "px " + fixed(kPadLeft) +
         "px;background:#fff;color:#222;font:13px/20px sans-serif}\n"
         "h1{margin:0;height:" +
         fixed(kHeadingHeight) + "px;font-size:20px;line-height:" + fixed(kHeadingHeight) +
         "px;overflow:hidden}\n"
         "p{margin:0}\n"
         ".params{height:" +
         fixed(kParamsHeight) +
         "px;color:#555;overflow:hidden;white-space:nowrap}\n"
         ".summary,.figure,.notes{overflow:hidden}\n"
         "table{border-collapse:collapse}\n"
         "th,td{height:" +
         fixed(kRowHeight) +
         "px;padding:0 10px;white-space:nowrap;text-align:right;box-sizing:border-box;line-height:20px}\n"
         "th{border-bottom:1px solid #999}\n"
         "th:first-child,td:first-child{text-align:left;color:#444}\n"
         "tr:nth-child(odd) td{background:#f4f4f4}\n"
         "svg{display:block}\n"
         ".notes{height:" +
         fixed(kNotesHeight) + "px;color:#555;max-width:1160px}\n" + figure_style();
}

std::string params_line(std::span<const Report> reports, const FigureScale& scale) {
  const Report& first = reports.front();
  const bool same = std::all_of(reports.begin(), reports.end(), [&](const Report& report) {
    return report.params.p == first.params.p && report.params.m == first.params.m && report.params.v == first.params.v;
  });
  std::string line = same ? "p=" + std::to_string(first.params.p) + " m=" + std::to_string(first.params.m) +
                                " v=" + std::to_string(first.params.v)
                          : "p, m and v per schedule in the table";
  line += " · times in " + (scale.seconds ? std::string("seconds") : std::string("time units"));
  line += scale.memory_bytes ? " · memory in bytes" : " · memory in stashed micro-batches";
  line += " · one time axis for every schedule";
  return line;
}

}  // namespace

HtmlLayout html_layout(std::span<const Report> reports, double width_asked) {
  HtmlLayout layout;
  const FigureScale scale = figure_scale(reports, width_asked);
  double y = kPadTop + kHeadingHeight + kParamsHeight + summary_height(summary_rows(reports, {}).size());
  double width = 0;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const FigureLayout figure = figure_layout(reports[i], scale);
    width = std::max(width, figure.width);
    double end = 0;
    if (reports[i].result.timeline) {
      for (const Span& span : reports[i].result.timeline->spans) end = std::max(end, span.end);
    } else if (reports[i].figure_digest) {
      end = reports[i].figure_digest->last_span_end();
    }
    const double lane_width = figure_x(figure, scale, end) - figure.plot_left;
    for (std::size_t d = 0; d < figure.lane_top.size(); ++d) {
      layout.lanes.push_back(
          {i, d, kPadLeft + figure.plot_left, y + figure.lane_top[d], lane_width, figure.lane_height});
    }
    y += figure.height + kFigureGap;
  }
  y += samples_section_height(reports, kRowHeight);
  layout.width = 2 * kPadLeft + width;
  layout.height = y + kNotesHeight + kPadTop;
  return layout;
}

std::string render_html_report(std::span<const Report> reports,
                               std::span<const std::vector<ClosedFormNote>> closed_forms, double width) {
  std::string out;
  std::string names;
  for (const Report& report : reports) names += (names.empty() ? "" : " vs ") + report.schedule;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  out += "<title>ppsim: " + xml_escape(names) + "</title>\n";
  out += "<style>\n" + page_style() + "</style>\n</head>\n<body>\n";
  out += "<h1>ppsim: " + xml_escape(names) + "</h1>\n";
  if (reports.empty()) {
    out += "<p class=\"params\">no schedules</p>\n</body>\n</html>\n";
    return out;
  }
  const FigureScale scale = figure_scale(reports, width);
  out += "<p class=\"params\">" + xml_escape(params_line(reports, scale)) + "</p>\n";

  const std::vector<SummaryRow> rows = summary_rows(reports, closed_forms);
  out +=
      "<div class=\"summary\" style=\"height:" + fixed(summary_height(rows.size())) + "px\">\n<table>\n<tr><th></th>";
  for (const Report& report : reports) out += "<th>" + xml_escape(report.schedule) + "</th>";
  out += "</tr>\n";
  for (const SummaryRow& row : rows) {
    out += "<tr><td>" + xml_escape(row.name) + "</td>";
    for (std::size_t i = 0; i < row.cells.size(); ++i) {
      const bool title = i < row.titles.size() && !row.titles[i].empty();
      out += (title ? "<td title=\"" + xml_escape(row.titles[i]) + "\">" : std::string("<td>")) +
             xml_escape(row.cells[i]) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</table>\n</div>\n";

  for (std::size_t i = 0; i < reports.size(); ++i) {
    FigureOptions options;
    options.id_prefix = "s" + std::to_string(i) + "-";
    options.namespace_attribute = false;  // inline SVG in HTML needs none
    if (i < closed_forms.size()) options.caption = bubble_caption(closed_forms[i]);
    const FigureLayout figure = figure_layout(reports[i], scale);
    out += "<div class=\"figure\" id=\"figure-" + std::to_string(i) +
           "\" style=\"height:" + fixed(figure.height + kFigureGap) + "px\">\n";
    out += render_svg_figure(reports[i], scale, options);
    out += "</div>\n";
  }
  out += render_samples_section(reports, kRowHeight);
  out +=
      "<p class=\"notes\">Each lane is one device. Boxes are ops: F forward (orange), B backward (dark blue), "
      "I input gradient (blue), W weight gradient (light blue), overlapped F&amp;B (striped); the number inside "
      "is the micro-batch. Grey is idle time. Black bars mark where each device moves from warm-up to steady "
      "state to cool-down. Below each timeline, memory per device over time, its peak marked. Every schedule "
      "shares one time axis and one memory scale. Written by ppsim; no scripts, fonts or links.</p>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace ppsim
