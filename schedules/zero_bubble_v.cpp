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

// Counts each (chunk, op) like torch's f0_cnt..w1_cnt and appends the actions that are real.
class DeviceOrder {
 public:
  DeviceOrder(int p, int d, int m, std::vector<Action>& out) : chunk0_(d), chunk1_(2 * p - 1 - d), m_(m), out_(out) {}

  void forward0() { push(chunk0_, Op::kForward, f0_++); }
  void forward1() { push(chunk1_, Op::kForward, f1_++); }
  void input0() { push(chunk0_, Op::kBackwardInput, i0_++); }
  void input1() { push(chunk1_, Op::kBackwardInput, i1_++); }
  void weight0() { push(chunk0_, Op::kBackwardWeight, w0_++); }
  void weight1() { push(chunk1_, Op::kBackwardWeight, w1_++); }

  int forwards0() const { return f0_; }
  int forwards1() const { return f1_; }
  int inputs0() const { return i0_; }
  int inputs1() const { return i1_; }
  int weights0() const { return w0_; }
  int weights1() const { return w1_; }

 private:
  // Padded micro-batches (>= m) keep their place in the counting but are not emitted.
  void push(int stage, Op op, int microbatch) {
    if (microbatch < m_) out_.push_back({stage, op, microbatch});
  }

  int chunk0_;
  int chunk1_;
  int m_;
  std::vector<Action>& out_;
  int f0_ = 0, f1_ = 0, i0_ = 0, i1_ = 0, w0_ = 0, w1_ = 0;
};

void build_device(int p, int d, int m, std::vector<Action>& out) {
  const int n = std::max(m, 2 * p - 1);
  DeviceOrder order(p, d, m, out);
  // Warmup: chunk 0 runs ahead by 2(p-d)-1, the distance its output travels down and back up the V
  // before chunk 1 of this device can use it.
  for (int k = 0; k < 2 * (p - d) - 1; ++k) order.forward0();
  for (int k = 0; k < d; ++k) {
    order.forward1();
    order.forward0();
  }
  // Chunk 1's gradients start at the bottom of the V, so its backwards begin first.
  for (int k = 0; k < p - d; ++k) {
    order.forward1();
    order.input1();
    order.weight1();
  }
  // Steady: one F, I and W per chunk; W right after its I keeps the stash at its warmup level.
  while (order.forwards1() < order.forwards0() || order.forwards0() < n) {
    if (order.forwards0() < n) order.forward0();
    order.input0();
    order.weight0();
    order.forward1();
    order.input1();
    order.weight1();
  }
  // Cooldown: input gradients first (others wait for them), weight gradients fill the drain.
  for (int k = 0; k < d; ++k) {
    order.input0();
    order.input1();
  }
  for (int k = 0; k < p - d; ++k) {
    order.input0();
    order.weight0();
  }
  while (order.weights1() < order.inputs1()) order.weight1();
  while (order.weights0() < order.inputs0()) order.weight0();
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
