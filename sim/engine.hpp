#pragma once
// Discrete-event replay of a Program against a CostModel (semantics: DESIGN.md, "Semantics the
// engine implements"). One compute stream per device, directed FIFO links, a memory tracker per device.

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
  // Everything the hot loop needs about one stage, read from the cost model once per run.
  struct StageInfo {
    std::array<double, kNumOps> time{};
    std::int64_t activation_bytes = 0;
    std::int64_t weight_bytes = 0;  // kept by I for W
    int device = 0;
    int forward_link = -1;   // link carrying this stage's activation to stage + 1 (-1: same device or last)
    int backward_link = -1;  // link carrying this stage's gradient to stage - 1
    double forward_send_time = 0;
    double backward_send_time = 0;
    std::int64_t forward_bytes = 0;
    std::int64_t backward_bytes = 0;
  };

  // Per device: where it is in its action list and when its stream is next free.
  struct DeviceState {
    std::size_t pc = 0;
    double free_at = 0;
    bool running = false;
    std::size_t first_backward = 0;  // phase boundaries, as positions in the action list
    std::size_t last_forward = 0;
  };

  void prepare(const Program& program, const CostModel& costs, const EngineOptions& options);
  void try_start(int device);
  void finish_op(double time, int device);
  double send(int link, double time, std::int64_t bytes, double send_time, const Action& from);
  double ready_time(const Action& action) const;
  std::size_t slot(const Action& action) const {
    return static_cast<std::size_t>(action.stage) * static_cast<std::size_t>(m_) +
           static_cast<std::size_t>(action.microbatch);
  }
  Result summarize();
  Deadlock describe_deadlock() const;

  const Program* program_ = nullptr;
  EngineOptions options_;
  int m_ = 0;
  std::vector<StageInfo> stages_;
  std::vector<DeviceState> devices_;
  std::vector<DeviceFigures> figures_;
  std::vector<MemoryTracker> memory_;
  std::vector<Link> links_;
  // Arrival times per (stage, micro-batch); +inf until known.
  std::vector<double> forward_input_;   // activation from stage - 1 (0 for stage 0)
  std::vector<double> backward_input_;  // gradient from stage + 1 (0 for the last stage)
  std::vector<double> forward_done_;    // this stage's F ended
  std::vector<double> input_grad_done_; // this stage's I ended (W waits for it)
  EventQueue<int> events_;
  Timeline timeline_;
};

}  // namespace ppsim
