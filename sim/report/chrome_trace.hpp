#pragma once
// Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open: a process per
// device, its compute on one thread and each outgoing link on another, flow arrows from every send
// to the op that receives it, memory as a counter track, and the configuration in "otherData".
// Format: "Trace Event Format", Google, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU

#include <span>
#include <string>

#include "sim/report/report.hpp"

namespace ppsim {

// Microseconds per unit of the reports' times: 1e6 for seconds; 1 for abstract time units, so that
// a trace of plain-number costs reads the same numbers as the other outputs (1 unit shown as 1 µs).
double trace_microseconds_per_unit(const Report& report);

// The trace of every report; with several, each device's process is named "<schedule> d<device>".
std::string render_chrome_trace(std::span<const Report> reports);

}  // namespace ppsim
