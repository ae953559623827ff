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
  // Megatron-LM's default for schedules without interleaving (p2p_communication.py,
  // P2PCommunicator._communicate with batch_p2p_comm and wait_on_reqs): a device issues its send
  // together with the receive its next op needs, as one batch, and waits for the whole batch. A
  // message moves only once its receiver has posted the matching receive, which it does when it has
  // finished the op before the one that consumes the message; the sender's stream is held until the
  // message has arrived.
  kPaired,
};

struct EngineOptions {
  CommMode comm = CommMode::kOverlap;
  bool record_timeline = false;  // spans, messages and memory samples; otherwise only running sums
  // Result::per_stage (each stage's first forward and last gradient op), for the data-parallel
  // collectives of a transformer study; off, it costs nothing.
  bool record_stage_times = false;
};

// Reuses its state buffers across runs (sweeps); the event loop itself never allocates unless a
// timeline is recorded. The program must have a valid shape (validate_program); ordering problems
// between devices are reported as deadlocks.
class Engine {
 public:
  SimulationOutcome run(const Program& program, const CostModel& costs, const EngineOptions& options = {});

 private:
  // What the event loop needs about one stage, read from the cost model once per run.
  struct StageInfo {
    std::array<double, kNumOps> time{};
    std::int64_t activation_bytes = 0;
    std::int64_t weight_bytes = 0;  // kept by I for W
    int device = 0;
    int next_device = -1;      // device of stage + 1 (-1 for the last stage)
    int previous_device = -1;  // device of stage - 1 (-1 for the first stage)
    int forward_link = -1;     // carries this stage's activation to stage + 1 (-1: same device, or last)
    int backward_link = -1;    // carries this stage's gradient to stage - 1 (-1: same device, or first)
    std::int64_t forward_bytes = 0;
    std::int64_t backward_bytes = 0;
    double forward_send_time = 0;
    double backward_send_time = 0;
  };

  // Per device: its position, when its stream is next free, and the few positions whose times
  // the summary needs (the device's and each phase's first start and last end, each of its stages'
  // first forward and last gradient op).
  struct DeviceState {
    const Action* actions = nullptr;  // the device's action list, cached to save two indirections per op
    std::size_t pc = 0;
    std::size_t size = 0;
    double free_at = 0;
    bool running = false;
    std::vector<std::size_t> marks;            // sorted positions to note, ended by kNoMark
    std::size_t next_mark = 0;                 // index into marks
    std::size_t next_mark_pc = kNoMark;        // marks[next_mark], cached: one comparison per op
    std::array<std::size_t, 3> phase_first{};  // inclusive; a phase that is empty has first > size
    std::array<std::size_t, 3> phase_last{};
    int held = 0;  // kPaired: sent messages whose receiver has not posted its receive yet
  };

  void prepare(const Program& program, const CostModel& costs, const EngineOptions& options);
  void prepare_links(const Program& program, const CostModel& costs, std::vector<double>& bandwidth);
  void prepare_device(int device, const CostModel& costs);
  // The cheap test inline, the rest out of line: most calls find the device busy or done.
  void try_start(int device) {
    const DeviceState& state = devices_[static_cast<std::size_t>(device)];
    if (!state.running && state.pc < state.size) start_if_ready(device);
  }
  void start_if_ready(int device);
  void note_marks(int device, std::size_t position, double start, double end);
  // When the inputs of `action` have arrived (+inf while one has not).
  double ready_time(const Action& action) const;
  // Applies one finished action: memory, done flags and its output message. Returns the device to
  // wake for that output (-1 for none) and raises `released` to when its message has left the link.
  // `deferred` counts a paired message that must wait for its receiver (no device to wake then).
  [[gnu::always_inline]] inline int complete(const Action& action, double time, int device, double& released,
                                             int& deferred);
  // kPaired: `device` has reached the action at its pc and posts the receives of its inputs (and of
  // its overlapped partner's), releasing the senders that were waiting for them.
  [[gnu::noinline]] void post_receives(int device, double time);
  void launch_waiting(std::vector<double>& posted, std::vector<std::int32_t>& waiting, std::size_t k, double time,
                      bool forward);
  // Timeline recording stays out of line so the event loop's functions stay small without it.
  [[gnu::noinline]] void record_span(int device, const Action& action, const Action* partner, double start, double end);
  [[gnu::noinline]] void record_memory(int device, double time);
  [[gnu::noinline]] void record_message(const Link& link, const Action& from, double enqueued, double start, double end,
                                        double arrival, std::int64_t bytes);
  // Called once per op from the event loop; inlined there.
  [[gnu::always_inline]] inline void finish_op(double time, int device);
  Result summarize();
  Deadlock describe_deadlock() const;

  std::size_t slot(const Action& action) const {
    return static_cast<std::size_t>(action.stage) * static_cast<std::size_t>(m_) +
           static_cast<std::size_t>(action.microbatch);
  }

  // Per (stage, micro-batch) flags of ops already finished on their own device.
  static constexpr std::size_t kNoMark = static_cast<std::size_t>(-1);
  static constexpr std::uint8_t kForwardDone = 1;
  static constexpr std::uint8_t kInputGradDone = 2;

  const Program* program_ = nullptr;
  const CostModel* costs_ = nullptr;  // for overlapped pairs, whose time depends on both halves
  EngineOptions options_;
  int m_ = 0;
  std::vector<StageInfo> stages_;
  std::vector<DeviceState> devices_;
  std::vector<DeviceFigures> figures_;
  std::vector<StageFigures> stage_figures_;
  // Per stage, the position in its device's list of its first F and of its last B or W: a device
  // runs its list in order, so those are the stage's first forward and the op that completes its
  // gradients, noted as marks at no cost to the other ops.
  std::vector<std::size_t> first_forward_at_;
  std::vector<std::size_t> last_gradient_at_;
  std::vector<MemoryTracker> memory_;
  std::vector<Link> links_;
  // Arrival times per (stage, micro-batch), +inf until known: the state that grows with the
  // program is these two arrays and one byte of flags per (stage, micro-batch).
  std::vector<double> forward_input_;   // activation from stage - 1 (0 for stage 0)
  std::vector<double> backward_input_;  // gradient from stage + 1 (0 for the last stage)
  std::vector<std::uint8_t> done_;
  // kPaired only (empty otherwise), per (stage, micro-batch) input: when its receiver posted the
  // receive (+inf: not yet), the device of a sender waiting for that and since when.
  std::vector<double> forward_posted_;
  std::vector<double> backward_posted_;
  std::vector<std::int32_t> forward_waiting_;
  std::vector<std::int32_t> backward_waiting_;
  std::vector<double> waiting_since_;  // indexed by slot for forward inputs, slots + slot for backward
  EventQueue events_;
  Timeline timeline_;
};

}  // namespace ppsim
