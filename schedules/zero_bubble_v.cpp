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

#include "schedules/builders.hpp"

namespace ppsim {
namespace {

// The six counters of torch's f0_cnt..w1_cnt, one per (chunk, op).
enum Kind { kF0, kF1, kI0, kI1, kW0, kW1, kKinds };

// Counts each (chunk, op) like torch and appends the actions that are real. Padded micro-batches
// (>= m) keep their place in the counting but are not emitted; since counters only grow, once every
// counter a loop touches is past m the rest of that loop emits nothing and is skipped by arithmetic.
// That keeps a device's work O(its actions) where the padding is O(p): ZB-V at p = 100,000 and m = 8
// pads to 199,999 micro-batches per device.
class DeviceOrder {
 public:
  DeviceOrder(int p, int d, int m, std::vector<Action>& out) : chunk0_(d), chunk1_(2 * p - 1 - d), m_(m), out_(out) {}

  void run(Kind kind) {
    const int microbatch = count_[kind]++;
    if (microbatch >= m_) return;
    const bool first_chunk = kind == kF0 || kind == kI0 || kind == kW0;
    const Op op = kind == kF0 || kind == kF1   ? Op::kForward
                  : kind == kI0 || kind == kI1 ? Op::kBackwardInput
                                               : Op::kBackwardWeight;
    out_.push_back({first_chunk ? chunk0_ : chunk1_, op, microbatch});
  }

  // `times` iterations of running `body` in order; each kind appears once in a body.
  void repeat(int times, std::initializer_list<Kind> body) {
    for (int k = 0; k < times; ++k) {
      if (past_m(body)) {
        for (Kind kind : body) count_[kind] += times - k;
        return;
      }
      for (Kind kind : body) run(kind);
    }
  }

  int count(Kind kind) const { return count_[kind]; }
  bool past_m(std::initializer_list<Kind> kinds) const {
    for (Kind kind : kinds) {
      if (count_[kind] < m_) return false;
    }
    return true;
  }
  bool exhausted() const { return past_m({kF0, kF1, kI0, kI1, kW0, kW1}); }

 private:
  int chunk0_;
  int chunk1_;
  int m_;
  std::vector<Action>& out_;
  int count_[kKinds] = {};
};

void build_device(int p, int d, int m, std::vector<Action>& out) {
  const int n = std::max(m, 2 * p - 1);
  DeviceOrder order(p, d, m, out);
  // Warmup: chunk 0 runs ahead by 2(p-d)-1, the distance its output travels down and back up the V
  // before chunk 1 of this device can use it.
  order.repeat(2 * (p - d) - 1, {kF0});
  order.repeat(d, {kF1, kF0});
  // Chunk 1's gradients start at the bottom of the V, so its backwards begin first.
  order.repeat(p - d, {kF1, kI1, kW1});
  // Steady: one F, I and W per chunk; W right after its I keeps the stash at its warmup level. Every
  // iteration emits an action until all counters are past m, and then nothing more ever would.
  while (order.count(kF1) < order.count(kF0) || order.count(kF0) < n) {
    if (order.exhausted()) return;
    if (order.count(kF0) < n) order.run(kF0);
    for (Kind kind : {kI0, kW0, kF1, kI1, kW1}) order.run(kind);
  }
  // Cooldown: input gradients first (others wait for them), weight gradients fill the drain.
  order.repeat(d, {kI0, kI1});
  order.repeat(p - d, {kI0, kW0});
  while (order.count(kW1) < std::min(order.count(kI1), m)) order.run(kW1);
  while (order.count(kW0) < std::min(order.count(kI0), m)) order.run(kW0);
}

}  // namespace

std::optional<std::string> check_zero_bubble_v(const ScheduleParams& params) {
  if (params.v != 2) {
    return "needs v = 2: ZB-V places exactly two chunks on each device, stages d and 2p-1-d (got v = " +
           std::to_string(params.v) + ")";
  }
  return std::nullopt;
}

Program build_zero_bubble_v(const ScheduleParams& params) {
  return make_program(params.p, params.m, v_stage_mapping(params.p), 6 * static_cast<std::size_t>(params.m),
                      [&](int d, std::vector<Action>& list) { build_device(params.p, d, params.m, list); });
}

}  // namespace ppsim
