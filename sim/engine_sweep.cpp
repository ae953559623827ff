// SPDX-License-Identifier: Apache-2.0
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

// Ops a device runs per visit at most before the others get their turn.
constexpr int kVisitOps = 512;

std::size_t ring_capacity(int m) {
  // Enough for the micro-batches in flight on a stage in most schedules; rings grow when not.
  std::size_t capacity = 1;
  while (capacity < 32 && capacity < static_cast<std::size_t>(m)) capacity *= 2;
  return capacity;
}

// A stored Program: each device's whole list is its window from the start.
struct ProgramFeed {
  static constexpr bool kTrusted = false;  // tests hand the engine unvalidated programs
  const Program& program;
  void open(int device, const Action*& cur, const Action*& end) const {
    const auto& list = program.actions[static_cast<std::size_t>(device)];
    cur = list.data();
    end = list.data() + list.size();
  }
  static bool refill(int, const Action*&, const Action*&) { return false; }
};

}  // namespace

// Generated lists: a window of each device's stream, refilled as the device reaches its end, and
// marked for the trusted loop.
template <typename SweepDevice>
struct StreamFeedOf {
  static constexpr bool kTrusted = true;  // registry schedules, valid by construction
  const ScheduleStreams& streams;
  std::vector<StreamReader>& readers;
  std::vector<SweepDevice>& states;
  void (*mark)(SweepDevice&, const Action*, std::size_t);
  void open(int device, const Action*& cur, const Action*& end) const {
    StreamReader& reader = readers[static_cast<std::size_t>(device)];
    // A device runs at most F, I and W of each of its v stages' micro-batches.
    const std::size_t ops = 3 * static_cast<std::size_t>(streams.params.v) *
                            static_cast<std::size_t>(streams.num_microbatches() * streams.num_pipelines);
    // One window a visit (advance_trusted): at most kVisitOps actions.
    reader.open(streams.device(streams.params, device), std::min<std::size_t>(ops, kVisitOps));
    cur = end = nullptr;
    reader.refill(cur, end);
    SweepDevice& state = states[static_cast<std::size_t>(device)];
    state.window_begin = cur;
    state.window_base = 0;
    mark(state, cur, 0);
  }
  bool refill(int device, const Action*& cur, const Action*& end) const {
    SweepDevice& state = states[static_cast<std::size_t>(device)];
    const std::size_t kept = static_cast<std::size_t>(end - cur);
    const std::size_t position = state.window_base + static_cast<std::size_t>(cur - state.window_begin);
    const bool added = readers[static_cast<std::size_t>(device)].refill(cur, end);
    state.window_begin = cur;
    state.window_base = position;
    mark(state, cur + kept, position + kept);
    return added;
  }
};

namespace {

}  // namespace

void Engine::mark_window(SweepDevice& state, const Action* fresh, std::size_t fresh_position) {
  // Marks not reached yet stay (the op after the last window's last forward may open this one).
  std::size_t count = 0;
  std::array<std::size_t, kMaxMarks> marks{};
  for (std::size_t i = state.mark_index; i < state.mark_count; ++i) {
    if (state.marks[i] >= state.window_base) marks[count++] = state.marks[i];
  }
  const Action* end = state.end;
  // The first backward, searched for only until found; the window's last forward, from its end.
  if (!state.backward_scanned) {
    for (const Action* a = fresh; a != end; ++a) {
      if (is_backward_input(a->op)) {
        state.backward_scanned = true;
        marks[count++] = fresh_position + static_cast<std::size_t>(a - fresh);
        break;
      }
    }
  }
  if (fresh_position == 0 && fresh != end) marks[count++] = 0;
  for (const Action* a = end; a != fresh;) {
    if ((--a)->op == Op::kForward) {
      const std::size_t position = fresh_position + static_cast<std::size_t>(a - fresh);
      marks[count++] = position;
      marks[count++] = position + 1;
      break;
    }
  }
  std::sort(marks.begin(), marks.begin() + static_cast<std::ptrdiff_t>(count));
  count = static_cast<std::size_t>(std::unique(marks.begin(), marks.begin() + static_cast<std::ptrdiff_t>(count)) -
                                   marks.begin());
  state.marks = marks;
  state.mark_count = count;
  state.mark_index = 0;
  point_next_mark(state);
}

void Engine::point_next_mark(SweepDevice& state) {
  const std::size_t position = state.window_base + static_cast<std::size_t>(state.cur - state.window_begin);
  while (state.mark_index < state.mark_count && state.marks[state.mark_index] < position) ++state.mark_index;
  const std::size_t window = static_cast<std::size_t>(state.end - state.window_begin);
  state.next_mark = state.end;
  if (state.mark_index < state.mark_count && state.marks[state.mark_index] < state.window_base + window) {
    state.next_mark = state.window_begin + (state.marks[state.mark_index] - state.window_base);
  }
}

Engine::Slot& Engine::grow_and_obtain(int stage_index, int microbatch) {
  std::vector<Slot>& slots = ring_storage_[index_of(stage_index)];
  // Two micro-batches in flight at once that share a position modulo the new size shared it
  // modulo the old one too, so rehashing into twice the size never collides.
  std::vector<Slot> old = std::move(slots);
  slots.assign(2 * old.size(), Slot{});
  StageInfo& stage = stages_[index_of(stage_index)];
  stage.slots = slots.data();
  stage.mask = slots.size() - 1;
  for (const Slot& slot : old) {
    if (slot.microbatch >= 0) slots[static_cast<std::size_t>(slot.microbatch) & stage.mask] = slot;
  }
  return obtain_slot(stage_index, microbatch);
}

template <bool kTrusted>
inline double Engine::input_ready(const Action& action, const StageInfo& stage, Slot*& own) {
  // F's slot holds its activation's arrival (stage 0 reads the batch); after F, the slot holds
  // the gradient's arrival (0 on the last stage, which owns the loss), so B and I read the same.
  switch (action.op) {
    case Op::kForward:
      if (stage.first) {
        own = nullptr;
        return 0.0;
      }
      own = find_slot(stage, action.microbatch);
      return own != nullptr ? own->input : kUnknownTime;
    case Op::kBackward:
    case Op::kBackwardInput:
      if constexpr (kTrusted) {
        if (stage.last) {
          own = nullptr;
          return 0.0;
        }
        own = find_slot(stage, action.microbatch);
        return own != nullptr ? own->input : kUnknownTime;
      } else {
        own = find_slot(stage, action.microbatch);
        return own != nullptr && (own->flags & kSweepForwardDone) ? own->input : kUnknownTime;
      }
    case Op::kBackwardWeight:
      if constexpr (kTrusted) {
        own = nullptr;
        return 0.0;
      } else {
        own = find_slot(stage, action.microbatch);
        return own != nullptr && (own->flags & kSweepInputGradDone) ? 0.0 : kUnknownTime;
      }
  }
  return kUnknownTime;
}

template <bool kTrusted>
inline void Engine::complete_op(int device, const Action& action, const StageInfo& stage, Slot* own, double end,
                                double& released) {
  MemoryTracker& memory = memory_[index_of(device)];
  const bool forward = action.op == Op::kForward;
  switch (action.op) {
    case Op::kForward:
      if constexpr (kTrusted) {
        if (own != nullptr) own->microbatch = -1;  // its activation is used
      } else {
        if (own == nullptr) own = &obtain_slot(action.stage, action.microbatch);
        own->flags |= kSweepForwardDone;
        own->input = stage.last ? 0.0 : kUnknownTime;  // its input is used: the gradient's comes next
      }
      if (stage.last) return;
      break;
    case Op::kBackward:
    case Op::kBackwardInput:
      memory.on_backward_end(action.op, stage.activation_bytes, stage.weight_bytes);
      if constexpr (kTrusted) {
        if (own != nullptr) own->microbatch = -1;  // its gradient is used
      } else if (action.op == Op::kBackward) {
        own->microbatch = -1;  // nothing reads it again
      } else {
        own->flags |= kSweepInputGradDone;
      }
      if (stage.first) return;
      break;
    case Op::kBackwardWeight:
    default:
      memory.on_backward_end(action.op, stage.activation_bytes, stage.weight_bytes);
      if constexpr (!kTrusted) own->microbatch = -1;
      return;
  }
  const StageOutput& output = forward ? stage.forward : stage.backward;
  const int to_stage = action.stage + (forward ? 1 : -1);
  double sent_at = end;
  if (!kTrusted && output.link >= 0 && options_.comm == CommMode::kPaired) [[unlikely]] {
    const std::size_t to = index_of(to_stage) * static_cast<std::size_t>(m_) + index_of(action.microbatch);
    const double posted = (forward ? forward_posted_ : backward_posted_)[to];
    if (posted == kUnknownTime) {
      // Its receiver has not reached the op that takes it: the send waits, and holds this device.
      (forward ? forward_waiting_ : backward_waiting_)[to] = device * 4 + static_cast<std::int32_t>(action.op);
      waiting_since_[forward ? to : forward_posted_.size() + to] = end;
      ++sweep_held_[index_of(device)];
      return;
    }
    // The sweep may run the receiver ahead: a receive posted after this op ended sends it then.
    sent_at = std::max(end, posted);
  }
  double arrival = end;
  if (output.link >= 0) {
    const Sent sent = send_message(links_[index_of(output.link)], output, action, sent_at);
    arrival = sent.arrival;
    // Blocking holds the stream until the message has left; paired until it has arrived.
    released = std::max(released, options_.comm == CommMode::kPaired ? arrival : sent.departure.end);
  }
  const int consumer = output.consumer;
  obtain_slot(to_stage, action.microbatch).input = arrival;
  if (consumer != device) wake(consumer);
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
  state.position = position + 1;
}

template <typename Feed>
void Engine::advance(Feed& feed, int device) {
  SweepDevice& state = sweep_devices_[index_of(device)];
  const bool overlap = options_.comm == CommMode::kOverlap;
  const bool paired = options_.comm == CommMode::kPaired;
  int budget = kVisitOps;
  if (paired && sweep_held_[index_of(device)] > 0) {  // in a send whose receiver has not posted
    blocked_[index_of(device)] = WakeFlag::kBlocked;
    return;
  }
  while (true) {
    if (state.cur == state.end && !feed.refill(device, state.cur, state.end)) [[unlikely]] {
      state.finished = true;
      return finish_device(device);
    }
    const Action action = *state.cur;
    if (action.fused_with_next) [[unlikely]] {
      if (!run_pair(feed, device)) return;
      if (paired && post_and_hold(device, state.last_end)) return;
      continue;
    }
    const StageInfo& stage = stages_[index_of(action.stage)];
    Slot* own;
    const double ready = input_ready<Feed::kTrusted>(action, stage, own);
    if (ready == kUnknownTime) {
      blocked_[index_of(device)] = WakeFlag::kBlocked;  // the op that delivers its input wakes it
      return;
    }
    double cost = stage.time[static_cast<std::size_t>(action.op)];
    if (options_.noise != nullptr) [[unlikely]] cost = drawn_cost(device, state.position, action.op, cost);
    const double start = std::max(state.free_at, ready);
    const double end = start + cost;
    if (action.op == Op::kForward) memory_[index_of(device)].on_forward(stage.activation_bytes);
    note_position(state, action, start, end, cost);
    double released = end;  // blocking mode: when its message has left the link
    complete_op<Feed::kTrusted>(device, action, stage, own, end, released);
    if (options_.record_critical_path) [[unlikely]] note_critical(device, action, nullptr, start, end);
    state.free_at = overlap ? end : released;
    ++state.cur;
    if (paired && post_and_hold(device, end)) [[unlikely]] return;
    if (--budget == 0) [[unlikely]] {
      // Back to the end of the queue, so that no device runs far ahead of its consumers (GPipe's
      // forwards would otherwise leave m messages in flight): the window stays small.
      push_woken(device);
      return;
    }
  }
}

template <bool kOverlap, Op kOp, bool kReceives, std::uint8_t kSends>
inline bool Engine::trusted_step(const Action& action, StageInfo& stage, MemoryTracker& memory, TrustedClock& clock) {
  const auto microbatch = static_cast<std::size_t>(action.microbatch);
  double ready = 0;
  if constexpr (kReceives) {
    Slot& slot = stage.slots[microbatch & stage.mask];
    if (slot.microbatch != action.microbatch) return false;  // its message has not been sent yet
    ready = slot.input;
    slot.microbatch = -1;  // its message is used
  }
  const double cost = stage.time[static_cast<std::size_t>(kOp)];
  const double start = std::max(clock.free_at, ready);
  const double finish = start + cost;
  if constexpr (kOp == Op::kForward) memory.on_forward(stage.activation_bytes);
  if constexpr (kOp == Op::kBackward) memory.on_backward(stage.activation_bytes);
  if constexpr (kOp == Op::kBackwardInput) memory.on_input_grad(stage.activation_bytes, stage.weight_bytes);
  if constexpr (kOp == Op::kBackwardWeight) memory.on_weight_grad(stage.weight_bytes);
  clock.start = start;
  clock.cost = cost;
  clock.busy += cost;
  if constexpr (!kOverlap) clock.last_end = finish;
  double released = finish;  // blocking mode: when its message has left the link
  if constexpr (kSends != kNoMessage) {
    constexpr bool kForward = kOp == Op::kForward;
    const StageOutput& output = kForward ? stage.forward : stage.backward;
    double arrival = finish;
    if constexpr (kSends == kTimedMessage) {
      Link& link = links_[index_of(output.link)];
      // Counted afterwards (count_trusted_messages): every stage sends each micro-batch once a way.
      const Link::Departure departure = link.depart(finish, output.send_time);
      arrival = departure.end + link.latency;
      released = departure.end;
    }
    StageInfo& target = kForward ? (&stage)[1] : (&stage)[-1];
    Slot& slot = target.slots[microbatch & target.mask];
    if (slot.microbatch < 0) [[likely]] {
      slot.microbatch = action.microbatch;
      slot.input = arrival;
    } else {
      grow_and_obtain(static_cast<int>(&target - stages_.data()), action.microbatch).input = arrival;
    }
    wake(output.consumer);  // a no-op for this device itself: it is running, so not blocked
  }
  clock.free_at = kOverlap ? finish : released;
  return true;
}

template <bool kOverlap>
inline bool Engine::trusted_dispatch(const Action& action, StageInfo& stage, MemoryTracker& memory,
                                     TrustedClock& clock) {
  // One jump on the op's code (its kind, whether it waits for a message, how it sends one) to a
  // step compiled for exactly that case, instead of a test for each.
#define PPSIM_TRUSTED_CASE(op, receives, sends) \
  case trusted_code(op, receives, sends):       \
    return trusted_step<kOverlap, op, receives, sends>(action, stage, memory, clock);
#define PPSIM_TRUSTED_CASES(op, receives)                  \
  PPSIM_TRUSTED_CASE(op, receives, kNoMessage)             \
  PPSIM_TRUSTED_CASE(op, receives, kInstantMessage)        \
  PPSIM_TRUSTED_CASE(op, receives, kTimedMessage)
  switch (stage.code[static_cast<std::size_t>(action.op)]) {
    PPSIM_TRUSTED_CASES(Op::kForward, false)
    PPSIM_TRUSTED_CASES(Op::kForward, true)
    PPSIM_TRUSTED_CASES(Op::kBackward, false)
    PPSIM_TRUSTED_CASES(Op::kBackward, true)
    PPSIM_TRUSTED_CASES(Op::kBackwardInput, false)
    PPSIM_TRUSTED_CASES(Op::kBackwardInput, true)
    PPSIM_TRUSTED_CASE(Op::kBackwardWeight, false, kNoMessage)
    default:
      __builtin_unreachable();  // prepare_common writes only the codes above
  }
#undef PPSIM_TRUSTED_CASES
#undef PPSIM_TRUSTED_CASE
}

template <bool kOverlap, bool kPairs, typename Feed>
void Engine::advance_trusted(Feed& feed, int device) {
  // advance()'s semantics for a trusted stream, with the state in locals, one jump an op to a step
  // compiled for its case (trusted_dispatch) and one window of the stream a visit. The ops between
  // marks run in a loop that tests only for the next mark; a mark is noted in full.
  SweepDevice& state = sweep_devices_[index_of(device)];
  MemoryTracker& memory = memory_[index_of(device)];
  StageInfo* const stages = stages_.data();
  const Action* cur = state.cur;  // the window's end is read from state: one register fewer
  TrustedClock clock{state.free_at, state.busy, state.last_end};  // last_end: blocking mode only
  const auto save = [&] {
    state.cur = cur;
    state.free_at = clock.free_at;
    state.busy = clock.busy;
    if constexpr (!kOverlap) state.last_end = clock.last_end;  // in overlap mode it is free_at
  };
  // Before code that reads the state's last end (a refill that may finish the device, a pair).
  const auto save_all = [&] {
    save();
    if constexpr (kOverlap) state.last_end = clock.free_at;
  };
  const auto load = [&] {
    cur = state.cur;
    clock.free_at = state.free_at;
    clock.busy = state.busy;
    clock.last_end = state.last_end;
  };
  while (true) {
    const Action* const limit = state.next_mark;
    while (cur != limit) {
      const Action action = *cur;
      if (kPairs && action.fused_with_next) [[unlikely]] break;
      if (!trusted_dispatch<kOverlap>(action, stages[index_of(action.stage)], memory, clock)) {
        save();
        blocked_[index_of(device)] = WakeFlag::kBlocked;  // the op that delivers its input wakes it
        return;
      }
      ++cur;
    }
    if (cur == state.end) [[unlikely]] {
      save_all();
      if (!feed.refill(device, state.cur, state.end)) {
        state.position = trusted_position(state);
        state.finished = true;
        return finish_device(device);
      }
      // One window a visit, then back to the end of the queue, so that no device runs far ahead of
      // its consumers (GPipe's forwards would otherwise leave m messages in flight).
      push_woken(device);
      return;
    }
    const Action action = *cur;
    if (kPairs && action.fused_with_next) [[unlikely]] {
      save_all();
      state.position = trusted_position(state);
      const bool ran = run_pair(feed, device);
      load();
      point_next_mark(state);
      if (!ran) return;
      continue;
    }
    // A mark: one of the few positions the phases need, noted in full.
    const double busy_before = clock.busy;
    const double end_before = kOverlap ? clock.free_at : clock.last_end;
    if (!trusted_dispatch<kOverlap>(action, stages[index_of(action.stage)], memory, clock)) {
      save();
      blocked_[index_of(device)] = WakeFlag::kBlocked;
      return;
    }
    state.cur = cur;
    state.position = trusted_position(state);
    state.busy = busy_before;
    state.last_end = end_before;
    note_position(state, action, clock.start, clock.start + clock.cost, clock.cost);
    ++state.mark_index;
    state.cur = ++cur;
    point_next_mark(state);
  }
}

template <bool kOverlap, bool kPairs, typename Feed>
void Engine::run_trusted(Feed& feed) {
  // The queue's loop and the visit in one function: a visit runs about two ops in 1F1B, so a call
  // per visit (its registers saved and restored) would cost as much as an op.
  while (woken_head_ != woken_tail_) advance_trusted<kOverlap, kPairs>(feed, pop_woken());
}

template <typename Feed>
bool Engine::run_pair(Feed& feed, int device) {
  SweepDevice& state = sweep_devices_[index_of(device)];
  // An overlapped pair starts when both halves could, and runs as one op.
  if (state.cur + 1 == state.end) feed.refill(device, state.cur, state.end);
  const Action first = state.cur[0];
  const StageInfo& first_stage = stages_[index_of(first.stage)];
  Slot* first_slot;
  double ready = input_ready<Feed::kTrusted>(first, first_stage, first_slot);
  if (ready == kUnknownTime) {
    blocked_[index_of(device)] = WakeFlag::kBlocked;
    return false;
  }
  if (state.cur + 1 == state.end) {  // a pair at the end of a list (never valid): run it alone
    const double start = std::max(state.free_at, ready);
    double cost = first_stage.time[static_cast<std::size_t>(first.op)];
    if (options_.noise != nullptr) [[unlikely]] cost = drawn_cost(device, state.position, first.op, cost);
    const double end = start + cost;
    if (first.op == Op::kForward) memory_[index_of(device)].on_forward(first_stage.activation_bytes);
    note_position(state, first, start, end, end - start);
    double released = end;
    complete_op<Feed::kTrusted>(device, first, first_stage, first_slot, end, released);
    if (options_.record_critical_path) [[unlikely]] note_critical(device, first, nullptr, start, end);
    state.free_at = options_.comm == CommMode::kOverlap ? end : released;
    ++state.cur;
    return true;
  }
  const Action second = state.cur[1];
  const StageInfo& second_stage = stages_[index_of(second.stage)];
  Slot* second_slot;
  const double second_ready = input_ready<Feed::kTrusted>(second, second_stage, second_slot);
  if (second_ready == kUnknownTime) {
    blocked_[index_of(device)] = WakeFlag::kBlocked;
    return false;
  }
  ready = std::max(ready, second_ready);
  double cost = costs_->overlap_time(first.stage, second.op, second.stage);
  // Drawn as the event queue draws a pair: at its first half's position, by its second half's kind.
  if (options_.noise != nullptr) [[unlikely]] cost = drawn_cost(device, state.position, second.op, cost);
  const double start = std::max(state.free_at, ready);
  const double end = start + cost;
  const bool allocate_first = first.op == Op::kForward && !layerwise_pairs_;
  if (allocate_first) memory_[index_of(device)].on_forward(first_stage.activation_bytes);
  note_position(state, first, start, end, cost);
  note_position(state, second, start, end, 0.0);
  double released = end;
  complete_op<Feed::kTrusted>(device, first, first_stage, first_slot, end, released);
  // The first half's message may have grown the second half's ring (a V's turn: F(p-1) feeds stage
  // p, whose B is the partner), moving its slot.
  if (second_slot != nullptr) second_slot = find_slot(second_stage, second.microbatch);
  complete_op<Feed::kTrusted>(device, second, second_stage, second_slot, end, released);
  if (options_.record_critical_path) [[unlikely]] note_critical(device, first, &second, start, end);
  // Layer by layer, the backward has freed its stash as the forward filled its own.
  if (first.op == Op::kForward && layerwise_pairs_) memory_[index_of(device)].on_forward(first_stage.activation_bytes);
  state.free_at = options_.comm == CommMode::kOverlap ? end : released;
  state.cur += 2;
  return true;
}

bool Engine::post_and_hold(int device, double time) {
  SweepDevice& state = sweep_devices_[index_of(device)];
  // As the event queue's finish_op: the receives of the next op are posted when the op before ends,
  // whether or not this device is held in its own send.
  if (state.cur != state.end) post_receives_sweep(device, time);
  if (sweep_held_[index_of(device)] == 0) return false;
  blocked_[index_of(device)] = WakeFlag::kBlocked;  // the receiver's post wakes it
  return true;
}

void Engine::post_receives_sweep(int device, double time) {
  const SweepDevice& state = sweep_devices_[index_of(device)];
  const auto m = static_cast<std::size_t>(m_);
  const auto post = [&](const Action& action) {
    const StageInfo& stage = stages_[index_of(action.stage)];
    const std::size_t k = index_of(action.stage) * m + index_of(action.microbatch);
    if (action.op == Op::kForward) {
      if (!stage.first) launch_sweep(forward_posted_, forward_waiting_, k, time, true);
    } else if (action.op != Op::kBackwardWeight) {
      if (!stage.last) launch_sweep(backward_posted_, backward_waiting_, k, time, false);
    }
  };
  // post_receives' rule: the next op, its overlapped partner, and with interleaving the next op of
  // the other kind (Megatron's combined send_forward_backward_recv_forward_backward).
  const Action* last = state.cur;
  post(*last);
  if (last->fused_with_next && last + 1 != state.end) post(*++last);
  if (stages_.size() > sweep_devices_.size()) {
    const bool forward = state.cur->op == Op::kForward;
    const Action* other = last + 1;
    while (other != state.end && (other->op == Op::kForward) == forward) ++other;
    if (other != state.end) post(*other);
  }
}

void Engine::launch_sweep(std::vector<double>& posted, std::vector<std::int32_t>& waiting, std::size_t k, double time,
                          bool forward) {
  if (posted[k] != kUnknownTime) return;  // posted before, by a look-ahead
  posted[k] = time;
  if (waiting[k] < 0) return;
  const int sender = waiting[k] / 4;
  const auto sender_op = static_cast<Op>(waiting[k] % 4);
  waiting[k] = -1;
  // The producer of this input: F of the stage before, or the backward of the stage after.
  const auto m = static_cast<std::size_t>(m_);
  const std::size_t from = forward ? k - m : k + m;
  const StageOutput& output = forward ? stages_[from / m].forward : stages_[from / m].backward;
  const Action producer{static_cast<int>(from / m), sender_op, static_cast<int>(from % m)};
  // The sweep may run the sender ahead too: a message posted for before its op ended leaves then.
  const double ready = std::max(time, waiting_since_[forward ? k : posted.size() + k]);
  const double arrival = send_message(links_[index_of(output.link)], output, producer, ready).arrival;
  obtain_slot(static_cast<int>(k / m), static_cast<int>(k % m)).input = arrival;
  SweepDevice& held = sweep_devices_[index_of(sender)];
  held.free_at = std::max(held.free_at, arrival);
  if (--sweep_held_[index_of(sender)] == 0) wake(sender);
}

Engine::PathInput* Engine::path_input_of(const Action& action) {
  const StageInfo& stage = stages_[index_of(action.stage)];
  const std::size_t key = index_of(action.stage) * static_cast<std::size_t>(m_) + index_of(action.microbatch);
  if (action.op == Op::kForward) return stage.first ? nullptr : &forward_path_input_[key];
  if (is_backward_input(action.op)) return stage.last ? nullptr : &backward_path_input_[key];
  return nullptr;  // W waits for its own I, which ended no later than the op before it on this device
}

Engine::PathInput* Engine::path_output_of(const Action& action, const StageInfo*& consumer) {
  const StageInfo& stage = stages_[index_of(action.stage)];
  const auto m = static_cast<std::size_t>(m_);
  const std::size_t key = index_of(action.stage) * m + index_of(action.microbatch);
  if (action.op == Op::kForward && !stage.last) {
    consumer = &stage + 1;
    return &forward_path_input_[key + m];
  }
  if (is_backward_input(action.op) && !stage.first) {
    consumer = &stage - 1;
    return &backward_path_input_[key - m];
  }
  return nullptr;
}

void Engine::note_critical(int device, const Action& first, const Action* second, double start, double end) {
  // What the start waited for, as critical_time_by_device walks it: the op before on this device,
  // unless an input arrived later (ties stay on the device), the first half's before the second's.
  std::array<PathInput*, 2> inputs{path_input_of(first), second != nullptr ? path_input_of(*second) : nullptr};
  const std::int32_t before = device_path_[index_of(device)];
  std::int32_t previous = before;
  double ready = before < 0 ? -kUnknownTime : path_nodes_[static_cast<std::size_t>(before)].end;
  for (const PathInput* input : inputs) {
    if (input != nullptr && input->node >= 0 && input->at > ready) {
      ready = input->at;
      previous = input->node;
    }
  }
  std::int32_t node = free_path_node_;
  if (node >= 0) {
    free_path_node_ = path_nodes_[static_cast<std::size_t>(node)].previous;
  } else {
    node = static_cast<std::int32_t>(path_nodes_.size());
    path_nodes_.emplace_back();
  }
  // Referred to by the device (its latest op) and by the consumers of its outputs, below.
  PathNode& made = path_nodes_[static_cast<std::size_t>(node)];
  made = PathNode{end, end - start, previous, device, 1};
  if (previous >= 0) ++path_nodes_[static_cast<std::size_t>(previous)].refs;
  for (PathInput* input : inputs) {  // inputs used: their producers may go
    if (input != nullptr && input->node >= 0) {
      release_node(input->node);
      input->node = -1;
    }
  }
  device_path_[index_of(device)] = node;
  if (before >= 0) release_node(before);
  for (const Action* half : {&first, second}) {  // outputs handed on: their consumers may point here
    if (half == nullptr) continue;
    const StageInfo* consumer = nullptr;
    PathInput* output = path_output_of(*half, consumer);
    if (output == nullptr) continue;
    const Slot* slot = find_slot(*consumer, half->microbatch);
    output->node = node;
    output->at = slot != nullptr ? slot->input : end;
    ++path_nodes_[static_cast<std::size_t>(node)].refs;
  }
  // The op that ends last so far; of ops that end together, the one that started first, then the
  // lowest device (critical_time_by_device takes the first recorded, in the event queue's order).
  bool later = last_path_node_ < 0;
  if (!later) {
    const PathNode& last = path_nodes_[static_cast<std::size_t>(last_path_node_)];
    later = end > last.end ||
            (end == last.end && (start < last_path_start_ || (start == last_path_start_ && device < last.device)));
  }
  if (later) {
    ++path_nodes_[static_cast<std::size_t>(node)].refs;
    if (last_path_node_ >= 0) release_node(last_path_node_);
    last_path_node_ = node;
    last_path_start_ = start;
  }
}

void Engine::release_node(std::int32_t node) {
  while (node >= 0) {
    PathNode& path = path_nodes_[static_cast<std::size_t>(node)];
    if (--path.refs > 0) return;
    const std::int32_t previous = path.previous;
    path.previous = free_path_node_;  // onto the free list, through the same field
    free_path_node_ = node;
    node = previous;
  }
}

std::vector<double> Engine::critical_times() const {
  std::vector<double> by_device(figures_.size(), 0.0);
  for (std::int32_t node = last_path_node_; node >= 0;) {
    const PathNode& path = path_nodes_[static_cast<std::size_t>(node)];
    by_device[index_of(path.device)] += path.duration;
    node = path.previous;
  }
  return by_device;
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
  const std::size_t capacity = ring_capacity(m_);
  ring_storage_.resize(stages_.size());
  for (std::size_t s = 0; s < stages_.size(); ++s) {
    ring_storage_[s].assign(capacity, Slot{});
    stages_[s].slots = ring_storage_[s].data();
    stages_[s].mask = capacity - 1;
  }
  first_forward_seen_.assign(options_.record_stage_times ? stages_.size() : 0, 0);
  if (options_.record_critical_path) {
    path_nodes_.clear();
    free_path_node_ = -1;
    device_path_.assign(index_of(p), -1);
    const std::size_t inputs = stages_.size() * static_cast<std::size_t>(m_);
    forward_path_input_.assign(inputs, PathInput{});
    backward_path_input_.assign(inputs, PathInput{});
    last_path_node_ = -1;
  }
  sweep_devices_.assign(index_of(p), SweepDevice{});
  blocked_.assign(index_of(p), WakeFlag::kQueued);
  std::size_t queue = 1;
  while (queue < index_of(p)) queue *= 2;
  woken_.assign(queue, 0);
  woken_mask_ = queue - 1;
  woken_head_ = 0;
  woken_tail_ = index_of(p);
  for (int d = 0; d < p; ++d) {
    woken_[index_of(d)] = d;
    SweepDevice& state = sweep_devices_[index_of(d)];
    feed.open(d, state.cur, state.end);
  }
  if constexpr (!Feed::kTrusted) {
    if (options_.comm == CommMode::kPaired) {
      // Per (stage, micro-batch) input: when its receiver posted (+inf: not yet) and the sender waiting.
      const std::size_t inputs = stages_.size() * static_cast<std::size_t>(m_);
      forward_posted_.assign(inputs, kUnknownTime);
      backward_posted_.assign(inputs, kUnknownTime);
      forward_waiting_.assign(inputs, -1);
      backward_waiting_.assign(inputs, -1);
      waiting_since_.assign(2 * inputs, 0.0);
      sweep_held_.assign(index_of(p), 0);
      for (int d = 0; d < p; ++d) {
        if (sweep_devices_[index_of(d)].cur != sweep_devices_[index_of(d)].end) post_receives_sweep(d, 0.0);
      }
    }
  }
  const auto run_woken = [&](auto advance_one) {
    while (woken_head_ != woken_tail_) advance_one(pop_woken());
  };
  bool counted_afterwards = false;
  if constexpr (Feed::kTrusted) {
    counted_afterwards = !options_.record_stage_times;
    const bool overlap = options_.comm == CommMode::kOverlap;
    const bool pairs = feed.streams.overlapped_pairs;
    if (options_.record_stage_times) {
      run_woken([&](int device) { advance(feed, device); });
    } else if (overlap && pairs) {
      run_trusted<true, true>(feed);
    } else if (overlap) {
      run_trusted<true, false>(feed);
    } else if (pairs) {
      run_trusted<false, true>(feed);
    } else {
      run_trusted<false, false>(feed);
    }
  } else {
    run_woken([&](int device) { advance(feed, device); });
  }
  SimulationOutcome outcome;
  Deadlock deadlock;
  for (int d = 0; d < p; ++d) {
    const SweepDevice& state = sweep_devices_[index_of(d)];
    if (state.finished) continue;
    const Action* next = state.cur;
    std::size_t step = Feed::kTrusted ? trusted_position(state) : state.position;
    // Of an overlapped pair, name the half that is still waiting.
    Slot* slot = nullptr;
    if (next->fused_with_next && next + 1 < state.end &&
        input_ready<Feed::kTrusted>(*next, stages_[index_of(next->stage)], slot) != kUnknownTime) {
      ++next;
      ++step;
    }
    slot = find_slot(stages_[index_of(next->stage)], next->microbatch);
    // A trusted program keeps no flags: its own forward has run, so a stuck B or I waits for its gradient.
    const bool forward_done = Feed::kTrusted || (slot != nullptr && (slot->flags & kSweepForwardDone) != 0);
    deadlock.devices.push_back(describe_wait(d, step, *next, forward_done));
  }
  if (!deadlock.devices.empty()) {
    outcome.deadlock = std::move(deadlock);
    return outcome;
  }
  if (counted_afterwards) count_trusted_messages();
  outcome.result = summarize();
  if (options_.record_critical_path) outcome.result->critical_time = critical_times();
  return outcome;
}

void Engine::count_trusted_messages() {
  // A registry schedule runs F and one of B or I of every (stage, micro-batch) once, so each stage
  // sends m activations forward (but the last) and m gradients back (but the first).
  for (Link& link : links_) link.messages = link.bytes = 0;
  const auto m = static_cast<std::int64_t>(m_);
  for (const StageInfo& stage : stages_) {
    for (const StageOutput* output : {&stage.forward, &stage.backward}) {
      if (output->link < 0) continue;
      Link& link = links_[index_of(output->link)];
      link.messages += m;
      link.bytes += m * output->bytes;
    }
  }
}

SimulationOutcome Engine::run_sweep(const Program& program, const CostModel& costs, const EngineOptions& options) {
  program_ = &program;
  layerwise_pairs_ = program.layerwise_pairs;
  units_per_microbatch_ = program.units_per_microbatch;
  prepare_common(program.num_devices, program.num_microbatches, program.stage_device, program.num_pipelines, costs,
                 options);
  ProgramFeed feed{program};
  return sweep(feed);
}

SimulationOutcome Engine::run(const ScheduleStreams& streams, const CostModel& costs, const EngineOptions& options) {
  if (streams.params.p < 1 || streams.num_microbatches() < 1 || streams.num_pipelines < 1 || streams.stage_device.empty() || streams.device == nullptr) {
    throw std::invalid_argument("Engine::run: the schedule's streams are empty");
  }
  const bool noisy = options.noise != nullptr && options.noise->any();
  if (!uses_sweep(options) || noisy || options.record_critical_path || options.comm == CommMode::kPaired) {
    // The event queue needs the whole program, and noise and the critical path are drawn and found
    // by the sweep of a stored one (the trusted loop has neither); keep it alive for the result's run.
    stored_ = collect_program(streams);
    return run(stored_, costs, options);
  }
  program_ = nullptr;
  layerwise_pairs_ = streams.layerwise_pairs;
  units_per_microbatch_ = streams.units_per_microbatch;
  prepare_common(streams.params.p, streams.num_microbatches(), streams.stage_device, streams.num_pipelines, costs,
                 options);
  if (readers_.size() < index_of(streams.params.p)) readers_.resize(index_of(streams.params.p));
  StreamFeedOf<SweepDevice> feed{streams, readers_, sweep_devices_, &Engine::mark_window};
  SimulationOutcome outcome = sweep(feed);
  for (StreamReader& reader : readers_) reader.close();  // each coroutine's frame; the buffers stay
  return outcome;
}

}  // namespace ppsim
