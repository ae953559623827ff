// SPDX-License-Identifier: Apache-2.0
#pragma once
// CSV output for spreadsheets: one row per device, the schedule column telling reports apart.

#include <string>

#include "sim/report/reporter.hpp"

namespace ppsim {

// Writes the header line, then every report's per-device rows.
class CsvReporter final : public Reporter {
 public:
  void write(std::ostream& out, std::span<const Report> reports, const ReportOptions& options) const override;
};

// The header line, without its newline; exposed so tests and sweeps can rely on it.
std::string csv_header();

}  // namespace ppsim
