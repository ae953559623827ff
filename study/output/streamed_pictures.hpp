// SPDX-License-Identifier: Apache-2.0
#pragma once
// Pictures of runs too large to keep their timelines (above kMaxTimelineOps): --svg, --html and a
// table's --timeline drawn from digests the engine fills as it runs (figure_digest.hpp,
// ascii_timeline_digest.hpp). A first run of each schedule gives what must be known before the
// records come: the figures' shared time axis and memory scale, and each ASCII timeline's grid;
// a second fills the digests, beside a streamed trace or JSON timeline when those are asked for too.

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "sim/report/ascii_timeline_digest.hpp"
#include "sim/report/figure_digest.hpp"
#include "sim/report/svg_timeline.hpp"
#include "sim/timeline_sink.hpp"

namespace ppsim {

// The first run's streamer: the grid of each run's ASCII timeline, for rows of `characters`.
class GridFinderStreamer final : public TimelineStreamer {
 public:
  explicit GridFinderStreamer(std::size_t characters) : characters_(characters) {}
  TimelineSink& begin(const TimelineShape& shape) override;
  void end(Report&) override {}

  struct Found {
    TimelineGrid grid;
    std::size_t devices = 0;
    bool several_stages = false;
    std::size_t widest_label = 1;
  };
  // Per run, in the order they ran.
  std::vector<Found> grids() const;

 private:
  struct Run {
    std::unique_ptr<TimelineGridFinder> finder;
    int devices = 0;
    bool several_stages = false;
  };
  std::size_t characters_;
  std::vector<Run> runs_;
};

// The second run's streamer: fills each run's digests and gives them to its report. `scale`, when
// set, makes figure digests (--svg, --html); `grids`, when not empty, ASCII ones (one per run).
// A run small enough to draw one box per op (a schedule beside a large one in `compare`) keeps its
// timeline instead, as it would have alone: a digest draws only aggregated lanes.
class PictureDigestStreamer final : public TimelineStreamer {
 public:
  PictureDigestStreamer(std::optional<FigureScale> scale, std::vector<GridFinderStreamer::Found> grids)
      : scale_(scale), grids_(std::move(grids)) {}
  TimelineSink& begin(const TimelineShape& shape) override;
  void end(Report& report) override;

 private:
  class Both final : public TimelineSink {
   public:
    FigureDigest* figure = nullptr;
    AsciiTimelineDigest* ascii = nullptr;
    // The records while the run could still be drawn box by box (at most kMaxDrawnOps spans);
    // given up once it cannot.
    std::optional<Timeline> kept;
    void on_span(const Span& span) override;
    void on_message(const MessageSpan& message) override;
    void on_memory(const MemorySample& sample) override;
    void on_exchange(const ExchangeSpan& exchange) override;
  };
  std::optional<FigureScale> scale_;
  std::vector<GridFinderStreamer::Found> grids_;
  std::size_t run_ = 0;
  std::shared_ptr<FigureDigest> figure_;
  std::shared_ptr<AsciiTimelineDigest> ascii_;
  Both both_;
};

}  // namespace ppsim
