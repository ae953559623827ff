#pragma once
// A run's timeline for `--format json --timeline`, rendered while the engine runs into temporary
// files instead of kept as Result::timeline: the JSON reporter splices it in where a stored
// timeline would be, with the same bytes, so a timeline of millions of ops needs little memory.

#include <cstddef>
#include <iosfwd>
#include <memory>

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
  // The value of the report's "timeline" key, as the JSON reporter prints a stored one there.
  void write(std::ostream& out);

 private:
  std::size_t depth_;
  SpoolSection spans_;
  SpoolSection messages_;
  SpoolSection memory_;
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

// Passes each run's records to two streamers (a streamed trace beside a streamed JSON timeline).
class TeeStreamer final : public TimelineStreamer {
 public:
  TeeStreamer(TimelineStreamer& first, TimelineStreamer& second) : first_(first), second_(second) {}
  TimelineSink& begin(const TimelineShape& shape) override;
  void end(Report& report) override;

 private:
  class Tee final : public TimelineSink {
   public:
    TimelineSink* a = nullptr;
    TimelineSink* b = nullptr;
    void on_span(const Span& span) override { a->on_span(span), b->on_span(span); }
    void on_message(const MessageSpan& message) override { a->on_message(message), b->on_message(message); }
    void on_memory(const MemorySample& sample) override { a->on_memory(sample), b->on_memory(sample); }
  };
  TimelineStreamer& first_;
  TimelineStreamer& second_;
  Tee tee_;
};

}  // namespace ppsim
