// SPDX-License-Identifier: Apache-2.0
#include "sim/report/samples_html.hpp"

#include <algorithm>

#include "sim/report/format.hpp"
#include "sim/report/markup.hpp"

namespace ppsim {
namespace {

constexpr double kChartWidth = 280;
constexpr double kChartHeight = 150;
constexpr double kPlotTop = 22;     // the schedule's name above the bars
constexpr double kPlotBottom = 28;  // the axis labels below them
constexpr double kPlotSide = 8;
constexpr std::size_t kChartsPerRow = 4;
constexpr double kGap = 16;

bool any_samples(std::span<const Report> reports) {
  return std::any_of(reports.begin(), reports.end(), [](const Report& r) { return r.samples.has_value(); });
}

std::size_t sampled_count(std::span<const Report> reports) {
  return static_cast<std::size_t>(
      std::count_if(reports.begin(), reports.end(), [](const Report& r) { return r.samples.has_value(); }));
}

const Distribution& ranked(const SampleFigures& s) { return s.has_training ? s.step_time : s.makespan; }

std::string histogram_svg(const Report& report) {
  const SampleFigures& s = *report.samples;
  const Histogram& h = s.histogram;
  std::string svg = "<svg width=\"" + fixed(kChartWidth) + "\" height=\"" + fixed(kChartHeight) +
                    "\" style=\"display:inline-block;margin-right:12px\">";
  svg += "<text x=\"" + fixed(kPlotSide) + "\" y=\"15\" font-size=\"12\" fill=\"#222\">" +
         xml_escape(report.schedule + ": " + s.histogram_of + ", " + std::to_string(s.n) + " samples") + "</text>";
  const double plot_width = kChartWidth - 2 * kPlotSide;
  const double plot_height = kChartHeight - kPlotTop - kPlotBottom;
  const double base = kPlotTop + plot_height;
  const std::int64_t fullest = h.counts.empty() ? 0 : *std::max_element(h.counts.begin(), h.counts.end());
  const double bar = h.counts.empty() ? 0 : plot_width / static_cast<double>(h.counts.size());
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    const double height = fullest > 0 ? plot_height * static_cast<double>(h.counts[i]) / static_cast<double>(fullest) : 0;
    svg += "<rect x=\"" + fixed(kPlotSide + bar * static_cast<double>(i)) + "\" y=\"" + fixed(base - height) +
           "\" width=\"" + fixed(std::max(0.0, bar - 1)) + "\" height=\"" + fixed(height) + "\" fill=\"#4c72b0\"><title>" +
           xml_escape(format_figure(h.edges[i]) + " to " + format_figure(h.edges[i + 1]) + ": " +
                      std::to_string(h.counts[i]) + " samples") +
           "</title></rect>";
  }
  // The p50 and p99 marks, where they fall on the bins' axis.
  const double low = h.edges.empty() ? 0 : h.edges.front();
  const double high = h.edges.empty() ? 0 : h.edges.back();
  const auto x_of = [&](double value) {
    return kPlotSide + (high > low ? (value - low) / (high - low) * plot_width : plot_width / 2);
  };
  const Distribution& d = ranked(s);
  for (const auto& [label, value] : {std::pair{"p50", d.p50}, std::pair{"p99", d.p99}}) {
    const double x = x_of(value);
    svg += "<line x1=\"" + fixed(x) + "\" y1=\"" + fixed(kPlotTop) + "\" x2=\"" + fixed(x) + "\" y2=\"" + fixed(base) +
           "\" stroke=\"#c44e52\" stroke-width=\"1.5\"><title>" + label + " " + xml_escape(format_figure(value)) +
           "</title></line>";
  }
  svg += "<line x1=\"" + fixed(kPlotSide) + "\" y1=\"" + fixed(base) + "\" x2=\"" + fixed(kPlotSide + plot_width) +
         "\" y2=\"" + fixed(base) + "\" stroke=\"#555\"/>";
  svg += "<text x=\"" + fixed(kPlotSide) + "\" y=\"" + fixed(base + 16) + "\" font-size=\"11\" fill=\"#555\">" +
         xml_escape(format_figure(low)) + "</text>";
  svg += "<text x=\"" + fixed(kPlotSide + plot_width) + "\" y=\"" + fixed(base + 16) +
         "\" font-size=\"11\" fill=\"#555\" text-anchor=\"end\">" + xml_escape(format_figure(high)) + "</text>";
  svg += "<text x=\"" + fixed(kPlotSide + plot_width / 2) + "\" y=\"" + fixed(base + 16) +
         "\" font-size=\"11\" fill=\"#c44e52\" text-anchor=\"middle\">red: p50, p99</text>";
  svg += "</svg>";
  return svg;
}

}  // namespace

double samples_section_height(std::span<const Report> reports, double row_height) {
  if (!any_samples(reports)) return 0;
  const std::size_t charts = sampled_count(reports);
  const std::size_t rows = (charts + kChartsPerRow - 1) / kChartsPerRow;
  return static_cast<double>(charts + 1) * row_height + static_cast<double>(rows) * (kChartHeight + 4) + kGap;
}

std::string render_samples_section(std::span<const Report> reports, double row_height) {
  if (!any_samples(reports)) return "";
  std::string out = "<div class=\"samples\" style=\"height:" + fixed(samples_section_height(reports, row_height)) +
                    "px;overflow:hidden\">\n<table>\n<tr><th>samples</th><th>figure</th><th>mean</th><th>stdev</th>"
                    "<th>min</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>\n";
  for (const Report& report : reports) {
    if (!report.samples) continue;
    const Distribution& d = ranked(*report.samples);
    out += "<tr><td>" + xml_escape(report.schedule) + "</td><td>" + report.samples->histogram_of + "</td>";
    for (const double value : {d.mean, d.stdev, d.min, d.p50, d.p90, d.p99, d.max}) {
      out += "<td>" + xml_escape(format_figure(value)) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</table>\n<div style=\"white-space:nowrap\">";
  std::size_t drawn = 0;
  for (const Report& report : reports) {
    if (!report.samples) continue;
    if (drawn > 0 && drawn % kChartsPerRow == 0) out += "</div>\n<div style=\"white-space:nowrap\">";
    out += histogram_svg(report);
    ++drawn;
  }
  out += "</div>\n</div>\n";
  return out;
}

}  // namespace ppsim
