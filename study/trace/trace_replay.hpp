// SPDX-License-Identifier: Apache-2.0
#pragma once
// Replaying a recorded step and saying where each device's idle time went.
//
// The replay runs the recorded program with the recorded durations: each item starts when its device
// is free and its input has arrived (the producer's end plus the message's recorded delay), plus the
// launch gap the trace shows beyond that. Unchanged, it reproduces the recorded times; without launch
// gaps or message delays it says what they cost.
//
// Idle attribution splits each device's idle time in the step (the step's span less its compute)
// into causes, following what each wait waited for back along the chain of ops that made it:
// - bubble: another stage computing (the pipeline's bubble proper: fill, drain, dependencies);
// - straggler: the part of that computing beyond the op's reference time (the median over stages of
//   each stage's median for that op kind): a slow stage or a slow op;
// - message: data in flight between devices after its producer had finished;
// - collective: a blocking collective (data-parallel reduction, all-gather) on the device's stream;
// - launch: the op could have started but did not (host-side launch and Python overhead).
// The parts add up to the idle time, interval by interval.

#include <array>
#include <string>
#include <vector>

#include "study/trace/trace_run.hpp"

namespace ppsim {

enum class IdleCause : std::uint8_t { kBubble, kStraggler, kMessage, kCollective, kLaunch };
inline constexpr int kIdleCauses = 5;
const char* idle_cause_name(IdleCause cause);

struct ReplayOptions {
  bool launch_gaps = true;     // false: every item starts as soon as it can
  bool message_delays = true;  // false: messages arrive as their producer ends
};

struct IdleSegment {
  double start = 0;
  double end = 0;
  IdleCause cause = IdleCause::kBubble;
};

struct DeviceIdle {
  double busy = 0;  // compute
  double idle = 0;  // the step's span less busy (the sum of `cause`)
  std::array<double, kIdleCauses> cause{};
  std::vector<IdleSegment> segments;  // the idle intervals, in order, each with its cause
};

struct TraceReplay {
  std::vector<std::vector<double>> start;  // per device, per item
  std::vector<std::vector<double>> end;
  double step_start = 0;
  double step_end = 0;
  double step() const { return step_end - step_start; }
  // Items whose recorded start precedes their input's recorded production (clocks of different ranks
  // that disagree, or a message matched to the wrong op); the replay lets them wait.
  int inconsistent = 0;
  double worst_skew = 0;
  std::vector<DeviceIdle> idle;  // on the replayed times, when attribution was asked for
};

// InputError when the recorded order cannot run (an op waits for one that comes after it).
TraceReplay replay_trace(const TraceRun& run, const ReplayOptions& options = {}, bool attribute_idle = true);

}  // namespace ppsim
