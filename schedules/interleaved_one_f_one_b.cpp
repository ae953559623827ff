// SPDX-License-Identifier: Apache-2.0
// Interleaved 1F1B (virtual pipeline; Narayanan et al., SC'21 §2.2.2): v chunks per device on the
// loop mapping, forwards depth-first in groups of micro-batches, then one forward one backward.
//
// The order follows torch.distributed.pipelining's ScheduleInterleaved1F1B
// (torch/distributed/pipelining/schedules.py: _get_warmup_ops, forward_stage_index,
// backward_stage_index, _get_1f1b_rank_ops), which is Megatron-LM's schedule table
// (megatron/core/pipeline_parallel/schedules.py: get_schedule_table, get_pp_rank_microbatches,
// forward_backward_pipelining_with_interleaving) with a micro-batch group of N micro-batches:
// - the table takes the micro-batches N at a time; each group runs through chunk 0, then chunk 1, ...
//   A last group of r = m mod N micro-batches runs through the chunks r at a time (Megatron's
//   get_schedule_table never merges it into the group before);
// - the k-th backward is of chunk v-1-c where the k-th forward is of chunk c, micro-batches in the
//   same order (each chunk's stashes are taken first in, first out);
// - device d runs w = min((v-1)·N + 2(p-1-d), m·v) warmup forwards, then pairs forward(w+k),
//   backward(k), then the remaining backwards.
// N is torch's m / max(1, m / p) unless --microbatch-group-size sets Megatron's
// microbatch_group_size_per_vp_stage. When p divides m both give N = p, Megatron-LM's default.
// Megatron accepts p <= N <= m with m mod N = 0 or >= p (its checks in
// forward_backward_pipelining_with_interleaving); torch accepts every m that splits into equal
// rounds, m < p included (N = m).
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

VirtualMicrobatch table_entry(int k, int group, int v, int m) {
  const int full_groups = m / group;
  const int in_full_groups = full_groups * group * v;
  if (k < in_full_groups) return {(k / group) % v, (k / (group * v)) * group + k % group};
  // The last, partial group of r micro-batches goes through the chunks r at a time.
  const int rest = m - full_groups * group;
  const int j = k - in_full_groups;
  return {j / rest, full_groups * group + j % rest};
}

// The group size the schedule uses: Megatron's when given, else torch's rounds.
int group_of(const ScheduleParams& params) {
  return params.microbatch_group > 0 ? params.microbatch_group : params.m / rounds_of(params);
}

}  // namespace

std::optional<std::string> check_interleaved(const ScheduleParams& params) {
  if (params.v < 2) {
    return "needs v >= 2: it interleaves several chunks per device (got v = " + std::to_string(params.v) +
           "; with one chunk it is plain 1F1B, use 1f1b)";
  }
  if (params.microbatch_group > 0) {
    // Megatron-LM's checks on microbatch_group_size_per_vp_stage (ValueError and RuntimeError in
    // forward_backward_pipelining_with_interleaving).
    const int group = params.microbatch_group;
    if (group < params.p || group > params.m) {
      return "needs the micro-batch group size in [p, m] = [" + std::to_string(params.p) + ", " +
             std::to_string(params.m) + "] (got " + std::to_string(group) +
             "), as Megatron-LM's microbatch_group_size_per_vp_stage";
    }
    const int rest = params.m % group;
    if (rest != 0 && rest < params.p) {
      return "needs the micro-batch group size to leave m mod N = 0 or >= p (got m = " + std::to_string(params.m) +
             ", N = " + std::to_string(group) + ", remainder " + std::to_string(rest) + " < p = " +
             std::to_string(params.p) + "): a short last group leaves dependency bubbles, and Megatron-LM refuses it";
    }
    return std::nullopt;
  }
  if (auto why = check_equal_rounds(params, "ScheduleInterleaved1F1B")) {
    return *why + " (Megatron-LM's default needs m % p = 0)";
  }
  return std::nullopt;
}

std::optional<std::string> check_equal_rounds(const ScheduleParams& params, std::string_view torch_class) {
  const int rounds = rounds_of(params);
  if (params.m % rounds == 0) return std::nullopt;
  return "needs m to be a multiple of max(1, floor(m/p)) = " + std::to_string(rounds) + " (got m = " +
         std::to_string(params.m) + ", p = " + std::to_string(params.p) +
         "): micro-batches pass through the chunks in equal rounds, as torch's " + std::string(torch_class) +
         " requires";
}

namespace {

// Device d's list: warmup forwards, then forward(w + k) with backward(k), then the last backwards.
// `combined`: Megatron's combined 1F1B, one more warmup forward and each steady pair one overlapped op.
ActionStream interleaved_order(ScheduleParams params, int d, bool combined) {
  const int p = params.p;
  const int v = params.v;
  const int total = params.m * v;  // virtual micro-batches per device
  const int group = group_of(params);
  const auto forward = [&](int k, bool fused = false) {
    const VirtualMicrobatch entry = table_entry(k, group, v, params.m);
    return Action{entry.chunk * p + d, Op::kForward, entry.microbatch, fused};
  };
  const auto backward = [&](int k) {
    const VirtualMicrobatch entry = table_entry(k, group, v, params.m);
    return Action{(v - 1 - entry.chunk) * p + d, Op::kBackward, entry.microbatch};
  };
  // Earlier devices run more forwards first: 2 per hop, the time for a gradient to come back.
  const int warmup = std::min((v - 1) * group + 2 * (p - 1 - d) + (combined ? 1 : 0), total);
  for (int k = 0; k < warmup; ++k) co_yield forward(k);
  for (int k = 0; k + warmup < total; ++k) {
    co_yield forward(warmup + k, combined);
    co_yield backward(k);
  }
  for (int k = total - warmup; k < total; ++k) co_yield backward(k);
}

ActionStream interleaved_one_f_one_b_device(ScheduleParams params, int d) { return interleaved_order(params, d, false); }
ActionStream combined_one_f_one_b_device(ScheduleParams params, int d) { return interleaved_order(params, d, true); }

}  // namespace

ScheduleStreams interleaved_one_f_one_b_streams(const ScheduleParams& params) {
  return {params, loop_stage_mapping(params.p, params.v), interleaved_one_f_one_b_device};
}

// Megatron-LM's combined 1F1B (--overlap-moe-expert-parallel-comm; megatron/core/pipeline_parallel/
// combined_1f1b.py, combined_forward_backward_step, and schedules.py,
// forward_backward_pipelining_with_interleaving): the interleaved schedule with one more warmup
// forward, so that a steady step's forward and backward are never the same micro-batch's, and each
// steady forward merged with the backward after it into one step whose layers run the forward's
// compute beside the backward's expert all-to-alls and the reverse (the cost model's overlap_time).
// Without pipelining (p = 1, v = 1) it is F0, then F(k+1) with B(k), then the last B.
std::optional<std::string> check_combined_one_f_one_b(const ScheduleParams& params) {
  if (params.v == 1) {
    if (params.p == 1) return std::nullopt;
    // transformer_config.py asserts the same for overlap_moe_expert_parallel_comm.
    return "needs v >= 2 when p > 1: Megatron-LM combines forward and backward steps only in its interleaved "
           "schedule or without pipelining (got v = 1, p = " + std::to_string(params.p) + ")";
  }
  return check_interleaved(params);
}

ScheduleStreams combined_one_f_one_b_streams(const ScheduleParams& params) {
  ScheduleStreams streams{params, loop_stage_mapping(params.p, params.v), combined_one_f_one_b_device};
  streams.overlapped_pairs = true;
  streams.layerwise_pairs = true;
  return streams;
}

}  // namespace ppsim
