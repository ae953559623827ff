// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the event-queue engine sends its timeline records, in the order it makes them (global time
// order of the events), when they should not pile up in memory: a writer that streams a trace to
// disk takes them one by one. Without a sink the engine keeps them in Result::timeline.

#include <vector>

#include "sim/result.hpp"

namespace ppsim {

struct Report;

class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  virtual void on_span(const Span& span) = 0;
  virtual void on_message(const MessageSpan& message) = 0;
  virtual void on_memory(const MemorySample& sample) = 0;
  // Right after its span; only a cost model with expert all-to-alls makes any.
  virtual void on_exchange(const ExchangeSpan& /*exchange*/) {}
};

// What a streamed timeline's writer needs to know before the records come.
struct TimelineShape {
  std::vector<int> stage_device;
  int microbatches = 0;
  bool seconds = false;  // times are seconds (a transformer study), not abstract units
  int num_devices = 0;
};

// A writer of several runs' timelines, one after another: `begin` before each run gives the sink the
// engine fills; `end` after it, with the run's report (which it may give what it wrote).
class TimelineStreamer {
 public:
  virtual ~TimelineStreamer() = default;
  virtual TimelineSink& begin(const TimelineShape& shape) = 0;
  virtual void end(Report& report) = 0;
};

}  // namespace ppsim
