// SPDX-License-Identifier: Apache-2.0
// Seq1F1B (Sun et al., "Seq1F1B: Efficient Sequence-Level Pipeline Parallelism for Large Language
// Model Training", NAACL 2025): each micro-batch cut along the sequence into k slices, and 1F1B run
// over the slices. The order is thunlp/Seq1F1B's (megatron/core/pipeline_parallel/schedules.py,
// forward_backward_pipelining_without_interleaving with --pipe-sp-splits k, read at 6893466) and,
// op for op, the zero-bubble repository's scheduler/seq1f1b.py (sail-sg/zero-bubble at 3fd87fd):
//   device d runs min(p-d-2+k, mk) warmup forwards, then one forward and one backward, then the rest
// of the backwards; forwards walk micro-batch by micro-batch, slices 0..k-1, and backwards the slices
// of each micro-batch from k-1 down to 0, because slice j's attention reads the keys and values of
// slices 0..j (its forward needs slice j-1's on the same stage, and its backward hands the gradients
// of that prefix to slice j-1's). The k-1 extra warmup forwards let the last slice's backward run first.
//
// A slice (micro-batch b, slice j) is the program's micro-batch b*k + j. Slices of equal cost are
// what the reference's `uniform_comp` split solves for (split_solver.py: shorter slices later, where
// causal attention costs more), so each slice costs 1/k of a micro-batch (study/run/study.cpp).
#include <algorithm>

#include "schedules/builders.hpp"

namespace ppsim {

int sequence_splits(const ScheduleParams& params) {
  return params.sequence_splits > 0 ? params.sequence_splits : kDefaultSequenceSplits;
}

namespace {

ActionStream seq_one_f_one_b_device(ScheduleParams params, int d) {
  const int k = sequence_splits(params);
  const int slices = params.m * k;
  const int warmup = std::min(params.p - d - 2 + k, slices);
  // The n-th forward's and backward's slice, as the program's micro-batch number.
  const auto forward = [&](int n) { return Action{d, Op::kForward, n}; };
  const auto backward = [&](int n) { return Action{d, Op::kBackward, (n / k) * k + (k - 1 - n % k)}; };
  for (int n = 0; n < warmup; ++n) co_yield forward(n);
  for (int n = 0; n < slices - warmup; ++n) {
    co_yield forward(warmup + n);
    co_yield backward(n);
  }
  for (int n = slices - warmup; n < slices; ++n) co_yield backward(n);
}

}  // namespace

std::optional<std::string> check_seq_one_f_one_b(const ScheduleParams& params) {
  if (params.v != 1) {
    return "needs v = 1: Seq1F1B is 1F1B over sequence slices, one stage per device (got v = " +
           std::to_string(params.v) + ")";
  }
  if (static_cast<long long>(params.m) * sequence_splits(params) > (1LL << 30)) {
    return "needs m * sequence splits <= 2^30: every slice is a schedulable unit";
  }
  return std::nullopt;
}

ScheduleStreams seq_one_f_one_b_streams(const ScheduleParams& params) {
  ScheduleStreams streams{params, loop_stage_mapping(params.p, 1), seq_one_f_one_b_device};
  streams.units_per_microbatch = sequence_splits(params);
  return streams;
}

}  // namespace ppsim
