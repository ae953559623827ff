// SPDX-License-Identifier: Apache-2.0
#pragma once
// A pipeline step as a real run (or ppsim's own --trace) recorded it: each device's compute ops and
// blocking collectives in the order they ran, with their recorded times, and the messages between
// devices. Readers (chrome_trace_import, timer_log) fill it; replay, idle attribution and calibration
// read it.

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/action.hpp"
#include "schedules/program.hpp"

namespace ppsim {

struct TracedItem {
  enum class Kind : std::uint8_t { kCompute, kCollective };
  Kind kind = Kind::kCompute;
  Action action;  // kCompute: the op (fused_with_next: an overlapped pair, `partner` its backward half)
  Action partner;
  double start = 0;
  double end = 0;
  // As the trace wrote it (its "dur"): end - start can differ from it in the last bit, and the
  // replay and the calibration must see the recorded value.
  double duration = 0;
  std::string name;  // kCollective: its kernel or range name
  bool compute() const { return kind == Kind::kCompute; }
};

// A message from `from` (a forward's activation or a B/I's gradient) between two devices: when it
// left its sender's link, and when its receiver had it.
struct TracedMessage {
  Action from;
  int src = 0;
  int dst = 0;
  double depart_start = 0;
  double depart_end = 0;  // the link's busy time ends (ppsim's traces; a real trace: the send kernel's end)
  double arrival = 0;
  std::int64_t bytes = -1;  // -1: not recorded
};

struct TraceRun {
  std::vector<std::string> files;
  std::string format;  // "ppsim --trace", "PyTorch profiler (torch.distributed.pipelining)", ...
  // Times are kept as the file wrote them (microseconds, or ppsim's abstract units), so that a replay
  // reproduces them exactly; this converts them to seconds. 0: abstract time units (ppsim's plain costs).
  double unit_seconds = 1e-6;
  std::string schedule;      // the schedule's name where the trace says it
  int num_microbatches = 0;  // per pipeline
  int num_pipelines = 1;
  std::vector<int> stage_device;
  std::vector<std::vector<TracedItem>> devices;  // per device, in the order they ran
  std::vector<TracedMessage> messages;
  std::vector<std::string> notes;  // what the reader skipped or assumed, one line each

  int num_devices() const { return static_cast<int>(devices.size()); }
  int num_stages() const { return static_cast<int>(stage_device.size()); }
  // The compute actions as a Program (collectives left out), as the engine and the registry know it.
  Program program() const;
  // The step as recorded: the first item's start and the last item's end over all devices.
  double step_start() const;
  double step_end() const;
};

// What every reader checks before handing a run on (InputError naming `file`): each device runs an
// op, every time is finite, the micro-batches count from 0 (a lone op of micro-batch 9999999 would
// make every table m entries long), and each message joins two of the run's devices.
void check_trace_shape(TraceRun& run, const std::string& file);

// The (stage, micro-batch) op that produces what `action` consumes from another stage, if any: a
// forward's activation from stage - 1, a B's or I's gradient from stage + 1 (its B or I), within
// the action's pipeline. W consumes nothing from another stage.
bool has_stage_input(const Action& action, const PipelineShape& shape);

// The median of `values` (the mean of the two middle ones for an even count); 0 for none.
double median_of(std::vector<double> values);
Action stage_input_of(const Action& action);  // its op is F for a forward, else B (I matches too)

}  // namespace ppsim
