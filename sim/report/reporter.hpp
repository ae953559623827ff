// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reporters are sibling implementations of one small interface (as in Google Benchmark):
// table for people, JSON for scripts, CSV for spreadsheets. Each writes one or more Reports.

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <span>
#include <string_view>

#include "sim/report/report.hpp"

namespace ppsim {

enum class OutputFormat { kTable, kJson, kCsv };

struct ReportOptions {
  bool timeline = false;  // table: add an ASCII timeline per schedule; JSON: add spans and memory samples
  // `compare`: JSON is an array and the table is side by side even for one schedule, so scripts
  // see the same shape whatever the number of schedules. `run` leaves it false.
  bool side_by_side = false;
  // Rows of the ASCII timeline stay within this many characters; long runs get coarser slots.
  // The CLI sets the terminal's width when stdout is one; files and pipes keep 160.
  std::size_t timeline_width = 160;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  // One report: `ppsim run`. Several, or options.side_by_side: `ppsim compare`.
  virtual void write(std::ostream& out, std::span<const Report> reports, const ReportOptions& options) const = 0;
};

std::unique_ptr<Reporter> make_reporter(OutputFormat format);

// Parses "table", "json" or "csv".
bool parse_output_format(std::string_view text, OutputFormat& format);

}  // namespace ppsim
