// SPDX-License-Identifier: Apache-2.0
// ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 6; "Pipeline Parallelism
// with Controllable Memory", NeurIPS 2024): two chunks per device on the V mapping, backward split
// into I and W. The per-device order follows torch.distributed.pipelining's ScheduleZBVZeroBubble
// (_calculate_single_rank_operations in torch/distributed/pipelining/schedules.py, read at
// pytorch/pytorch 1fd7abc2; unchanged in the later version that adds ScheduleDualPipeV), so that an
// exported schedule matches torch's action for action (its empty steps left out). Device d holds stage d (chunk 0) and
// stage 2p-1-d (chunk 1); with n = max(m, 2p-1) it runs
//   warmup   2(p-d)-1 F0; d pairs F1 F0; p-d triples F1 I1 W1
//   steady   until every forward is issued: [F0 while any is left] I0 W0 F1 I1 W1
//   cooldown d pairs I0 I1; p-d pairs I0 W0; the W1 left, then the W0 left
// and then drops every action on a micro-batch >= m: torch pads to 2p-1 micro-batches, the fewest
// that fill the V, and leaves the padded steps empty.
#include <algorithm>
#include <array>
#include <span>

#include "schedules/builders.hpp"

namespace ppsim {
namespace {

// The six counters of torch's f0_cnt..w1_cnt, one per (chunk, op).
enum Kind { kF0, kF1, kI0, kI1, kW0, kW1, kKinds };

// Counts each (chunk, op) like torch and yields the actions that are real. Padded micro-batches
// (>= m) keep their place in the counting but are not emitted; since counters only grow, once every
// counter a loop touches is past m the rest of that loop emits nothing and is skipped by arithmetic.
// That keeps a device's work O(its actions) where the padding is O(p): ZB-V at p = 100,000 and m = 8
// pads to 199,999 micro-batches per device.
class DeviceOrder {
 public:
  DeviceOrder(int p, int d, int m) : chunk0_(d), chunk1_(2 * p - 1 - d), m_(m) {}

  // Counts one `kind`; true, with the action in `action`, when its micro-batch is real.
  bool take(Kind kind, Action& action) {
    const int microbatch = count_[kind]++;
    if (microbatch >= m_) return false;
    const bool first_chunk = kind == kF0 || kind == kI0 || kind == kW0;
    const Op op = kind == kF0 || kind == kF1   ? Op::kForward
                  : kind == kI0 || kind == kI1 ? Op::kBackwardInput
                                               : Op::kBackwardWeight;
    action = Action{first_chunk ? chunk0_ : chunk1_, op, microbatch};
    return true;
  }

  int count(Kind kind) const { return count_[kind]; }
  int chunk(bool first) const { return first ? chunk0_ : chunk1_; }
  // Every counter below m: the next steady iteration takes a real micro-batch of each kind.
  bool steady_all_real() const {
    return std::all_of(std::begin(count_), std::end(count_), [&](int count) { return count < m_; });
  }
  // The next action of `kind`, counted, when it is known to be real.
  Action next(Kind kind, int chunk, Op op) { return Action{chunk, op, count_[kind]++}; }
  // Steady iterations of real actions, F0 I0 W0 F1 I1 W1, put straight into the reader's buffer
  // while it has room for one: counters in registers, no suspension.
  void steady_run(ActionStream::promise_type& buffer) {
    // A steady iteration takes one of each kind, so the counters move together: six offsets.
    int f0 = count_[kF0], i0 = count_[kI0], w0 = count_[kW0], f1 = count_[kF1], i1 = count_[kI1], w1 = count_[kW1];
    const int top = std::max({f0, i0, w0, f1, i1, w1});
    const int times = std::min(static_cast<int>(buffer.room() / 6), m_ - top);
    // Locals only below: the stores through `out` (ints) could otherwise alias the members.
    Action* out = buffer.free_slots();
    const int chunk0 = chunk0_, chunk1 = chunk1_;
    for (int k = 0; k < times; ++k) {
      *out++ = Action{chunk0, Op::kForward, f0++};
      *out++ = Action{chunk0, Op::kBackwardInput, i0++};
      *out++ = Action{chunk0, Op::kBackwardWeight, w0++};
      *out++ = Action{chunk1, Op::kForward, f1++};
      *out++ = Action{chunk1, Op::kBackwardInput, i1++};
      *out++ = Action{chunk1, Op::kBackwardWeight, w1++};
    }
    buffer.commit(6 * static_cast<std::size_t>(times));
    count_[kF0] = f0, count_[kI0] = i0, count_[kW0] = w0, count_[kF1] = f1, count_[kI1] = i1, count_[kW1] = w1;
  }
  bool past_m(std::span<const Kind> kinds) const {
    for (Kind kind : kinds) {
      if (count_[kind] < m_) return false;
    }
    return true;
  }
  void skip(std::span<const Kind> kinds, int times) {
    for (Kind kind : kinds) count_[kind] += times;
  }
  bool exhausted() const { return past_m(kAllKinds); }

 private:
  static constexpr Kind kAllKinds[] = {kF0, kF1, kI0, kI1, kW0, kW1};
  int chunk0_;
  int chunk1_;
  int m_;
  int count_[kKinds] = {};
};

// `times` iterations of running `body` in order; each kind appears once in a body.
struct Repeat {
  int times;
  std::array<Kind, 3> kinds;
  std::size_t length;
  std::span<const Kind> body() const { return std::span<const Kind>(kinds).first(length); }
};

constexpr Kind kSteadyAfterF0[] = {kI0, kW0, kF1, kI1, kW1};

}  // namespace

ActionStream zero_bubble_v_device(ScheduleParams params, int d) {
  const int p = params.p;
  const int m = params.m;
  const int n = std::max(m, 2 * p - 1);
  DeviceOrder order(p, d, m);
  Action action;
  // A coroutine's helpers cannot yield, so the phases are a table one loop runs; the entry with an
  // empty body is the steady loop.
  // Warmup: chunk 0 runs ahead by 2(p-d)-1, the distance its output travels down and back up the V
  // before chunk 1 of this device can use it; then pairs F1 F0; then chunk 1's backwards begin
  // first, since its gradients start at the bottom of the V.
  // Steady: one F, I and W per chunk; W right after its I keeps the stash at its warmup level.
  // Cooldown: input gradients first (others wait for them), weight gradients fill the drain.
  const std::array<Repeat, 6> phases = {Repeat{2 * (p - d) - 1, {kF0}, 1}, Repeat{d, {kF1, kF0}, 2},
                                        Repeat{p - d, {kF1, kI1, kW1}, 3},  Repeat{0, {}, 0},
                                        Repeat{d, {kI0, kI1}, 2},           Repeat{p - d, {kI0, kW0}, 2}};
  ActionStream::promise_type& buffer = co_await ActionStream::buffer();
  for (const Repeat& repeat : phases) {
    if (repeat.length == 0) {
      // Every steady iteration emits an action until all counters are past m, and then nothing
      // more ever would.
      while (order.count(kF1) < order.count(kF0) || order.count(kF0) < n) {
        // Most iterations take a real micro-batch of every kind (counters below m <= n): those
        // yield the six actions straight, without take()'s tests.
        while (order.steady_all_real()) {
          // As many as the reader's buffer has room for are written straight (steady_run), the one
          // that fills it is yielded.
          order.steady_run(buffer);
          if (!order.steady_all_real()) break;
          co_yield order.next(kF0, order.chunk(true), Op::kForward);
          co_yield order.next(kI0, order.chunk(true), Op::kBackwardInput);
          co_yield order.next(kW0, order.chunk(true), Op::kBackwardWeight);
          co_yield order.next(kF1, order.chunk(false), Op::kForward);
          co_yield order.next(kI1, order.chunk(false), Op::kBackwardInput);
          co_yield order.next(kW1, order.chunk(false), Op::kBackwardWeight);
        }
        if (!(order.count(kF1) < order.count(kF0) || order.count(kF0) < n)) break;
        if (order.exhausted()) co_return;
        if (order.count(kF0) < n && order.take(kF0, action)) co_yield action;
        for (const Kind kind : kSteadyAfterF0) {
          if (order.take(kind, action)) co_yield action;
        }
      }
      continue;
    }
    for (int k = 0; k < repeat.times; ++k) {
      if (order.past_m(repeat.body())) {
        order.skip(repeat.body(), repeat.times - k);
        break;
      }
      for (const Kind kind : repeat.body()) {
        if (order.take(kind, action)) co_yield action;
      }
    }
  }
  while (order.count(kW1) < std::min(order.count(kI1), m)) {
    if (order.take(kW1, action)) co_yield action;
  }
  while (order.count(kW0) < std::min(order.count(kI0), m)) {
    if (order.take(kW0, action)) co_yield action;
  }
}


std::optional<std::string> check_zero_bubble_v(const ScheduleParams& params) {
  if (params.v != 2) {
    return "needs v = 2: ZB-V places exactly two chunks on each device, stages d and 2p-1-d (got v = " +
           std::to_string(params.v) + ")";
  }
  return std::nullopt;
}

ScheduleStreams zero_bubble_v_streams(const ScheduleParams& params) {
  return {params, v_stage_mapping(params.p), zero_bubble_v_device};
}

}  // namespace ppsim
