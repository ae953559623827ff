#pragma once
// Reporters are sibling implementations of one small interface (as in Google Benchmark):
// table for people, JSON for scripts, CSV for spreadsheets. Each writes one or more Reports.

#include <iosfwd>
#include <memory>
#include <span>
#include <string_view>

#include "sim/report/report.hpp"

namespace ppsim {

enum class OutputFormat { kTable, kJson, kCsv };

struct ReportOptions {
  bool timeline = false;  // table: add an ASCII timeline per schedule; JSON: add spans and memory samples
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  // One report: `ppsim run`. Several: `ppsim compare`, side by side.
  virtual void write(std::ostream& out, std::span<const Report> reports, const ReportOptions& options) const = 0;
};

std::unique_ptr<Reporter> make_reporter(OutputFormat format);

// Parses "table", "json" or "csv".
bool parse_output_format(std::string_view text, OutputFormat& format);

}  // namespace ppsim
