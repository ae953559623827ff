// SPDX-License-Identifier: Apache-2.0
// Interleaved zero bubble (torch.distributed.pipelining's ScheduleInterleavedZeroBubble; Qi et al.,
// "Zero Bubble Pipeline Parallelism", ICLR 2024, applied to Megatron's looped chunks): v chunks per
// device on the loop mapping, the backward split into I and W, and each device's W's held back so
// that the I's the devices upstream wait for run first.
//
// The order follows torch/distributed/pipelining/schedules.py (read at pytorch/pytorch 00722e64:
// ScheduleInterleavedZeroBubble._calculate_single_rank_operations and _get_1f1b_rank_ops with
// enable_zero_bubble). With r = m / max(1, floor(m/p)) micro-batches per round and n = m·v ops of
// each kind per device:
// - the k-th forward is of chunk (k / r) mod v, micro-batch (k / (r·v))·r + k mod r, as interleaved
//   1F1B's; the k-th I is of chunk v-1-(k / r) mod v, micro-batches in the same order;
// - device d runs w = min((v-1)·r + (p-1-d), n) warmup forwards: one per hop, not interleaved 1F1B's
//   two, since an I (about F's time) comes back where 1F1B waited for a whole B;
// - then for k = 0 .. n-1: forward w+k (while any is left), I k, and, once k >= d, the W of the
//   (k-d)-th I: device d holds d W's back (torch's num_1f1b_microbatches = rank);
// - then the d W's still held, in order.
// torch's _add_bubbles_to_actions only inserts empty steps where a forward's input is not there yet;
// it never reorders, so the action lists are the same once its empty steps are left out.
#include <algorithm>

#include "schedules/builders.hpp"

namespace ppsim {
namespace {

int rounds_of(const ScheduleParams& params) { return std::max(1, params.m / params.p); }

}  // namespace

std::optional<std::string> check_interleaved_zero_bubble(const ScheduleParams& params) {
  // torch's only size check (ScheduleInterleavedZeroBubble.__init__); it accepts v = 1 too.
  return check_equal_rounds(params, "ScheduleInterleavedZeroBubble");
}

ActionStream interleaved_zero_bubble_device(ScheduleParams params, int d) {
  const int p = params.p;
  const int v = params.v;
  const int total = params.m * v;
  const int round = params.m / rounds_of(params);
  const auto microbatch = [&](int k) { return (k / (round * v)) * round + k % round; };
  const auto forward = [&](int k) { return Action{((k / round) % v) * p + d, Op::kForward, microbatch(k)}; };
  const auto input = [&](int k, Op op) { return Action{(v - 1 - (k / round) % v) * p + d, op, microbatch(k)}; };
  const int warmup = std::min((v - 1) * round + (p - 1 - d), total);
  for (int k = 0; k < warmup; ++k) co_yield forward(k);
  for (int k = 0; k < total; ++k) {
    if (warmup + k < total) co_yield forward(warmup + k);
    co_yield input(k, Op::kBackwardInput);
    if (k >= d) co_yield input(k - d, Op::kBackwardWeight);
  }
  for (int k = std::max(0, total - d); k < total; ++k) co_yield input(k, Op::kBackwardWeight);
}

ScheduleStreams interleaved_zero_bubble_streams(const ScheduleParams& params) {
  return {params, loop_stage_mapping(params.p, params.v), interleaved_zero_bubble_device};
}

}  // namespace ppsim
