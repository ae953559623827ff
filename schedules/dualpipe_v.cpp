// SPDX-License-Identifier: Apache-2.0
// DualPipeV (DeepSeek-AI, DeepSeek-V3 Technical Report, arXiv 2412.19437; the "cut-in-half" V of
// DualPipe by Sea AI Lab): two chunks per device on the V mapping, and in the steady state every
// forward of one chunk overlapped with a full backward of the other, one OVERLAP_F_B op. The order
// follows deepseek-ai/DualPipe's dualpipe/dualpipev.py (DualPipeV.step, steps 1-8, read at 3da1bbe)
// and torch.distributed.pipelining's ScheduleDualPipeV._calculate_single_rank_operations
// (torch/distributed/pipelining/schedules.py, pytorch/pytorch), which writes the same order as a list
// of actions; an exported schedule matches torch's action for action. Device d holds stage d (chunk
// 0) and stage 2p-1-d (chunk 1), and runs
//   1  2(p-1-d) F0
//   2  d+1 pairs F0 F1
//   3  p-1-d triples I1 W1 F1          zero bubble: W right after its I
//   4  m-2p+d+1 pairs (F0;B1) (F1;B0)  overlapped; the last device runs its first F0 and B1 apart
//   5  p-1-d pairs B1 (F1;B0)
//   6  d+1 pairs B1 B0                 full B in the first half, I from the middle pair on
//   7  p-1-d pairs W I0                the oldest deferred W first
//   8  d+1 W                           the rest, oldest first
// Micro-batch numbers come from one counter per (stage, forward) and per (stage, backward), B and I
// sharing one, as both references count them; W's follow their I's first in, first out.
//
// The same order is each rank's in the bidirectional DualPipe (dualpipe.cpp): DualPipeV is DualPipe
// cut in half, so rank r of DualPipe runs device min(r, p-1-r) of DualPipeV over p/2 devices and m/2
// micro-batches, chunk 0 being the direction whose input enters nearer to it.
#include <array>
#include <deque>
#include <utility>

#include "schedules/builders.hpp"

namespace ppsim {
namespace {

// One device's actions, numbering micro-batches per stage as the references do. Each call returns
// the one or two actions it makes, for the coroutine below to yield.
class DeviceOrder {
 public:
  struct Made {
    std::array<Action, 2> actions{};
    std::size_t count = 0;
    const Action* begin() const { return actions.data(); }
    const Action* end() const { return actions.data() + count; }
  };

  DeviceOrder(int stage0, int stage1) : stage_{stage0, stage1} {}

  Made forward(int chunk) { return one({stage_[chunk], Op::kForward, forwards_[chunk]++}); }

  // A full backward, or with `split` an I whose W waits in the queue.
  Made backward(int chunk, bool split = false) {
    const int microbatch = backwards_[chunk]++;
    if (split) pending_weights_.emplace_back(stage_[chunk], microbatch);
    return one({stage_[chunk], split ? Op::kBackwardInput : Op::kBackward, microbatch});
  }

  // F of `forward_chunk` and full B of the other chunk as one overlapped op.
  Made overlapped(int forward_chunk) {
    Made made;
    made.actions[0] = forward(forward_chunk).actions[0];
    made.actions[0].fused_with_next = true;
    made.actions[1] = backward(1 - forward_chunk).actions[0];
    made.count = 2;
    return made;
  }

  // The oldest deferred W, if any (DualPipe's WeightGradStore is a FIFO queue).
  Made weight() {
    if (pending_weights_.empty()) return {};
    const auto [stage, microbatch] = pending_weights_.front();
    pending_weights_.pop_front();
    return one({stage, Op::kBackwardWeight, microbatch});
  }

 private:
  static Made one(const Action& action) {
    Made made;
    made.actions[0] = action;
    made.count = 1;
    return made;
  }

  int stage_[2];
  int forwards_[2] = {0, 0};
  int backwards_[2] = {0, 0};
  std::deque<std::pair<int, int>> pending_weights_;  // (stage, micro-batch) of I's whose W has not run
};

}  // namespace

ActionStream dualpipe_rank_order(int p, int m, int d, int stage0, int stage1) {
  DeviceOrder order(stage0, stage1);
  const bool last = d == p - 1;
  // 1: chunk 0 runs ahead by the distance its output travels down the V and back to chunk 1 here.
  for (int k = 0; k < 2 * (p - 1 - d); ++k) {
    for (const Action& a : order.forward(0)) co_yield a;
  }
  // 2: both chunks forward, alternating.
  for (int k = 0; k < d + 1; ++k) {
    for (const Action& a : order.forward(0)) co_yield a;
    for (const Action& a : order.forward(1)) co_yield a;
  }
  // 3: chunk 1's first gradients arrive; split them so their W fill the wait for the next forward.
  for (int k = 0; k < p - 1 - d; ++k) {
    for (const Action& a : order.backward(1, /*split=*/true)) co_yield a;
    for (const Action& a : order.weight()) co_yield a;
    for (const Action& a : order.forward(1)) co_yield a;
  }
  // 4: the main step. The last device does not overlap its first pair: its F0 feeds its own F1 and
  // its B1 the rest of the V, so running them apart shortens the bubble (both references).
  for (int k = 0; k < m - 2 * p + d + 1; ++k) {
    if (k == 0 && last) {
      for (const Action& a : order.forward(0)) co_yield a;
      for (const Action& a : order.backward(1)) co_yield a;
    } else {
      for (const Action& a : order.overlapped(0)) co_yield a;
    }
    for (const Action& a : order.overlapped(1)) co_yield a;
  }
  // 5: chunk 0's forwards are all issued; chunk 1's last forwards pair with chunk 0's backwards.
  for (int k = 0; k < p - 1 - d; ++k) {
    for (const Action& a : order.backward(1)) co_yield a;
    for (const Action& a : order.overlapped(1)) co_yield a;
  }
  // 6: the drain; from the middle pair on the backwards split so W can fill the tail. Odd devices
  // split from the middle pair's B1, even ones from its B0.
  bool split = false;
  for (int k = 0; k < d + 1; ++k) {
    if (k == (d + 1) / 2 && d % 2 == 1) split = true;
    for (const Action& a : order.backward(1, split)) co_yield a;
    if (k == (d + 1) / 2 && d % 2 == 0) split = true;
    for (const Action& a : order.backward(0, split)) co_yield a;
  }
  // 7 and 8: deferred W's, oldest first, between and after chunk 0's last input gradients.
  for (int k = 0; k < p - 1 - d; ++k) {
    for (const Action& a : order.weight()) co_yield a;
    for (const Action& a : order.backward(0, /*split=*/true)) co_yield a;
  }
  for (int k = 0; k < d + 1; ++k) {
    for (const Action& a : order.weight()) co_yield a;
  }
}

namespace {

ActionStream dualpipev_device(ScheduleParams params, int d) {
  return dualpipe_rank_order(params.p, params.m, d, d, 2 * params.p - 1 - d);
}

}  // namespace

std::optional<std::string> check_dualpipev(const ScheduleParams& params) {
  if (params.v != 2) {
    return "needs v = 2: DualPipeV places exactly two chunks on each device, stages d and 2p-1-d (got v = " +
           std::to_string(params.v) + ")";
  }
  if (params.m < 2 * params.p) {
    return "needs m >= 2p micro-batches, one per stage at least: dualpipev.py asserts num_chunks >= num_ranks * 2 "
           "and torch's ScheduleDualPipeV wants as many micro-batches as stages (got m = " +
           std::to_string(params.m) + " for p = " + std::to_string(params.p) +
           ", needs m >= " + std::to_string(2 * params.p) + ")";
  }
  return std::nullopt;
}

ScheduleStreams dualpipev_streams(const ScheduleParams& params) {
  return {params, v_stage_mapping(params.p), dualpipev_device, true};
}

}  // namespace ppsim
