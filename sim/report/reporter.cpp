// SPDX-License-Identifier: Apache-2.0
#include "sim/report/reporter.hpp"

#include "sim/report/csv_reporter.hpp"
#include "sim/report/json_reporter.hpp"
#include "sim/report/table_reporter.hpp"

namespace ppsim {

std::unique_ptr<Reporter> make_reporter(OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable:
      return std::make_unique<TableReporter>();
    case OutputFormat::kJson:
      return std::make_unique<JsonReporter>();
    case OutputFormat::kCsv:
      return std::make_unique<CsvReporter>();
  }
  return std::make_unique<TableReporter>();  // unreachable with a valid enum; people get the table
}

bool parse_output_format(std::string_view text, OutputFormat& format) {
  if (text == "table") {
    format = OutputFormat::kTable;
  } else if (text == "json") {
    format = OutputFormat::kJson;
  } else if (text == "csv") {
    format = OutputFormat::kCsv;
  } else {
    return false;
  }
  return true;
}

}  // namespace ppsim
