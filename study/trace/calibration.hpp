// SPDX-License-Identifier: Apache-2.0
#pragma once
// Costs measured from a recorded run: each stage's F, B, I and W (medians over the step's ops, with
// their spread), the links' latency and bandwidth, and where they came from. ppsim trace --calibrate
// writes it as JSON; --calibrated-from reads it (or a trace, calibrated on the way) and runs any
// schedule, v, m or split on the machine that was measured.

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "study/trace/timer_log.hpp"
#include "study/trace/trace_run.hpp"

namespace ppsim {

struct OpMeasure {
  double median = 0;  // seconds (abstract units when the calibration's seconds is false)
  double spread = 0;  // robust coefficient of variation: 1.4826 x the median |x / median - 1|
  std::int64_t count = 0;
};

struct Calibration {
  std::vector<std::string> files;
  std::string format;
  bool seconds = true;   // costs in seconds; false: ppsim's abstract time units
  std::string schedule;  // what ran, where the source says
  int p = 0;
  int m = 0;
  int v = 1;
  // Per stage of one pipeline in model order (a DualPipe replica counts for its stage): F, B, I, W.
  std::vector<std::array<std::optional<OpMeasure>, kNumOps>> stages;
  std::optional<OpMeasure> overlap;  // an overlapped F&B pair's time
  std::optional<OpMeasure> latency;  // per message, after its link time
  std::optional<double> bandwidth;   // bytes per second (per time unit)
  std::optional<std::int64_t> message_bytes;
  std::array<double, kNumOps> jitter{};  // pooled spread per op kind
  std::optional<double> measured_step;   // the step the source recorded
  std::vector<std::string> notes;        // what was assumed, one line each

  // Costs per stage (F; B = I + W where B was not run whole; W where measured) and where a stage
  // lacks an op, why. `weight` is empty when no stage split B.
  std::vector<double> forward() const;
  std::vector<double> backward() const;
  std::vector<double> weight() const;
  std::string source() const;  // "measured from a.json, b.json (PyTorch profiler (Kineto) trace)"
};

// From a replayable step (every file format with per-op times).
Calibration calibrate_trace(const TraceRun& run);

// From a timer log: which p, m and v ran is not in it; `p`, `m` and `v` (0: unknown) say, and
// `schedule` the schedule (for the zero-bubble profile's chunk placement).
struct TimerHints {
  int p = 0;
  int m = 0;
  int v = 0;
  std::string schedule;
  int step = -1;  // which iteration's block (default the last)
};
Calibration calibrate_timers(const TimerLog& log, const TimerHints& hints);

// Costs for `stages` stages of one pipeline: the measured ones where the count matches, else each new
// stage covers an equal share of the model's depth and costs what the measured stages it overlaps
// cost for that share (a model whose layers are even within each measured stage).
std::vector<double> resample_stages(const std::vector<double>& costs, int stages);

nlohmann::ordered_json calibration_json(const Calibration& calibration);
// InputError naming `file` and the JSON path for anything it cannot use.
Calibration calibration_from_json(const nlohmann::json& json, const std::string& file);
bool is_calibration_json(const nlohmann::json& json);

}  // namespace ppsim
