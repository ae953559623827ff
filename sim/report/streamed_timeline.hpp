// SPDX-License-Identifier: Apache-2.0
#pragma once
// A run's timeline for `--format json --timeline`, rendered while the engine runs into temporary
// files instead of kept as Result::timeline: the JSON reporter splices it in where a stored
// timeline would be, with the same bytes, so a timeline of millions of ops needs little memory.

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <utility>
#include <vector>

#include "sim/report/spool_section.hpp"
#include "sim/timeline_sink.hpp"

namespace ppsim {

class StreamedTimeline final : public TimelineSink {
 public:
  // `depth`: where its report object sits in the document, 0 alone, 1 inside compare's array.
  explicit StreamedTimeline(std::size_t depth);
  void on_span(const Span& span) override;
  void on_message(const MessageSpan& message) override;
  void on_memory(const MemorySample& sample) override;
  void on_exchange(const ExchangeSpan& exchange) override;
  // The value of the report's "timeline" key, as the JSON reporter prints a stored one there.
  void write(std::ostream& out);

 private:
  std::size_t depth_;
  SpoolSection spans_;
  SpoolSection messages_;
  SpoolSection memory_;
  SpoolSection exchanges_;
};

// Gives each run of a `--format json --timeline` study its StreamedTimeline and hands it to the
// run's report.
class JsonTimelineStreamer final : public TimelineStreamer {
 public:
  explicit JsonTimelineStreamer(std::size_t depth) : depth_(depth) {}
  TimelineSink& begin(const TimelineShape& shape) override;
  void end(Report& report) override;

 private:
  std::size_t depth_;
  std::shared_ptr<StreamedTimeline> current_;
};

// Passes each run's records to several streamers (a streamed trace beside a streamed JSON timeline
// and the pictures' digests), in the order given.
class TeeStreamer final : public TimelineStreamer {
 public:
  explicit TeeStreamer(std::vector<TimelineStreamer*> streamers) : streamers_(std::move(streamers)) {}
  TimelineSink& begin(const TimelineShape& shape) override;
  void end(Report& report) override;

 private:
  class Tee final : public TimelineSink {
   public:
    std::vector<TimelineSink*> sinks;
    void on_span(const Span& span) override {
      for (TimelineSink* sink : sinks) sink->on_span(span);
    }
    void on_message(const MessageSpan& message) override {
      for (TimelineSink* sink : sinks) sink->on_message(message);
    }
    void on_memory(const MemorySample& sample) override {
      for (TimelineSink* sink : sinks) sink->on_memory(sample);
    }
    void on_exchange(const ExchangeSpan& exchange) override {
      for (TimelineSink* sink : sinks) sink->on_exchange(exchange);
    }
  };
  std::vector<TimelineStreamer*> streamers_;
  Tee tee_;
};

}  // namespace ppsim
