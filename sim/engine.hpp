// SPDX-License-Identifier: Apache-2.0
#pragma once
// Discrete-event replay of a Program against a CostModel (semantics: DESIGN.md, "Semantics the
// engine implements"). One compute stream per device, directed FIFO links, a memory tracker per device.
//
// Two algorithms compute the same figures, bit for bit (tests/sweep_equivalence_test.cpp):
// - the in-order sweep (engine_sweep.cpp), for summaries in overlap and blocking modes. Each device
//   runs its list in order and only it sends on its outgoing links, so an op's start, end and
//   messages follow from its inputs alone, whatever order the devices are visited in: no event
//   queue, a queue of devices woken by arrivals, state in a window over the micro-batches in flight.
// - the event queue (engine.cpp), for timelines (whose records come in global time order) and
//   paired sends (whose messages leave when their receiver posts, out of the sender's order).

#include <array>
#include <cstdint>
#include <vector>

#include "models/cost_model.hpp"
#include "schedules/action_stream.hpp"
#include "schedules/program.hpp"
#include "sim/event_queue.hpp"
#include "sim/link.hpp"
#include "sim/memory_tracker.hpp"
#include "models/noise.hpp"
#include "sim/result.hpp"
#include "sim/timeline_sink.hpp"

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

// kAuto takes the in-order sweep whenever it can (no timeline, comm other than paired); the others
// force one, for the tests that compare them and the benchmarks.
enum class EngineAlgorithm : std::uint8_t { kAuto, kEventQueue, kSweep };

struct EngineOptions {
  CommMode comm = CommMode::kOverlap;
  EngineAlgorithm algorithm = EngineAlgorithm::kAuto;
  bool record_timeline = false;  // spans, messages and memory samples; otherwise only running sums
  // With record_timeline: the records go here as they are made, and Result::timeline stays unset.
  TimelineSink* timeline_sink = nullptr;
  // Result::per_stage (each stage's first forward and last gradient op), for the data-parallel
  // collectives of a transformer study; off, it costs nothing.
  bool record_stage_times = false;
  // A lowered program's RECVs: false, as torch's runtime runs them (a receive is posted where it
  // stands and waited for by the op that uses the message, so it never holds the device by
  // itself); true, the device waits at each RECV until its message has arrived.
  bool wait_at_receives = false;
  // Kernel and message noise of one Monte-Carlo sample (models/noise.hpp); with any, the event queue
  // runs, drawing each op's and message's factor as it starts or is sent. Null or none: no noise.
  const NoiseModel* noise = nullptr;
  // Result::critical_time: each device's compute time on the step's critical path (as
  // critical_time_by_device finds it from a timeline), found as the in-order sweep runs, holding only
  // the paths that can still become critical. In-order sweep only (no timeline, no paired sends).
  bool record_critical_path = false;
};

// Reuses its state buffers across runs (sweeps); the event loop itself never allocates unless a
// timeline is recorded. The program must have a valid shape (validate_program); ordering problems
// between devices are reported as deadlocks.
class Engine {
 public:
  SimulationOutcome run(const Program& program, const CostModel& costs, const EngineOptions& options = {});
  // A registry schedule generated as it runs, never stored: memory independent of m for the
  // in-order sweep. Options that need the event queue materialise the program first.
  SimulationOutcome run(const ScheduleStreams& streams, const CostModel& costs, const EngineOptions& options = {});
  // The path nodes the last run with record_critical_path allocated at most (live at once): what its
  // memory for the path grew to.
  std::size_t critical_path_nodes() const { return path_nodes_.size(); }

 private:
  // Where one of a stage's outputs goes: the device of the stage that consumes it (-1: none, at the
  // ends of the pipeline) and the link that carries it (-1: none, on the same device).
  struct StageOutput {
    std::int32_t consumer = -1;
    std::int32_t link = -1;
    std::int64_t bytes = 0;
    double send_time = 0;
  };
  // What the event loop needs about one stage, read from the cost model once per run.
  // The in-order sweep's state of one (stage, micro-batch) in flight (see below).
  struct Slot {
    double input = 0;
    std::int32_t microbatch = -1;  // -1: free
    std::uint8_t flags = 0;
  };
  static constexpr std::uint8_t kNoMessage = 0;
  static constexpr std::uint8_t kInstantMessage = 1;
  static constexpr std::uint8_t kTimedMessage = 2;
  // 128 bytes, so that finding a stage's is a shift: the trusted sweep does it once an op.
  struct StageInfo {
    std::array<double, kNumOps> time{};
    std::int64_t activation_bytes = 0;
    std::int64_t weight_bytes = 0;  // kept by I for W
    StageOutput forward;            // its activation, to stage + 1 (none from a pipeline's last)
    StageOutput backward;           // its gradient, to stage - 1 (none from a pipeline's first)
    // The in-order sweep's ring of this stage's slots (ring_storage_, cached) and its size - 1.
    Slot* slots = nullptr;
    std::size_t mask = 0;
    int device = 0;
    bool first = false;  // the first stage of its pipeline, whose forward reads the batch
    bool last = false;   // the last stage of its pipeline, whose backward needs no gradient
    // Per op, the trusted loop's one test (trusted_code): its kind, whether it waits for a message
    // (F but on stage 0, B and I but on the last stage) and how it sends one (F but on the last
    // stage, B and I but on stage 0: kNoMessage, kInstantMessage or kTimedMessage). A message that
    // takes no time (no latency, no bytes or no bandwidth limit on its link) arrives as it is sent:
    // its link, used by one device in the order its ops end, is then always free.
    std::array<std::uint8_t, kNumOps> code{};
  };
  static_assert(sizeof(StageInfo) == 128);
  // The trusted loop's dispatch: an op's kind, whether it waits for a message and how it sends one.
  static constexpr std::uint8_t trusted_code(Op op, bool receives, std::uint8_t sends) {
    return static_cast<std::uint8_t>(static_cast<int>(op) + kNumOps * (static_cast<int>(receives) + 2 * sends));
  }

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
    // A lowered program (Program::comms): the next gate to pass, and the earliest its next op may
    // start (the latest arrival waited at, or the end of a REDUCE_GRAD the stream waits for).
    std::size_t next_gate = 0;
    double gate_time = 0;
    std::size_t next_send = 0;  // the next deferred SEND
    double collective_free = 0;  // FSDP's collectives: when the device's collective stream is free
    double first_reached = __builtin_inf();  // FSDP: when it reached an action before its first op
  };
  // A lowered program's action that the device passes in order: a RECV waited at (it does not pass
  // before the message has arrived), or an FSDP action of a sharded stage (no arrival).
  struct Gate {
    std::size_t before = 0;          // the compute position it precedes
    const double* arrival = nullptr;  // a RECV's message arrival (forward_input_ or backward_input_)
    CommAction action;
  };
  // A lowered program's SEND that is not right after the op making its message: the message leaves
  // when the device reaches it, at the end of the op before position `before`.
  struct DeferredSend {
    std::size_t before = 0;
    Action producer;
  };

  // What both algorithms need: stages, links, figures and memory trackers.
  void prepare_common(int p, int m, const std::vector<int>& stage_device, int pipelines, const CostModel& costs,
                      const EngineOptions& options);
  void prepare(const Program& program, const CostModel& costs, const EngineOptions& options);
  bool uses_sweep(const EngineOptions& options) const;
  void prepare_links(const std::vector<int>& stage_device, const CostModel& costs, std::vector<double>& bandwidth);
  SimulationOutcome run_sweep(const Program& program, const CostModel& costs, const EngineOptions& options);
  void prepare_device(int device, const CostModel& costs);
  // The cheap test inline, the rest out of line: most calls find the device busy or done.
  void try_start(int device) {
    const DeviceState& state = devices_[static_cast<std::size_t>(device)];
    if (!state.running && state.pc < state.size) start_if_ready(device);
  }
  void start_if_ready(int device);
  // A lowered program: sets up the gates and deferred sends of its devices.
  void prepare_comms(const Program& program, const CostModel& costs);
  // Passes the gates before the device's pc: false at a RECV whose message has not arrived.
  bool pass_gates(int device);
  // UNSHARD, RESHARD or REDUCE_GRAD of a sharded stage, reached by the device (torch's runtime,
  // _PipelineScheduleRuntime._step_microbatches; FSDP2's fully_shard):
  // - UNSHARD launches the all-gather (`unshard(async_op=True)`) on the device's collective stream;
  //   the stage's next op waits for it (`_assert_unsharded`); the unsharded parameters are held.
  // - RESHARD frees them (`reshard()`), at no cost in time.
  // - REDUCE_GRAD reduce-scatters the accumulated gradients (stage.perform_reduce_grad: FSDP's
  //   post_backward), and the compute stream waits for it (_root_post_backward_final_callback, whose
  //   finalize_backward makes the current stream wait for the reduce-scatter); the gradients go then.
  // One NCCL stream per process group runs its collectives in issue order: one collective stream.
  void run_sharding_action(int device, const CommAction& action);
  // The earliest a compute op (and its overlapped partner) may start: its stages' all-gathers done.
  double parameters_ready(const Action& action, const Action* partner) const;
  // Per-block FSDP: what gathering (and, for a stage alone, reduce-scattering) unit by unit adds to
  // the op, and whether the stage stays gathered after it.
  double unit_by_unit_extra(const Action& action);
  // The first gradient op (B or W) of a sharded stage allocates its unsharded gradients.
  void hold_gradients(int device, const Action& action, const Action* partner);
  // Passes the gates after the device's last op: its end is when the trailing REDUCE_GRADs end.
  void pass_trailing_gates(int device);
  // Hands `from`'s output to its link at `time` (the record says it was ready at `enqueued`): when the
  // message has left the link and when it arrives. Every send goes through here.
  struct Transmission {
    double left = 0;
    double arrival = 0;
  };
  [[gnu::always_inline]] inline Transmission transmit(const StageOutput& output, const Action& from, double time,
                                                      double enqueued);
  // `from`'s message on its link, handed over at `time`, its time on the link and its latency drawn
  // with the sample's noise: when it starts and ends leaving, and when it arrives. Both algorithms
  // send every message through here.
  struct Sent {
    Link::Departure departure;
    double arrival = 0;
  };
  [[gnu::always_inline]] inline Sent send_message(Link& target, const StageOutput& output, const Action& from,
                                                  double time) {
    double send_time = output.send_time;
    double latency = target.latency;
    if (options_.noise != nullptr && link_draw_.any()) [[unlikely]] {
      const double factor = noise_factor_of_message(from);
      send_time *= factor;
      latency *= factor;
    }
    const Link::Departure departure = target.send(time, output.bytes, send_time);
    return {departure, departure.end + latency};
  }
  // Sends the deferred messages whose SEND the device has reached at `time`.
  void send_deferred(int device, double time, double& released);
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
  // Noise: an op's time (at `position` of `device`, of kind `op`) or a message's, drawn.
  [[gnu::noinline]] double noisy_op_time(int device, std::size_t position, Op op, double cost);
  // The in-order sweep's draw: the same factor, with busy time summed from the drawn costs as they run.
  [[gnu::noinline]] double drawn_cost(int device, std::size_t position, Op op, double cost) const;
  [[gnu::noinline]] double noise_factor_of_message(const Action& from) const;
  void launch_waiting(std::vector<double>& posted, std::vector<std::int32_t>& waiting, std::size_t k, double time,
                      bool forward);
  // Timeline recording stays out of line so the event loop's functions stay small without it.
  [[gnu::noinline]] void record_span(int device, const Action& action, const Action* partner, double start, double end);
  [[gnu::noinline]] void record_memory(int device, double time);
  void record_exchanges(const Span& span, const Action* partner);
  [[gnu::noinline]] void record_message(const Link& link, const Action& from, double enqueued, double start, double end,
                                        double arrival, std::int64_t bytes);
  // Called once per op from the event loop; inlined there.
  [[gnu::always_inline]] inline void finish_op(double time, int device);
  Result summarize();
  // record_critical_path: one op (or overlapped pair) that ran from `start` to `end` on `device`,
  // after its outputs were handed on. Each op's node points at what its start waited for: the op
  // before it on its device, or the producer of an input that arrived later (ties stay on the
  // device). A node lives while an op may still point at it; the last-ending op's chain is the path.
  [[gnu::noinline]] void note_critical(int device, const Action& first, const Action* second, double start, double end);
  void release_node(std::int32_t node);
  struct PathInput;
  // The entry of the input an op waits for (null: none from another op), and of the output it hands
  // on with the stage that consumes it (null: none).
  PathInput* path_input_of(const Action& action);
  PathInput* path_output_of(const Action& action, const StageInfo*& consumer);
  std::vector<double> critical_times() const;
  Deadlock describe_deadlock() const;
  // What a device stopped at `step` on `next` waits for, when it is not held in a paired send.
  StuckDevice describe_wait(int device, std::size_t step, const Action& next, bool forward_done) const;

  // The in-order sweep (engine_sweep.cpp). Its state per (stage, micro-batch) lives in a ring per
  // stage that holds only the micro-batches in flight there: the input that has arrived (the
  // activation for F, then the gradient for B or I: the second can only arrive after F has run)
  // and the flags of the ops done.
  // Per device: its window of actions, position and stream, and what the summary needs, noted as
  // the ops run instead of in a pass over the list beforehand.
  static constexpr std::size_t kMaxMarks = 11;
  struct SweepDevice {
    const Action* cur = nullptr;
    const Action* end = nullptr;
    const Action* next_mark = nullptr;  // marks[mark_index] in the window, else the window's end
    std::size_t position = 0;  // of *cur in the device's list
    double free_at = 0;
    double busy = 0;
    double start = 0;     // of position 0
    double last_end = 0;  // of the latest position
    bool finished = false;
    bool backward_scanned = false;  // the first B or I has been marked
    // Phases: the first backward (B or I) and the position after the last forward.
    std::size_t first_backward = kNoMark;
    double first_backward_start = 0;
    double end_before_first_backward = 0;
    double busy_before_first_backward = 0;
    std::size_t cooldown_first = 0;  // last forward + 1; 0 while there is none
    double cooldown_first_start = 0;
    double last_forward_end = 0;
    double busy_through_last_forward = 0;
    // A stream's window: its first action and that action's position. The trusted loop derives
    // positions from it and notes in full only the positions the phases need (marks: 0, the first
    // backward, each window's last forward and the op after it); the others only add to busy.
    const Action* window_begin = nullptr;
    std::size_t window_base = 0;
    std::size_t mark_count = 0;
    std::size_t mark_index = 0;
    // Sorted positions, within or after the window: at most 5 (the one carried over from the last
    // window, position 0, the first backward, the window's last forward and the op after it).
    std::array<std::size_t, kMaxMarks> marks{};
  };
  // 256 bytes, so that finding a device's is a shift: the trusted loop does it at every visit.
  static_assert(sizeof(SweepDevice) == 256);
  // The marks of a window whose actions from `fresh` on are new (at position `fresh_position`).
  static void mark_window(SweepDevice& state, const Action* fresh, std::size_t fresh_position);
  static void point_next_mark(SweepDevice& state);
  // The position of a trusted stream's state.cur in its device's list.
  static std::size_t trusted_position(const SweepDevice& state) {
    return state.window_base + static_cast<std::size_t>(state.cur - state.window_begin);
  }
  // The trusted loop: a registry schedule's streams, no per-stage times.
  // kPairs: the streams may hold overlapped pairs (ScheduleStreams::overlapped_pairs).
  template <bool kOverlap, bool kPairs, typename Feed>
  [[gnu::always_inline]] inline void advance_trusted(Feed& feed, int device);
  template <bool kOverlap, bool kPairs, typename Feed>
  void run_trusted(Feed& feed);
  // A device's running times in the trusted loop, and the last op's start and cost.
  struct TrustedClock {
    double free_at = 0;
    double busy = 0;
    double last_end = 0;  // blocking mode (in overlap mode the previous op's end is free_at)
    double start = 0;
    double cost = 0;
  };
  // One op of the trusted loop, compiled for its case: false when its input has not been sent.
  template <bool kOverlap, Op kOp, bool kReceives, std::uint8_t kSends>
  [[gnu::always_inline]] inline bool trusted_step(const Action& action, StageInfo& stage, MemoryTracker& memory,
                                                  TrustedClock& clock);
  template <bool kOverlap>
  [[gnu::always_inline]] inline bool trusted_dispatch(const Action& action, StageInfo& stage, MemoryTracker& memory,
                                                      TrustedClock& clock);
  template <typename Feed>
  SimulationOutcome sweep(Feed& feed);
  template <typename Feed>
  void advance(Feed& feed, int device);
  // An overlapped pair at the device's window, out of the loop: false when it must wait.
  template <typename Feed>
  [[gnu::noinline]] bool run_pair(Feed& feed, int device);
  [[gnu::always_inline]] inline void note_position(SweepDevice& device, const Action& action, double start,
                                                   double end, double cost);
  // The op's input arrival (+inf while unknown) and its own slot (nullptr for stage 0's F, which
  // has none until it runs). `kTrusted`: the program is valid by construction (a registry schedule's
  // streams), so an op's own earlier ops need no flags: a device runs its list in order, and a valid
  // list has F before B or I, and I before W. Slots then live only while a message is in flight.
  template <bool kTrusted>
  [[gnu::always_inline]] inline double input_ready(const Action& action, const StageInfo& stage, Slot*& own);
  // Applies a finished op: flags, memory, its message, the consumer woken; raises `released` to
  // when the message has left the link.
  template <bool kTrusted>
  [[gnu::always_inline]] inline void complete_op(int device, const Action& action, const StageInfo& stage,
                                                 Slot* own, double end, double& released);
  void finish_device(int device);
  // kPaired on the sweep (Engine::post_receives and launch_waiting, the same rules): after an op
  // ends at `time`, posts the receives of the device's next op; true when the device is held in a
  // send whose receiver has not posted (it is then marked blocked, and the post wakes it).
  bool post_and_hold(int device, double time);
  void post_receives_sweep(int device, double time);
  void launch_sweep(std::vector<double>& posted, std::vector<std::int32_t>& waiting, std::size_t k, double time,
                    bool forward);
  // Each link's messages and bytes of a finished trusted run, which the trusted loop leaves uncounted.
  void count_trusted_messages();
  static Slot* find_slot(const StageInfo& stage, int microbatch) {
    Slot& slot = stage.slots[static_cast<std::size_t>(microbatch) & stage.mask];
    return slot.microbatch == microbatch ? &slot : nullptr;
  }
  Slot& obtain_slot(int stage_index, int microbatch) {
    StageInfo& stage = stages_[index_of(stage_index)];
    Slot& slot = stage.slots[static_cast<std::size_t>(microbatch) & stage.mask];
    if (slot.microbatch == microbatch) [[likely]] return slot;
    if (slot.microbatch < 0) {
      slot = Slot{kUnknownTime, microbatch, 0};
      return slot;
    }
    return grow_and_obtain(stage_index, microbatch);
  }
  [[gnu::noinline]] Slot& grow_and_obtain(int stage, int microbatch);
  void wake(int device) {
    WakeFlag& blocked = blocked_[index_of(device)];
    if (blocked == WakeFlag::kQueued) return;  // queued, running or finished
    blocked = WakeFlag::kQueued;
    push_woken(device);
  }
  // The queue of devices to visit: free-running indices, taken modulo its power-of-two size.
  void push_woken(int device) { woken_[woken_tail_++ & woken_mask_] = device; }
  int pop_woken() { return woken_[woken_head_++ & woken_mask_]; }
  static std::size_t index_of(int i) { return static_cast<std::size_t>(i); }
  static constexpr double kUnknownTime = __builtin_inf();

  std::size_t slot(const Action& action) const {
    return static_cast<std::size_t>(action.stage) * static_cast<std::size_t>(m_) +
           static_cast<std::size_t>(action.microbatch);
  }

  // Per (stage, micro-batch) flags of ops already finished on their own device.
  static constexpr std::size_t kNoMark = static_cast<std::size_t>(-1);
  static constexpr std::uint8_t kForwardDone = 1;
  static constexpr std::uint8_t kInputGradDone = 2;
  // A lowered program's SEND stands later than right after the op: the op does not send it.
  static constexpr std::uint8_t kForwardSendDeferred = 4;
  static constexpr std::uint8_t kBackwardSendDeferred = 8;

  const Program* program_ = nullptr;
  bool layerwise_pairs_ = false;  // Program::layerwise_pairs of the run
  int units_per_microbatch_ = 1;  // Program::units_per_microbatch: peak_stashed counts whole micro-batches
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
  std::vector<std::vector<Gate>> gates_;                   // per device; empty unless lowered
  std::vector<std::vector<DeferredSend>> deferred_sends_;  // per device; empty unless lowered
  // FSDP, per stage; all empty unless a lowered program's FSDP actions act on a sharded stage.
  std::vector<ShardingCosts> sharding_;
  std::vector<double> unsharded_at_;  // when the stage's latest all-gather ends
  std::vector<std::uint8_t> gradients_held_;
  std::vector<std::uint8_t> gathered_;    // per-block FSDP: every unit of the stage is gathered
  std::vector<std::uint8_t> prefetched_;  // per-block FSDP: UNSHARD has gathered the first unit
  EventQueue events_;
  Timeline timeline_;
  bool record_exchanges_ = false;  // a timeline of a cost model with expert all-to-alls
  std::vector<Exchange> exchange_buffer_;
  std::vector<std::vector<Slot>> ring_storage_;  // per stage
  std::vector<SweepDevice> sweep_devices_;
  // Per device: whether it waits for a message (the sweep's wake test). One byte, but not a character
  // type: a store to a char may alias any member, which the loop would then have to read again.
  enum class WakeFlag : std::uint8_t { kQueued, kBlocked };
  std::vector<WakeFlag> blocked_;
  std::vector<int> sweep_held_;  // kPaired on the sweep: per device, its sends waiting for their receivers
  std::vector<int> woken_;  // FIFO ring of devices to visit, each at most once; a power of two long
  std::size_t woken_mask_ = 0;
  std::size_t woken_head_ = 0;
  std::size_t woken_tail_ = 0;
  std::vector<std::uint8_t> first_forward_seen_;  // per stage, with record_stage_times
  std::vector<StreamReader> readers_;             // per device, for runs of ScheduleStreams
  // Noise: each op kind's draw and the messages', prepared once a run (prepare_common).
  std::array<NoiseDraw, kNumOps> op_draws_{};
  NoiseDraw link_draw_;
  // record_critical_path: the nodes of paths still alive (a pool with a free list), per device its
  // latest op's node, per (stage, micro-batch) the producer node and arrival of its next input
  // (forward and backward), and the op that ends last so far.
  struct PathNode {
    double end = 0;
    double duration = 0;
    std::int32_t previous = -1;  // what its start waited for; -1 at the step's first op
    std::int32_t device = 0;
    std::int32_t refs = 0;
  };
  struct PathInput {
    std::int32_t node = -1;
    double at = 0;
  };
  std::vector<PathNode> path_nodes_;
  std::int32_t free_path_node_ = -1;  // the free list's head, linked through PathNode::previous
  std::vector<std::int32_t> device_path_;
  std::vector<PathInput> forward_path_input_;
  std::vector<PathInput> backward_path_input_;
  std::int32_t last_path_node_ = -1;
  double last_path_start_ = 0;
  Program stored_;  // streams materialised for the event queue
};

}  // namespace ppsim
