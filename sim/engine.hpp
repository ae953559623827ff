#pragma once
// Discrete-event replay of a Program against a CostModel (semantics: DESIGN.md, "Semantics the
// engine implements"). One compute stream per device, directed FIFO links, a memory tracker per device.

#include <array>
#include <cstdint>
#include <vector>

#include "models/cost_model.hpp"
#include "schedules/program.hpp"
#include "sim/event_queue.hpp"
#include "sim/link.hpp"
#include "sim/memory_tracker.hpp"
#include "sim/result.hpp"

namespace ppsim {

enum class CommMode : std::uint8_t {
  kOverlap,   // the compute stream is free while a message moves
  kBlocking,  // the sender's compute stream waits until its message has left the link
};

struct EngineOptions {
  CommMode comm = CommMode::kOverlap;
  bool record_timeline = false;  // spans, messages and memory samples; otherwise only running sums
};

// Holds scratch buffers so that repeated runs (sweeps) do not allocate once warmed up.
// The program must have a valid shape (validate_program); ordering problems are reported as deadlocks.
class Engine {
 public:
  SimulationOutcome run(const Program& program, const CostModel& costs, const EngineOptions& options = {});

 private:
  // Every action is resolved once before the run into what it waits for, what it costs and where
  // its output goes, so the event loop does no lookups by stage, op or micro-batch.
  struct PlannedOp {
    double cost = 0;
    double send_time = 0;             // bytes / bandwidth of the message this op sends
    std::int64_t message_bytes = 0;
    std::uint32_t wait_first = 0;     // slots in times_: +inf until the dependency has arrived
    std::uint32_t wait_second = 0;
    std::uint32_t done = 0;           // slot that records this op's end (read by B/I after F, W after I)
    std::uint32_t deliver = 0;        // slot of the consumer's dependency (kScratch when none)
    std::int32_t link = -1;           // link the output crosses; -1 when it stays on the device
    std::int32_t consumer = -1;       // device to wake when the output arrives; -1 when none
    std::int32_t stage = 0;
    Op op = Op::kForward;
  };

  // Per device: its slice of plan_, its position, when its stream is next free, and the few
  // positions whose times the summary needs (device and phase starts and ends).
  struct DeviceState {
    std::size_t begin = 0;  // first op in plan_
    std::size_t size = 0;
    std::size_t pc = 0;     // next op, relative to begin
    double free_at = 0;
    bool running = false;
    std::array<std::size_t, 8> marks{};  // sorted positions to note; marks[mark_count..] unused
    std::size_t mark_count = 0;
    std::size_t next_mark = 0;           // index into marks
    std::array<std::size_t, 3> phase_first{};  // phase_first > phase_last: the phase is empty
    std::array<std::size_t, 3> phase_last{};
  };

  void prepare(const Program& program, const CostModel& costs, const EngineOptions& options);
  void plan_device(int device, const CostModel& costs);
  void try_start(int device);
  void note_marks(int device, double start, double end);
  void finish_op(double time, int device);
  Result summarize();
  Deadlock describe_deadlock() const;

  std::uint32_t slot(int region, int stage, int microbatch) const {
    return static_cast<std::uint32_t>(kFirstRegionSlot + (static_cast<std::size_t>(region) * slots_per_region_) +
                                      static_cast<std::size_t>(stage) * static_cast<std::size_t>(m_) +
                                      static_cast<std::size_t>(microbatch));
  }

  // times_ layout: an always-ready slot, a write-only scratch slot, then one region per kind of
  // dependency, each indexed by (stage, micro-batch).
  static constexpr std::uint32_t kReady = 0;
  static constexpr std::uint32_t kScratch = 1;
  static constexpr std::size_t kFirstRegionSlot = 2;
  enum Region : int { kForwardInput = 0, kBackwardInput = 1, kForwardDone = 2, kInputGradDone = 3 };

  const Program* program_ = nullptr;
  EngineOptions options_;
  int m_ = 0;
  std::size_t slots_per_region_ = 0;
  std::vector<PlannedOp> plan_;
  std::vector<double> times_;
  std::vector<std::int64_t> stage_activation_bytes_;
  std::vector<std::int64_t> stage_weight_bytes_;
  std::vector<int> link_of_pair_;  // scratch for prepare
  std::vector<DeviceState> devices_;
  std::vector<DeviceFigures> figures_;
  std::vector<MemoryTracker> memory_;
  std::vector<Link> links_;
  EventQueue events_;
  Timeline timeline_;
};

}  // namespace ppsim
