// SPDX-License-Identifier: Apache-2.0
#pragma once
// What an SVG figure draws of a timeline, taken record by record: busy time per bin of each device
// lane and each link, the kinds of op present, and each device's memory curve reduced to what its
// path shows (its points, or per-pixel envelopes when it has more than the pixels can show). Its
// memory grows with the devices and the figure's width, never with the ops, so a timeline too large
// to keep is drawn from a digest filled as the engine runs (--svg and --html above 2,000,000 ops).
// A kept timeline is drawn from a digest too, so both give the same bytes.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "sim/timeline_sink.hpp"

namespace ppsim {

// The horizontal geometry every figure shares, in px.
namespace figure_geometry {
inline constexpr double kFigureWidth = 1160;  // fits a 1200 px page with its margins
inline constexpr double kPlotLeft = 64;
inline constexpr double kPlotRight = 16;
inline constexpr double kPlotWidth = kFigureWidth - kPlotLeft - kPlotRight;
inline constexpr double kBinPx = 2;  // width of one bin when lanes are aggregated
}  // namespace figure_geometry

// Kinds of boxes, in the order they stack in an aggregated bin (bottom up).
enum FigureKind { kKindF, kKindB, kKindI, kKindW, kKindFB, kNumFigureKinds };
FigureKind figure_kind(const Span& span);

// Busy time per kind in bins of the figure's bin time.
using FigureBins = std::vector<std::array<double, kNumFigureKinds>>;

// A device's memory curve: the value after each instant (samples at one time merged, the last
// winning), as points or, above twice the figure's bins, per-bin envelopes.
struct MemoryCurve {
  bool empty = true;
  std::pair<double, double> first{};  // (time, value) of the first point
  bool envelope = false;
  std::vector<std::pair<double, double>> points;  // without envelope: every point after the first
  struct Step {
    double column;  // bin index
    double previous, high, low, last;
  };
  std::vector<Step> steps;  // with envelope: the bins whose values changed
  std::pair<double, double> peak{};  // the first point with the highest value
};

class FigureDigest final : public TimelineSink {
 public:
  // `time_end`: the right end of the figure's time axis; `memory_bytes`: the curves show bytes
  // (else stashed micro-batches); `devices`: the lanes.
  FigureDigest(double time_end, bool memory_bytes, std::size_t devices);

  void on_span(const Span& span) override;
  void on_message(const MessageSpan& message) override;
  void on_memory(const MemorySample& sample) override;
  void on_exchange(const ExchangeSpan& exchange) override;
  // After the last record: settles the curves' last points.
  void finish();

  double time_end() const { return time_end_; }
  bool memory_bytes() const { return memory_bytes_; }
  std::size_t bins() const { return bins_; }
  double bin_time() const { return bin_time_; }
  std::size_t spans() const { return spans_; }
  std::size_t messages() const { return messages_; }
  std::size_t exchanges() const { return exchanges_; }
  // Some message took time: the scenario gave the links a latency or a bandwidth.
  bool messages_take_time() const { return messages_take_time_; }
  const std::array<bool, kNumFigureKinds>& kinds_present() const { return present_; }
  double last_time() const { return last_time_; }  // the latest op end or message arrival
  double last_span_end() const { return last_span_end_; }
  const FigureBins& lane(std::size_t device) const { return lanes_[device]; }
  // A device's expert all-to-alls: dispatch (kind 0) and combine (kind 1) time per bin; empty when
  // it had none.
  const FigureBins& exchange_lane(std::size_t device) const { return exchange_lanes_[device]; }
  // Busy (kind 0) and in-flight (kind 1) time of the link src -> dst; nullptr when it sent nothing.
  const FigureBins* link(int src, int dst) const;
  const MemoryCurve& memory(std::size_t device) const { return curves_[device].curve; }

 private:
  struct CurveState {
    MemoryCurve curve;
    bool pending = false;  // the curve's last point, whose value a sample at its time may replace
    std::pair<double, double> last{};
    std::size_t size = 0;  // merged points so far, the pending one included
    // The envelope's open bin.
    bool open = false;
    double column = 0, previous = 0, high = 0, low = 0, latest = 0;
  };
  void settle(CurveState& state);  // the pending point is final
  void add_to_envelope(CurveState& state, std::pair<double, double> point);
  void close_column(CurveState& state);
  double column_of(double time) const;

  double time_end_;
  bool memory_bytes_;
  std::size_t bins_;
  double bin_time_;
  std::size_t envelope_above_;  // points
  std::size_t spans_ = 0;
  std::size_t messages_ = 0;
  std::size_t exchanges_ = 0;
  bool messages_take_time_ = false;
  std::array<bool, kNumFigureKinds> present_{};
  double last_time_ = 0;
  double last_span_end_ = 0;
  std::vector<FigureBins> lanes_;
  std::vector<FigureBins> exchange_lanes_;  // each sized at its device's first exchange
  std::map<std::pair<int, int>, FigureBins> links_;
  std::vector<CurveState> curves_;
};

// Adds the busy time [start, end) of `kind` to the bins it overlaps.
void add_to_bins(FigureBins& bins, double bin_time, double start, double end, int kind);

}  // namespace ppsim
