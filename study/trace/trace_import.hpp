// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading recorded runs: ppsim's own --trace, torch.profiler's Chrome traces (one file per rank) and
// Megatron-LM's timer logs. Each file is read or refused with one line naming it and the byte.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "study/trace/chrome_events.hpp"
#include "study/trace/timer_log.hpp"
#include "study/trace/trace_run.hpp"

namespace ppsim {

// What one rank's kernels add up to, so that what was read can be reconciled with the trace: busy is
// the union of its kernels' intervals, which equals kernel_time when no two streams overlap.
struct RankKernels {
  int rank = 0;
  std::string file;
  std::int64_t kernels = 0;
  std::int64_t communication_kernels = 0;  // NCCL's
  double kernel_time = 0;                  // sum of every kernel's duration
  double communication_time = 0;
  double busy = 0;  // union of the kernels' intervals
  double first = 0;
  double last = 0;
  double in_actions = 0;   // kernel time inside the pipeline actions read from this rank
  std::int64_t steps = 0;  // ProfilerStep#N ranges
};

struct TraceReading {
  std::optional<TraceRun> run;     // the pipeline step, when the files hold pipeline actions
  std::vector<RankKernels> ranks;  // a profiler trace's kernels, per rank
  std::optional<TimerLog> timers;  // a Megatron-LM timer log
  std::string format;
  std::vector<std::string> notes;
};

struct TraceReadOptions {
  std::string schedule;  // ppsim's trace of several schedules (compare): which one (default the first)
  int step = -1;         // a profiler trace of several steps: which (default the last complete one)
};

// The files of one run (several rank files, or one file). A directory stands for the trace files in
// it. InputError names the file (and byte) of anything that cannot be read.
TraceReading read_trace_files(const std::vector<std::string>& paths, const TraceReadOptions& options = {});

// One file's text (fuzzing): a Chrome trace or a timer log, as read_trace_files reads it.
TraceReading read_trace_text(const std::string& text, const std::string& name);

// ppsim's own trace, from the events of one file (ppsim_trace_import.cpp): `finish` fills out.run
// when the file held ppsim's compute slices.
class PpsimTraceCollector {
 public:
  virtual ~PpsimTraceCollector() = default;
  virtual void on_event(const ChromeEvent& event) = 0;
  virtual void finish(const ChromeTraceHeader& header, TraceReading& out) = 0;
};
std::unique_ptr<PpsimTraceCollector> ppsim_trace_collector(const std::string& file, const TraceReadOptions& options);

}  // namespace ppsim
