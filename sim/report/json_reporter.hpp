// SPDX-License-Identifier: Apache-2.0
#pragma once
// JSON output for scripts and CI: the figures under their DESIGN.md names, in a stable key order.

#include <nlohmann/json.hpp>

#include "sim/report/reporter.hpp"

namespace ppsim {

// Writes one report as one JSON object, several as an array of them.
class JsonReporter final : public Reporter {
 public:
  void write(std::ostream& out, std::span<const Report> reports, const ReportOptions& options) const override;
};

// One report as the object JsonReporter prints; exposed for callers that embed it (sweeps). A
// streamed timeline is not in it: JsonReporter splices that in as it writes.
nlohmann::ordered_json report_to_json(const Report& report, const ReportOptions& options);
// What JsonReporter prints, as a value: one report's object, or an array of them (several, or side
// by side). For callers that take the figures as data (the Python module); without a streamed
// timeline, which exists only as text.
nlohmann::ordered_json reports_to_json(std::span<const Report> reports, const ReportOptions& options);

// The elements of a timeline's "spans", "messages" and "memory" arrays.
nlohmann::ordered_json span_to_json(const Span& span);
nlohmann::ordered_json message_to_json(const MessageSpan& message);
nlohmann::ordered_json memory_sample_to_json(const MemorySample& sample);
nlohmann::ordered_json exchange_to_json(const ExchangeSpan& exchange);

}  // namespace ppsim
