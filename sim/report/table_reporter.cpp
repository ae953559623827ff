// SPDX-License-Identifier: Apache-2.0
#include "sim/report/table_reporter.hpp"

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "sim/report/ascii_timeline.hpp"
#include "sim/report/format.hpp"
#include "sim/report/training_report.hpp"
#include "sim/report/variability_report.hpp"

namespace ppsim {
namespace {

std::string params_text(const ScheduleParams& params) {
  return "p=" + std::to_string(params.p) + " m=" + std::to_string(params.m) + " v=" + std::to_string(params.v);
}

std::string count(std::int64_t value) { return std::to_string(value); }

// Numbers right-aligned under their heading; the first column (names) left-aligned.
std::vector<Align> numeric_columns(std::size_t n) {
  std::vector<Align> align(n, Align::kRight);
  align.front() = Align::kLeft;
  return align;
}

void write_summary(std::ostream& out, const Result& result) {
  TextTable table({Align::kLeft, Align::kLeft});
  table.add_row({"makespan", format_figure(result.makespan)});
  table.add_row({"bubble_ratio", format_figure(result.bubble_ratio)});
  table.add_row({"bubble_overhead", format_figure(result.bubble_overhead)});
  table.add_row({"comm_ratio", format_figure(result.comm_ratio)});
  table.add_row({"total_busy", format_figure(result.total_busy)});
  out << table.render();
}

void write_device_times(std::ostream& out, const Result& result) {
  out << "per device (warmup, steady, cooldown: op counts)\n";
  TextTable table(numeric_columns(9));
  table.add_row({"device", "start", "end", "busy", "idle", "bubble_ratio", "warmup", "steady", "cooldown"});
  for (std::size_t d = 0; d < result.per_device.size(); ++d) {
    const DeviceFigures& f = result.per_device[d];
    table.add_row({"d" + std::to_string(d), format_figure(f.start), format_figure(f.end), format_figure(f.busy),
                   format_figure(f.idle), format_figure(f.bubble_ratio), count(f.phases[0].ops), count(f.phases[1].ops),
                   count(f.phases[2].ops)});
  }
  out << table.render();
}

void write_device_memory(std::ostream& out, const Result& result) {
  out << "memory per device (peak_stashed: micro-batch stashes of one stage)\n";
  TextTable table(numeric_columns(5));
  table.add_row({"device", "peak_stashed", "static", "peak_activation", "peak_memory"});
  for (std::size_t d = 0; d < result.per_device.size(); ++d) {
    const DeviceFigures& f = result.per_device[d];
    table.add_row({"d" + std::to_string(d), format_figure(f.peak_stashed), format_bytes(f.static_bytes),
                   format_bytes(f.peak_activation_bytes), format_bytes(f.peak_memory_bytes)});
  }
  out << table.render();
}

void write_links(std::ostream& out, const Result& result) {
  out << "per link\n";
  TextTable table(numeric_columns(4));
  table.add_row({"src->dst", "messages", "bytes", "busy"});
  for (const LinkFigures& link : result.per_link) {
    table.add_row({std::to_string(link.src) + "->" + std::to_string(link.dst), count(link.messages),
                   format_bytes(link.bytes), format_figure(link.busy)});
  }
  out << table.render();
}

void write_one(std::ostream& out, const Report& report, const ReportOptions& options) {
  const Result& result = report.result;
  out << report.schedule << "  " << params_text(report.params) << "\n\n";
  write_summary(out, result);
  out << '\n';
  if (report.training) {
    write_training_table(out, *report.training);
    out << '\n';
  }
  if (report.samples) {
    write_samples_table(out, *report.samples);
    out << '\n';
  }
  if (report.reliability) {
    write_reliability_table(out, *report.reliability);
    out << '\n';
  }
  write_device_times(out, result);
  out << '\n';
  write_device_memory(out, result);
  if (!result.per_link.empty()) {
    out << '\n';
    write_links(out, result);
  }
  if (options.timeline && (result.timeline || report.ascii_timeline))
    out << '\n' << render_ascii_timeline(report, timeline_columns_for_width(report, options.timeline_width));
}

// Adds one row per listed device; `cell` formats a device's figure, reports without it show "-".
template <typename Cell>
void add_device_rows(TextTable& table, std::span<const Report> reports, const std::string& name, Cell cell) {
  std::size_t devices = 0;
  for (const Report& report : reports) devices = std::max(devices, report.result.per_device.size());
  for (std::size_t d : listed_devices(devices)) {
    if (d == std::string::npos) {
      table.add_row({"..."});
      continue;
    }
    std::vector<std::string> row{name + " d" + std::to_string(d)};
    for (const Report& report : reports) {
      const auto& per_device = report.result.per_device;
      row.push_back(d < per_device.size() ? cell(per_device[d]) : "-");
    }
    table.add_row(std::move(row));
  }
}

void write_side_by_side(std::ostream& out, std::span<const Report> reports, const ReportOptions& options) {
  const bool same_params = std::all_of(reports.begin(), reports.end(), [&](const Report& report) {
    const ScheduleParams& a = report.params;
    const ScheduleParams& b = reports.front().params;
    return a.p == b.p && a.m == b.m && a.v == b.v;
  });
  if (same_params) out << params_text(reports.front().params) << "\n\n";

  TextTable table(numeric_columns(reports.size() + 1));
  std::vector<std::string> heading{""};
  for (const Report& report : reports) heading.push_back(report.schedule);
  table.add_row(std::move(heading));
  auto add_row = [&](const std::string& name, auto figure) {
    std::vector<std::string> row{name};
    for (const Report& report : reports) row.push_back(figure(report));
    table.add_row(std::move(row));
  };
  if (!same_params) {
    add_row("p", [](const Report& r) { return std::to_string(r.params.p); });
    add_row("m", [](const Report& r) { return std::to_string(r.params.m); });
    add_row("v", [](const Report& r) { return std::to_string(r.params.v); });
  }
  add_row("makespan", [](const Report& r) { return format_figure(r.result.makespan); });
  add_row("bubble_ratio", [](const Report& r) { return format_figure(r.result.bubble_ratio); });
  add_row("bubble_overhead", [](const Report& r) { return format_figure(r.result.bubble_overhead); });
  add_row("comm_ratio", [](const Report& r) { return format_figure(r.result.comm_ratio); });
  add_device_rows(table, reports, "peak_stashed", [](const DeviceFigures& f) { return format_figure(f.peak_stashed); });

  // Memory in bytes means nothing until the scenario gives sizes; then it is the question asked.
  const bool has_bytes = std::any_of(reports.begin(), reports.end(), [](const Report& report) {
    return std::any_of(report.result.per_device.begin(), report.result.per_device.end(),
                       [](const DeviceFigures& f) { return f.static_bytes != 0 || f.peak_activation_bytes != 0; });
  });
  if (has_bytes) {
    add_device_rows(table, reports, "peak_memory",
                    [](const DeviceFigures& f) { return format_bytes(f.peak_memory_bytes); });
  }
  out << table.render();
  if (std::any_of(reports.begin(), reports.end(), [](const Report& r) { return r.training.has_value(); })) {
    out << '\n';
    write_training_side_by_side(out, reports);
  }
  if (std::any_of(reports.begin(), reports.end(), [](const Report& r) { return r.samples.has_value(); })) {
    out << '\n';
    write_samples_side_by_side(out, reports);
  }
  for (const Report& report : reports) {
    if (!report.reliability) continue;
    out << '\n' << report.schedule << ": ";
    write_reliability_table(out, *report.reliability);
  }

  if (!options.timeline) return;
  for (const Report& report : reports) {
    if (!report.result.timeline && !report.ascii_timeline) continue;
    out << "\n== " << report.schedule << " ==\n"
        << render_ascii_timeline(report, timeline_columns_for_width(report, options.timeline_width));
  }
}

}  // namespace

void TableReporter::write(std::ostream& out, std::span<const Report> reports, const ReportOptions& options) const {
  if (reports.empty()) return;
  if (reports.size() == 1 && !options.side_by_side) {
    write_one(out, reports.front(), options);
  } else {
    write_side_by_side(out, reports, options);
  }
}

}  // namespace ppsim
