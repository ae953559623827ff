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
#include <deque>
#include <utility>

#include "schedules/builders.hpp"

namespace ppsim {
namespace {

// Appends one device's actions, numbering micro-batches per stage as the references do.
class DeviceOrder {
 public:
  DeviceOrder(int stage0, int stage1, std::vector<Action>& out) : stage_{stage0, stage1}, out_(out) {}

  void forward(int chunk) { out_.push_back(make(stage_[chunk], Op::kForward, forwards_[chunk]++)); }

  // A full backward, or with `split` an I whose W waits in the queue.
  void backward(int chunk, bool split = false) {
    const int microbatch = backwards_[chunk]++;
    out_.push_back(make(stage_[chunk], split ? Op::kBackwardInput : Op::kBackward, microbatch));
    if (split) pending_weights_.emplace_back(stage_[chunk], microbatch);
  }

  // F of `forward_chunk` and full B of the other chunk as one overlapped op.
  void overlapped(int forward_chunk) {
    forward(forward_chunk);
    out_.back().fused_with_next = true;
    backward(1 - forward_chunk);
  }

  // The oldest deferred W, if any (DualPipe's WeightGradStore is a FIFO queue).
  void weight() {
    if (pending_weights_.empty()) return;
    const auto [stage, microbatch] = pending_weights_.front();
    pending_weights_.pop_front();
    out_.push_back(make(stage, Op::kBackwardWeight, microbatch));
  }

 private:
  static Action make(int stage, Op op, int microbatch) {
    Action action;
    action.stage = stage;
    action.op = op;
    action.microbatch = microbatch;
    return action;
  }

  int stage_[2];
  int forwards_[2] = {0, 0};
  int backwards_[2] = {0, 0};
  std::deque<std::pair<int, int>> pending_weights_;  // (stage, micro-batch) of I's whose W has not run
  std::vector<Action>& out_;
};

void build_device(int p, int d, int m, std::vector<Action>& out) {
  DeviceOrder order(d, 2 * p - 1 - d, out);
  const bool last = d == p - 1;
  // 1: chunk 0 runs ahead by the distance its output travels down the V and back to chunk 1 here.
  for (int k = 0; k < 2 * (p - 1 - d); ++k) order.forward(0);
  // 2: both chunks forward, alternating.
  for (int k = 0; k < d + 1; ++k) {
    order.forward(0);
    order.forward(1);
  }
  // 3: chunk 1's first gradients arrive; split them so their W fill the wait for the next forward.
  for (int k = 0; k < p - 1 - d; ++k) {
    order.backward(1, /*split=*/true);
    order.weight();
    order.forward(1);
  }
  // 4: the main step. The last device does not overlap its first pair: its F0 feeds its own F1 and
  // its B1 the rest of the V, so running them apart shortens the bubble (both references).
  for (int k = 0; k < m - 2 * p + d + 1; ++k) {
    if (k == 0 && last) {
      order.forward(0);
      order.backward(1);
    } else {
      order.overlapped(0);
    }
    order.overlapped(1);
  }
  // 5: chunk 0's forwards are all issued; chunk 1's last forwards pair with chunk 0's backwards.
  for (int k = 0; k < p - 1 - d; ++k) {
    order.backward(1);
    order.overlapped(1);
  }
  // 6: the drain; from the middle pair on the backwards split so W can fill the tail. Odd devices
  // split from the middle pair's B1, even ones from its B0.
  bool split = false;
  for (int k = 0; k < d + 1; ++k) {
    if (k == (d + 1) / 2 && d % 2 == 1) split = true;
    order.backward(1, split);
    if (k == (d + 1) / 2 && d % 2 == 0) split = true;
    order.backward(0, split);
  }
  // 7 and 8: deferred W's, oldest first, between and after chunk 0's last input gradients.
  for (int k = 0; k < p - 1 - d; ++k) {
    order.weight();
    order.backward(0, /*split=*/true);
  }
  for (int k = 0; k < d + 1; ++k) order.weight();
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

Program build_dualpipev(const ScheduleParams& params) {
  return make_program(params.p, params.m, v_stage_mapping(params.p), 6 * static_cast<std::size_t>(params.m),
                      [&](int d, std::vector<Action>& list) { build_device(params.p, d, params.m, list); });
}

}  // namespace ppsim
