// SPDX-License-Identifier: Apache-2.0
#include "sim/report/figure_digest.hpp"

#include <algorithm>
#include <cmath>

namespace ppsim {

FigureKind figure_kind(const Span& span) {
  if (span.action.fused_with_next) return kKindFB;
  switch (span.action.op) {
    case Op::kForward:
      return kKindF;
    case Op::kBackward:
      return kKindB;
    case Op::kBackwardInput:
      return kKindI;
    case Op::kBackwardWeight:
      return kKindW;
  }
  return kKindF;
}

void add_to_bins(FigureBins& bins, double bin_time, double start, double end, int kind) {
  if (!(end > start) || bins.empty()) return;
  const auto last = static_cast<std::ptrdiff_t>(bins.size()) - 1;
  auto first_bin = std::clamp(static_cast<std::ptrdiff_t>(std::floor(start / bin_time)), std::ptrdiff_t{0}, last);
  auto last_bin = std::clamp(static_cast<std::ptrdiff_t>(std::floor(end / bin_time)), std::ptrdiff_t{0}, last);
  for (auto b = first_bin; b <= last_bin; ++b) {
    const double from = std::max(start, static_cast<double>(b) * bin_time);
    const double to = std::min(end, static_cast<double>(b + 1) * bin_time);
    if (to > from) bins[static_cast<std::size_t>(b)][static_cast<std::size_t>(kind)] += to - from;
  }
}

FigureDigest::FigureDigest(double time_end, bool memory_bytes, std::size_t devices)
    : time_end_(time_end),
      memory_bytes_(memory_bytes),
      bins_(static_cast<std::size_t>(std::floor(figure_geometry::kPlotWidth / figure_geometry::kBinPx))),
      bin_time_(time_end / static_cast<double>(bins_)),
      // A curve with more points than twice the bins is drawn as envelopes: every peak stays visible.
      envelope_above_(2 * static_cast<std::size_t>(figure_geometry::kPlotWidth / figure_geometry::kBinPx)),
      lanes_(devices, FigureBins(bins_)),
      exchange_lanes_(devices),
      curves_(devices) {}

void FigureDigest::on_span(const Span& span) {
  ++spans_;
  const FigureKind kind = figure_kind(span);
  present_[kind] = true;
  last_time_ = std::max(last_time_, span.end);
  last_span_end_ = std::max(last_span_end_, span.end);
  if (span.device < 0 || static_cast<std::size_t>(span.device) >= lanes_.size()) return;
  add_to_bins(lanes_[static_cast<std::size_t>(span.device)], bin_time_, span.start, span.end, kind);
}

void FigureDigest::on_message(const MessageSpan& message) {
  ++messages_;
  last_time_ = std::max(last_time_, message.arrival);
  if (message.arrival > message.depart_start || message.depart_end > message.depart_start) messages_take_time_ = true;
  auto [it, added] = links_.try_emplace({message.src, message.dst});
  if (added) it->second.resize(bins_);
  // Busy share at the bottom, the share in flight (latency) above it; flights may overlap.
  add_to_bins(it->second, bin_time_, message.depart_start, message.depart_end, 0);
  add_to_bins(it->second, bin_time_, message.depart_end, message.arrival, 1);
}

void FigureDigest::on_exchange(const ExchangeSpan& exchange) {
  ++exchanges_;
  if (exchange.device < 0 || static_cast<std::size_t>(exchange.device) >= exchange_lanes_.size()) return;
  FigureBins& bins = exchange_lanes_[static_cast<std::size_t>(exchange.device)];
  if (bins.empty()) bins.resize(bins_);
  add_to_bins(bins, bin_time_, exchange.start, exchange.end, exchange.kind == ExchangeKind::kDispatch ? 0 : 1);
}

const FigureBins* FigureDigest::link(int src, int dst) const {
  const auto it = links_.find({src, dst});
  return it == links_.end() ? nullptr : &it->second;
}

double FigureDigest::column_of(double time) const {
  // As figure_x places it: x = left + width * t / time_end, then whole bins from the plot's left.
  using namespace figure_geometry;
  const double x = kPlotLeft + kPlotWidth * time / time_end_;
  return std::floor((x - kPlotLeft) / kBinPx);
}

void FigureDigest::on_memory(const MemorySample& sample) {
  if (sample.device < 0 || static_cast<std::size_t>(sample.device) >= curves_.size()) return;
  CurveState& state = curves_[static_cast<std::size_t>(sample.device)];
  const double value = memory_bytes_ ? static_cast<double>(sample.bytes) : sample.stashed;
  // Frees come before allocations at one time, so the samples between are dips no one would see.
  if (state.pending && state.last.first == sample.time) {
    state.last.second = value;
    return;
  }
  if (state.pending) settle(state);
  state.pending = true;
  state.last = {sample.time, value};
  ++state.size;
}

void FigureDigest::settle(CurveState& state) {
  MemoryCurve& curve = state.curve;
  const auto point = state.last;
  state.pending = false;
  if (curve.empty) {
    curve.empty = false;
    curve.first = point;
    curve.peak = point;
    return;
  }
  if (point.second > curve.peak.second) curve.peak = point;
  if (!curve.envelope && state.size > envelope_above_) {
    // Too many points to draw each: the ones kept so far go into envelopes, and all that follow.
    curve.envelope = true;
    state.previous = curve.first.second;
    for (const auto& kept : curve.points) add_to_envelope(state, kept);
    curve.points.clear();
    curve.points.shrink_to_fit();
  }
  if (curve.envelope) {
    add_to_envelope(state, point);
  } else {
    curve.points.push_back(point);
  }
}

void FigureDigest::add_to_envelope(CurveState& state, std::pair<double, double> point) {
  const double column = column_of(point.first);
  if (!state.open || column != state.column) {
    close_column(state);
    state.open = true;
    state.column = column;
    state.high = state.low = state.latest = state.previous;
  }
  state.latest = point.second;
  state.low = std::min(state.low, state.latest);
  state.high = std::max(state.high, state.latest);
}

void FigureDigest::close_column(CurveState& state) {
  if (!state.open) return;
  state.open = false;
  if (state.high == state.previous && state.low == state.previous && state.latest == state.previous) return;
  state.curve.steps.push_back({state.column, state.previous, state.high, state.low, state.latest});
  state.previous = state.latest;
}

void FigureDigest::finish() {
  for (CurveState& state : curves_) {
    if (state.pending) settle(state);
    close_column(state);
  }
}

}  // namespace ppsim
