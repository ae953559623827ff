// SPDX-License-Identifier: Apache-2.0
#include "study/output/streamed_pictures.hpp"

#include <stdexcept>

#include "sim/report/report.hpp"

namespace ppsim {

TimelineSink& GridFinderStreamer::begin(const TimelineShape& shape) {
  Run run;
  run.devices = shape.num_devices;
  run.several_stages = static_cast<int>(shape.stage_device.size()) > shape.num_devices;
  // The widest row any label allows: one character a cell.
  const std::size_t bound = timeline_columns(1, shape.num_devices, characters_);
  run.finder = std::make_unique<TimelineGridFinder>(static_cast<std::size_t>(std::max(shape.num_devices, 0)),
                                                    run.several_stages, bound);
  runs_.push_back(std::move(run));
  return *runs_.back().finder;
}

std::vector<GridFinderStreamer::Found> GridFinderStreamer::grids() const {
  std::vector<Found> found;
  for (const Run& run : runs_) {
    Found one;
    one.widest_label = run.finder->widest_label();
    one.grid = run.finder->grid(timeline_columns(one.widest_label, run.devices, characters_));
    one.devices = static_cast<std::size_t>(std::max(run.devices, 0));
    one.several_stages = run.several_stages;
    found.push_back(one);
  }
  return found;
}

TimelineSink& PictureDigestStreamer::begin(const TimelineShape& shape) {
  const auto devices = static_cast<std::size_t>(std::max(shape.num_devices, 0));
  figure_.reset();
  ascii_.reset();
  if (scale_) figure_ = std::make_shared<FigureDigest>(scale_->time_end, scale_->memory_bytes, devices);
  if (!grids_.empty()) {
    if (run_ >= grids_.size() || grids_[run_].devices != devices) {
      throw std::logic_error("PictureDigestStreamer: the runs differ from the ones the grids were found for");
    }
    const auto& found = grids_[run_];
    ascii_ = std::make_shared<AsciiTimelineDigest>(found.grid, devices, found.several_stages, found.widest_label);
  }
  ++run_;
  both_.figure = figure_.get();
  both_.ascii = ascii_.get();
  both_.kept.reset();
  if (scale_) both_.kept.emplace();
  return both_;
}

void PictureDigestStreamer::end(Report& report) {
  if (figure_) figure_->finish();
  if (ascii_) ascii_->finish();
  if (both_.kept) {
    // Small enough for one box per op: its figure is drawn from its timeline, as a kept run's is.
    // (The ASCII digest stays: its widest label sizes the columns, the program being gone.)
    report.result.timeline = std::move(*both_.kept);
    both_.kept.reset();
    figure_.reset();
  }
  report.figure_digest = std::move(figure_);
  report.ascii_timeline = std::move(ascii_);
}

void PictureDigestStreamer::Both::on_span(const Span& span) {
  if (figure != nullptr) figure->on_span(span);
  if (ascii != nullptr) ascii->on_span(span);
  if (kept) {
    if (kept->spans.size() < kMaxDrawnOps) {
      kept->spans.push_back(span);
    } else {
      kept.reset();  // aggregated whatever else it holds: the digest draws it
    }
  }
}

void PictureDigestStreamer::Both::on_message(const MessageSpan& message) {
  if (figure != nullptr) figure->on_message(message);
  if (kept) kept->messages.push_back(message);  // a few per span: bounded with them
}

void PictureDigestStreamer::Both::on_memory(const MemorySample& sample) {
  if (figure != nullptr) figure->on_memory(sample);
  if (kept) kept->memory.push_back(sample);
}

void PictureDigestStreamer::Both::on_exchange(const ExchangeSpan& exchange) {
  if (figure != nullptr) figure->on_exchange(exchange);
  if (kept) kept->exchanges.push_back(exchange);  // a few per span: bounded with them
}

}  // namespace ppsim
