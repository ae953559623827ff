// SPDX-License-Identifier: Apache-2.0
#pragma once
// Plain-text tables for people: one schedule in detail, or several side by side.

#include "sim/report/reporter.hpp"

namespace ppsim {

// One report: summary, per-device and per-link tables. Several: one column per schedule.
class TableReporter final : public Reporter {
 public:
  void write(std::ostream& out, std::span<const Report> reports, const ReportOptions& options) const override;
};

}  // namespace ppsim
