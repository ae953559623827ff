// SPDX-License-Identifier: Apache-2.0
#include "sim/report/csv_reporter.hpp"

#include <algorithm>
#include <ostream>

#include "sim/report/format.hpp"

namespace ppsim {
namespace {

// RFC 4180: quote a field only when it holds a separator, a quote or a line break.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

void write_rows(std::ostream& out, const Report& report, bool with_training) {
  const std::string prefix = csv_field(report.schedule) + "," + std::to_string(report.params.p) + "," +
                             std::to_string(report.params.m) + "," + std::to_string(report.params.v) + ",";
  const auto& devices = report.result.per_device;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const DeviceFigures& f = devices[d];
    std::string row = prefix + std::to_string(d);
    auto add = [&row](const std::string& field) {
      row += ',';
      row += field;
    };
    auto add_exact = [&row](double value) {
      row += ',';
      append_exact(row, value);
    };
    auto add_integer = [&row](std::int64_t value) {
      row += ',';
      append_integer(row, value);
    };
    add_exact(f.start);
    add_exact(f.end);
    add_exact(f.busy);
    add_exact(f.idle);
    add_exact(f.bubble_ratio);
    add_integer(f.ops);
    add_exact(f.peak_stashed);
    add_integer(f.static_bytes);
    add_integer(f.peak_activation_bytes);
    add_integer(f.peak_memory_bytes);
    for (const PhaseFigures& phase : f.phases) {
      add_integer(phase.ops);
      add_exact(phase.duration());
    }
    if (with_training) {
      // The step's figures repeat on every device row, so each row stands alone in a spreadsheet.
      const TrainingFigures* t = report.training ? &*report.training : nullptr;
      const DeviceMemory* memory = t != nullptr && d < t->memory.size() ? &t->memory[d] : nullptr;
      add(t ? format_exact(t->step_time) : "");
      add(t ? format_exact(t->tokens_per_second) : "");
      add(t ? format_exact(t->mfu) : "");
      add(memory ? std::to_string(memory->total) : "");
      add(memory ? std::string(memory->fits ? "true" : "false") : "");
    }
    out << row << '\n';
  }
}

}  // namespace

std::string csv_header() {
  return "schedule,p,m,v,device,start,end,busy,idle,bubble_ratio,ops,peak_stashed,static_bytes,"
         "peak_activation_bytes,peak_memory_bytes,warmup_ops,warmup_duration,steady_ops,steady_duration,"
         "cooldown_ops,cooldown_duration";
}

void CsvReporter::write(std::ostream& out, std::span<const Report> reports, const ReportOptions& /*options*/) const {
  // Transformer studies add the training step's columns; plain studies keep the fixed header.
  const bool with_training =
      std::any_of(reports.begin(), reports.end(), [](const Report& r) { return r.training.has_value(); });
  out << csv_header() << (with_training ? ",step_time,tokens_per_second,mfu,memory_total_bytes,fits" : "") << '\n';
  for (const Report& report : reports) write_rows(out, report, with_training);
}

}  // namespace ppsim
