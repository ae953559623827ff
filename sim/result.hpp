// SPDX-License-Identifier: Apache-2.0
#pragma once
// The figures of a simulation, named as in DESIGN.md, plus the optional timeline.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/exchange.hpp"
#include "schedules/action.hpp"

namespace ppsim {

enum class Phase : std::uint8_t { kWarmup, kSteady, kCooldown };
inline constexpr std::array<const char*, 3> kPhaseNames = {"warmup", "steady", "cooldown"};

// Warmup: ops before the device's first backward; cooldown: ops after its last forward.
struct PhaseFigures {
  std::int64_t ops = 0;
  double busy = 0;   // compute time of the phase's ops
  double start = 0;  // first op start
  double end = 0;    // last op end
  double duration() const { return end - start; }
};

struct DeviceFigures {
  double start = 0;
  double end = 0;
  double busy = 0;
  double idle = 0;          // makespan - busy
  double bubble_ratio = 0;  // idle / makespan
  std::int64_t ops = 0;
  double peak_stashed = 0;  // in micro-batch stashes of one stage (a Seq1F1B slice is 1/k of one)
  std::int64_t static_bytes = 0;
  std::int64_t peak_activation_bytes = 0;
  std::int64_t peak_memory_bytes = 0;  // static + peak activations (and FSDP's unsharded buffers held with them)
  std::array<PhaseFigures, 3> phases{};
};

// When a stage's weight gradients are complete and when its parameters are first needed, for the
// data-parallel collectives that wait on them (models/transformer/data_parallel.hpp): the op that
// ends last among its B and W ops (the backward half of an overlapped op counts), and its first F.
struct StageFigures {
  double gradient_start = 0;  // that last gradient op's start
  double gradient_end = 0;    // and its end
  double first_forward = 0;   // the start of the stage's first forward
};

struct LinkFigures {
  int src = 0;
  int dst = 0;
  std::int64_t messages = 0;
  std::int64_t bytes = 0;
  double busy = 0;  // time the link spent sending
};

// Recorded only when asked for: spans grow with the program, summaries do not.
struct Span {
  int device = 0;
  Action action;  // when action.fused_with_next, the span is an overlapped op of action and partner
  double start = 0;
  double end = 0;
  Action partner{};
};

struct MessageSpan {
  int src = 0;
  int dst = 0;
  Action from;          // the op whose output is sent
  double enqueued = 0;  // the producing op's end
  double depart_start = 0;
  double depart_end = 0;  // left the link
  double arrival = 0;     // depart_end + latency
  std::int64_t bytes = 0;
};

// An expert all-to-all inside a recorded span, on the device's communication stream: the span's
// place for it (CostModel::exchanges) scaled to the span's actual time.
struct ExchangeSpan {
  int device = 0;
  Action action;  // the op whose tokens move (an overlapped pair's forward or backward half)
  ExchangeKind kind = ExchangeKind::kDispatch;
  bool recomputed = false;
  double start = 0;
  double end = 0;
};

struct MemorySample {
  int device = 0;
  double time = 0;
  std::int64_t bytes = 0;  // static + activations after the change
  double stashed = 0;
};

struct Timeline {
  std::vector<Span> spans;  // in order of start per device
  std::vector<MessageSpan> messages;
  std::vector<MemorySample> memory;
  std::vector<ExchangeSpan> exchanges;  // in order of start per device; empty without expert parallelism
};

struct Result {
  int p = 0;
  int m = 0;  // the program's micro-batches per pipeline (Seq1F1B: slices); a step's are Report::params.m
  int stages = 0;
  double makespan = 0;
  double bubble_ratio = 0;
  double bubble_overhead = 0;
  double comm_ratio = 0;
  double total_busy = 0;
  std::int64_t compute_ops = 0;
  std::int64_t messages = 0;
  std::vector<DeviceFigures> per_device;
  std::vector<StageFigures> per_stage;  // with EngineOptions::record_stage_times
  std::vector<LinkFigures> per_link;
  std::optional<Timeline> timeline;
  std::vector<double> critical_time;  // with EngineOptions::record_critical_path: per device
};

// Where each unfinished device stopped and what it waits for.
struct StuckDevice {
  int device = 0;
  std::size_t step = 0;
  Action next;
  std::string waits_for;
};

struct Deadlock {
  std::vector<StuckDevice> devices;
  std::string summary() const;  // one line naming every stuck device
};

struct SimulationOutcome {
  std::optional<Result> result;      // set when the program finished
  std::optional<Deadlock> deadlock;  // set when it cannot
};

}  // namespace ppsim
