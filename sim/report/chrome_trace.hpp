// SPDX-License-Identifier: Apache-2.0
#pragma once
// Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open: a process per
// device, its compute on one thread (its expert all-to-alls on another), each outgoing link on
// another, flow arrows from every send to the op that receives it, memory as a counter track, and the
// configuration in "otherData".
// Format: "Trace Event Format", Google, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU

#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "sim/report/report.hpp"
#include "sim/timeline_sink.hpp"

namespace ppsim {

// Microseconds per unit of the reports' times: 1e6 for seconds; 1 for abstract time units, so that
// a trace of plain-number costs reads the same numbers as the other outputs (1 unit shown as 1 µs).
double trace_microseconds_per_unit(const Report& report);

// Writes a trace as the engine runs: for each schedule, `begin` gives the sink to pass to the engine
// (EngineOptions::timeline_sink), `end` its report; then `finish`. A run's events wait in temporary
// files, not in memory, until its report ends; what stays in memory is what is in flight.
class ChromeTraceWriter final : public TimelineStreamer {
 public:
  explicit ChromeTraceWriter(std::ostream& out);
  ~ChromeTraceWriter() override;
  TimelineSink& begin(const TimelineShape& shape) override;
  void end(Report& report) override;
  void end(const Report& report);
  void finish();

 private:
  class Run;
  void event(const std::string& json);

  std::ostream& out_;
  bool first_ = true;
  bool seconds_ = false;
  int next_pid_ = 1;
  std::int64_t next_flow_ = 1;
  std::int64_t next_flight_ = 1;  // ids of the in-flight (latency) async slices
  nlohmann::ordered_json schedules_ = nlohmann::ordered_json::array();
  std::unique_ptr<Run> run_;
};

// The trace of every report, from their recorded timelines; with several, each device's process is
// named "<schedule> d<device>".
std::string render_chrome_trace(std::span<const Report> reports);

}  // namespace ppsim
