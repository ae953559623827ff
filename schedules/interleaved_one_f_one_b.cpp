// Interleaved 1F1B (virtual pipeline; Narayanan et al., SC'21 §2.2.2): v chunks per device on the
// loop mapping, forwards depth-first in rounds of micro-batches, then one forward one backward.
//
// The order follows torch.distributed.pipelining's ScheduleInterleaved1F1B
// (torch/distributed/pipelining/schedules.py: _get_warmup_ops, forward_stage_index,
// backward_stage_index, _get_1f1b_rank_ops), which is Megatron-LM's schedule table
// (megatron/core/pipeline_parallel/schedules.py: get_schedule_table, get_pp_rank_microbatches,
// forward_backward_pipelining_with_interleaving) with a micro-batch group of r = m / max(1, m / p):
// - virtual micro-batch k (0 <= k < m·v) is chunk (k / r) % v of micro-batch (k / (r·v))·r + k % r;
//   the k-th backward is of chunk v-1-(k / r) % v, micro-batches in the same order;
// - device d runs w = min((v-1)·r + 2(p-1-d), m·v) warmup forwards, then pairs forward(w+k),
//   backward(k), then the remaining backwards.
// When p divides m, r = p and this is Megatron-LM's default (microbatch_group_size_per_vp_stage = p)
// exactly. Megatron-LM refuses other m unless that group size is set by hand (p <= r <= m with
// m % r = 0 or >= p); torch accepts every m that splits into equal rounds, m < p included (r = m).
#include <algorithm>

#include "schedules/builders.hpp"

namespace ppsim {
namespace {

// torch's flex_pp rounds: max(1, m / p) rounds of r micro-batches each.
int rounds_of(const ScheduleParams& params) { return std::max(1, params.m / params.p); }

// The (chunk, micro-batch) of the k-th forward in the schedule table; backwards reverse the chunk.
struct VirtualMicrobatch {
  int chunk = 0;
  int microbatch = 0;
};

VirtualMicrobatch table_entry(int k, int group, int v) {
  return {(k / group) % v, (k / (group * v)) * group + k % group};
}

}  // namespace

std::optional<std::string> check_interleaved(const ScheduleParams& params) {
  if (params.v < 2) {
    return "needs v >= 2: it interleaves several chunks per device (got v = " + std::to_string(params.v) +
           "; with one chunk it is plain 1F1B, use 1f1b)";
  }
  const int rounds = rounds_of(params);
  if (params.m % rounds != 0) {
    return "needs m to be a multiple of max(1, floor(m/p)) = " + std::to_string(rounds) +
           " (got m = " + std::to_string(params.m) + ", p = " + std::to_string(params.p) +
           "): micro-batches pass through the chunks in equal rounds, as torch's ScheduleInterleaved1F1B "
           "requires (Megatron-LM's default needs m % p = 0)";
  }
  return std::nullopt;
}

ActionStream interleaved_one_f_one_b_device(ScheduleParams params, int d) {
  const int p = params.p;
  const int v = params.v;
  const int total = params.m * v;  // virtual micro-batches per device
  const int group = params.m / rounds_of(params);
  const auto forward = [&](int k) {
    const VirtualMicrobatch entry = table_entry(k, group, v);
    return Action{entry.chunk * p + d, Op::kForward, entry.microbatch};
  };
  const auto backward = [&](int k) {
    const VirtualMicrobatch entry = table_entry(k, group, v);
    return Action{(v - 1 - entry.chunk) * p + d, Op::kBackward, entry.microbatch};
  };
  // Earlier devices run more forwards first: 2 per hop, the time for a gradient to come back.
  const int warmup = std::min((v - 1) * group + 2 * (p - 1 - d), total);
  for (int k = 0; k < warmup; ++k) co_yield forward(k);
  for (int k = 0; k + warmup < total; ++k) {
    co_yield forward(warmup + k);
    co_yield backward(k);
  }
  for (int k = total - warmup; k < total; ++k) co_yield backward(k);
}

ScheduleStreams interleaved_one_f_one_b_streams(const ScheduleParams& params) {
  return {params, loop_stage_mapping(params.p, params.v), interleaved_one_f_one_b_device};
}

}  // namespace ppsim
