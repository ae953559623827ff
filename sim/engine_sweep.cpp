// The in-order sweep: the engine's semantics without an event queue (see engine.hpp).
//
// Why it gives the event queue's figures exactly: an op starts at max(its device free, its inputs
// arrived), with the same operands whichever algorithm computes it. A device runs its list in order,
// so its memory changes and its busy time come in the same order too; and only the device of a
// stage sends on that stage's links, in the order its ops end, so each link serves the same messages
// in the same order. The sweep therefore runs a device as far as its inputs allow, notes its outputs
// in the consumers' slots and wakes consumers that were waiting; it stops when no device can move.
// What is left unfinished then is exactly what the event queue leaves: the same deadlock.
#include <algorithm>
#include <stdexcept>

#include "sim/engine.hpp"

namespace ppsim {
namespace {

constexpr std::uint8_t kSweepForwardDone = 1;
constexpr std::uint8_t kSweepInputGradDone = 2;

std::size_t ring_capacity(int m) {
  // Enough for the micro-batches in flight on a stage in most schedules; rings grow when not.
  std::size_t capacity = 1;
  while (capacity < 32 && capacity < static_cast<std::size_t>(m)) capacity *= 2;
  return capacity;
}

// A stored Program: each device's whole list is its window from the start.
struct ProgramFeed {
  const Program& program;
  void open(int device, const Action*& cur, const Action*& end) const {
    const auto& list = program.actions[static_cast<std::size_t>(device)];
    cur = list.data();
    end = list.data() + list.size();
  }
  static bool refill(int, const Action*&, const Action*&) { return false; }
};

// Generated lists: a window of each device's stream, refilled as the device reaches its end.
struct StreamFeed {
  const ScheduleStreams& streams;
  std::vector<StreamReader>& readers;
  void open(int device, const Action*& cur, const Action*& end) const {
    StreamReader& reader = readers[static_cast<std::size_t>(device)];
    reader.open(streams.device(streams.params, device));
    cur = end = nullptr;
    reader.refill(cur, end);
  }
  bool refill(int device, const Action*& cur, const Action*& end) const {
    return readers[static_cast<std::size_t>(device)].refill(cur, end);
  }
};

}  // namespace

Engine::Slot& Engine::grow_and_obtain(int stage, int microbatch) {
  SlotRing& ring = rings_[index_of(stage)];
  // Two micro-batches in flight at once that share a position modulo the new size shared it
  // modulo the old one too, so rehashing into twice the size never collides.
  std::vector<Slot> old = std::move(ring.slots);
  ring.slots.assign(2 * old.size(), Slot{});
  ring.mask = ring.slots.size() - 1;
  for (const Slot& slot : old) {
    if (slot.microbatch >= 0) ring.slots[static_cast<std::size_t>(slot.microbatch) & ring.mask] = slot;
  }
  return obtain_slot(stage, microbatch);
}

double Engine::sweep_ready(const Action& action) const {
  const int last_stage = static_cast<int>(stages_.size()) - 1;
  switch (action.op) {
    case Op::kForward: {
      if (action.stage == 0) return 0.0;  // stage 0 reads the batch
      const Slot* slot = find_slot(action.stage, action.microbatch);
      return slot != nullptr ? slot->input : kUnknownTime;
    }
    case Op::kBackward:
    case Op::kBackwardInput: {
      const Slot* slot = find_slot(action.stage, action.microbatch);
      if (slot == nullptr || !(slot->flags & kSweepForwardDone)) return kUnknownTime;
      return action.stage == last_stage ? 0.0 : slot->input;  // the last stage owns the loss
    }
    case Op::kBackwardWeight: {
      const Slot* slot = find_slot(action.stage, action.microbatch);
      return slot != nullptr && (slot->flags & kSweepInputGradDone) ? 0.0 : kUnknownTime;
    }
  }
  return kUnknownTime;
}

void Engine::wake(int device) {
  SweepDevice& state = sweep_devices_[index_of(device)];
  if (!state.blocked) return;  // queued, running or finished
  state.blocked = false;
  woken_[(woken_head_ + woken_count_++) % woken_.size()] = device;
}

// One position of the device's list, with its op's time span: what the summary needs of it. `cost`
// is added to the busy time (an overlapped pair's whole time on its first half, nothing on its second).
inline void Engine::note_position(SweepDevice& state, const Action& action, double start, double end, double cost) {
  const std::size_t position = state.position;
  if (position == 0) state.start = start;
  if (position == state.cooldown_first) state.cooldown_first_start = start;
  if (is_backward_input(action.op) && state.first_backward == kNoMark) [[unlikely]] {
    state.first_backward = position;
    state.first_backward_start = start;
    state.end_before_first_backward = state.last_end;
    state.busy_before_first_backward = state.busy;
  }
  state.busy += cost;
  if (action.op == Op::kForward) {
    state.cooldown_first = position + 1;
    state.last_forward_end = end;
    state.busy_through_last_forward = state.busy;
  }
  state.last_end = end;
  if (options_.record_stage_times) [[unlikely]] {
    const std::size_t stage = index_of(action.stage);
    if (action.op == Op::kForward) {
      if (!first_forward_seen_[stage]) {
        first_forward_seen_[stage] = 1;
        stage_figures_[stage].first_forward = start;
      }
    } else if (action.op != Op::kBackwardInput) {
      stage_figures_[stage].gradient_start = start;
      stage_figures_[stage].gradient_end = end;
    }
  }
  ++state.position;
}

template <typename Feed>
void Engine::advance(Feed& feed, int device) {
  SweepDevice& state = sweep_devices_[index_of(device)];
  const int num_stages = static_cast<int>(stages_.size());
  const bool overlap = options_.comm == CommMode::kOverlap;
  while (true) {
    if (state.cur == state.end && !feed.refill(device, state.cur, state.end)) {
      state.finished = true;
      return finish_device(device);
    }
    const Action* action = state.cur;
    double ready = sweep_ready(*action);
    if (ready == kUnknownTime) {
      state.blocked = true;  // the op that delivers its input wakes it
      return;
    }
    const StageInfo& stage = stages_[index_of(action->stage)];
    double cost = stage.time[static_cast<std::size_t>(action->op)];
    const Action* partner = nullptr;
    if (action->fused_with_next) [[unlikely]] {
      // An overlapped pair starts when both halves could, and runs as one op.
      if (action + 1 == state.end) {
        feed.refill(device, state.cur, state.end);
        action = state.cur;
      }
      if (action + 1 < state.end) {
        partner = action + 1;
        const double partner_ready = sweep_ready(*partner);
        if (partner_ready == kUnknownTime) {
          state.blocked = true;
          return;
        }
        ready = std::max(ready, partner_ready);
        cost = costs_->overlap_time(action->stage, partner->op, partner->stage);
      }
    }
    const double start = std::max(state.free_at, ready);
    const double end = start + cost;
    if (action->op == Op::kForward) memory_[index_of(device)].on_forward(stage.activation_bytes);
    note_position(state, *action, start, end, cost);
    if (partner != nullptr) note_position(state, *partner, start, end, 0.0);

    // Outputs: memory freed, flags set, messages sent, consumers woken. `released` is when the
    // stream is free again in blocking mode (its messages have left the links).
    double released = end;
    for (const Action* done = action; done != nullptr; done = done == action ? partner : nullptr) {
      const StageInfo& info = stages_[index_of(done->stage)];
      MemoryTracker& memory = memory_[index_of(device)];
      int link = -1;
      double send_time = 0;
      std::int64_t bytes = 0;
      int to_stage = -1;
      int consumer = -1;
      switch (done->op) {
        case Op::kForward:
          {
            // Its input is used: the slot waits for the gradient next.
            Slot& own = obtain_slot(done->stage, done->microbatch);
            own.flags |= kSweepForwardDone;
            own.input = kUnknownTime;
          }
          if (done->stage + 1 < num_stages) {
            to_stage = done->stage + 1;
            consumer = info.next_device;
            link = info.forward_link;
            bytes = info.forward_bytes;
            send_time = info.forward_send_time;
          }
          break;
        case Op::kBackward:
        case Op::kBackwardInput:
          if (done->op == Op::kBackward) {
            memory.on_backward(info.activation_bytes);
            find_slot(done->stage, done->microbatch)->microbatch = -1;  // nothing reads it again
          } else {
            memory.on_input_grad(info.activation_bytes, info.weight_bytes);
            find_slot(done->stage, done->microbatch)->flags |= kSweepInputGradDone;
          }
          if (done->stage > 0) {
            to_stage = done->stage - 1;
            consumer = info.previous_device;
            link = info.backward_link;
            bytes = info.backward_bytes;
            send_time = info.backward_send_time;
          }
          break;
        case Op::kBackwardWeight:
          memory.on_weight_grad(info.weight_bytes);
          find_slot(done->stage, done->microbatch)->microbatch = -1;
          break;
      }
      if (to_stage < 0) continue;
      double arrival = end;
      if (link >= 0) {
        Link& target = links_[index_of(link)];
        const Link::Departure departure = target.send(end, bytes, send_time);
        arrival = departure.end + target.latency;
        released = std::max(released, departure.end);
      }
      obtain_slot(to_stage, done->microbatch).input = arrival;
      if (consumer != device) wake(consumer);
    }
    state.free_at = overlap ? end : released;
    state.cur = (partner != nullptr ? partner : action) + 1;
  }
}

void Engine::finish_device(int device) {
  const SweepDevice& state = sweep_devices_[index_of(device)];
  DeviceFigures& figures = figures_[index_of(device)];
  const std::size_t size = state.position;
  figures.ops = static_cast<std::int64_t>(size);
  figures.busy = state.busy;
  if (size == 0) return;
  figures.start = state.start;
  figures.end = state.last_end;
  // Warmup: positions before the first backward; cooldown: after the last forward (or from the
  // first backward, when no forward follows it); steady: in between.
  const bool has_backward = state.first_backward != kNoMark;
  const std::size_t first_backward = has_backward ? state.first_backward : size;
  const double busy_before_first_backward = has_backward ? state.busy_before_first_backward : state.busy;
  const double end_before_first_backward = has_backward ? state.end_before_first_backward : state.last_end;
  const bool cooldown_after_forward = state.cooldown_first >= first_backward;
  const std::size_t cooldown_start = cooldown_after_forward ? state.cooldown_first : first_backward;
  const double busy_before_cooldown =
      cooldown_after_forward ? state.busy_through_last_forward : busy_before_first_backward;
  const double cooldown_start_time = cooldown_after_forward ? state.cooldown_first_start : state.first_backward_start;

  PhaseFigures& warmup = figures.phases[0];
  warmup.ops = static_cast<std::int64_t>(first_backward);
  warmup.busy = busy_before_first_backward;
  if (first_backward > 0) {
    warmup.start = state.start;
    warmup.end = end_before_first_backward;
  }
  PhaseFigures& steady = figures.phases[1];
  steady.ops = static_cast<std::int64_t>(cooldown_start - first_backward);
  steady.busy = busy_before_cooldown - busy_before_first_backward;
  if (cooldown_start > first_backward) {
    steady.start = state.first_backward_start;
    steady.end = state.last_forward_end;
  }
  PhaseFigures& cooldown = figures.phases[2];
  cooldown.ops = static_cast<std::int64_t>(size - cooldown_start);
  cooldown.busy = state.busy - busy_before_cooldown;
  if (size > cooldown_start) {
    cooldown.start = cooldown_start_time;
    cooldown.end = state.last_end;
  }
}

template <typename Feed>
SimulationOutcome Engine::sweep(Feed& feed) {
  const int p = static_cast<int>(figures_.size());
  rings_.resize(stages_.size());
  const std::size_t capacity = ring_capacity(m_);
  for (SlotRing& ring : rings_) {
    ring.slots.assign(capacity, Slot{});
    ring.mask = capacity - 1;
  }
  first_forward_seen_.assign(options_.record_stage_times ? stages_.size() : 0, 0);
  sweep_devices_.assign(index_of(p), SweepDevice{});
  woken_.assign(index_of(p), 0);
  woken_head_ = 0;
  woken_count_ = p;
  for (int d = 0; d < p; ++d) {
    woken_[index_of(d)] = d;
    SweepDevice& state = sweep_devices_[index_of(d)];
    feed.open(d, state.cur, state.end);
  }
  while (woken_count_ > 0) {
    const int device = woken_[woken_head_];
    woken_head_ = (woken_head_ + 1) % woken_.size();
    --woken_count_;
    advance(feed, device);
  }
  SimulationOutcome outcome;
  Deadlock deadlock;
  for (int d = 0; d < p; ++d) {
    const SweepDevice& state = sweep_devices_[index_of(d)];
    if (state.finished) continue;
    const Action* next = state.cur;
    std::size_t step = state.position;
    // Of an overlapped pair, name the half that is still waiting.
    if (next->fused_with_next && next + 1 < state.end && sweep_ready(*next) != kUnknownTime) {
      ++next;
      ++step;
    }
    const Slot* slot = find_slot(next->stage, next->microbatch);
    deadlock.devices.push_back(
        describe_wait(d, step, *next, slot != nullptr && (slot->flags & kSweepForwardDone) != 0));
  }
  if (!deadlock.devices.empty()) {
    outcome.deadlock = std::move(deadlock);
    return outcome;
  }
  outcome.result = summarize();
  return outcome;
}

SimulationOutcome Engine::run_sweep(const Program& program, const CostModel& costs, const EngineOptions& options) {
  program_ = &program;
  prepare_common(program.num_devices, program.num_microbatches, program.stage_device, costs, options);
  ProgramFeed feed{program};
  return sweep(feed);
}

SimulationOutcome Engine::run(const ScheduleStreams& streams, const CostModel& costs, const EngineOptions& options) {
  if (streams.params.p < 1 || streams.params.m < 1 || streams.stage_device.empty() || streams.device == nullptr) {
    throw std::invalid_argument("Engine::run: the schedule's streams are empty");
  }
  if (!uses_sweep(options)) {
    // The event queue needs the whole program; keep it alive for the result's run.
    stored_ = collect_program(streams);
    return run(stored_, costs, options);
  }
  program_ = nullptr;
  prepare_common(streams.params.p, streams.params.m, streams.stage_device, costs, options);
  readers_.resize(index_of(streams.params.p));
  StreamFeed feed{streams, readers_};
  SimulationOutcome outcome = sweep(feed);
  readers_.clear();  // each reader's coroutine frame
  return outcome;
}

}  // namespace ppsim
