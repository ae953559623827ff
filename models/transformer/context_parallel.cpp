// SPDX-License-Identifier: Apache-2.0
#include "models/transformer/context_parallel.hpp"

#include <algorithm>

#include "models/transformer/pass_costs.hpp"

namespace ppsim {
namespace {

constexpr double kActivationBytes = 2;  // K, V and their gradients move in bf16

}  // namespace

double ring_attention_exposed(double compute, double transfer, int ranks) {
  if (ranks <= 1) return 0;
  const double block = compute / ranks;
  return (ranks - 1) * std::max(0.0, transfer - block);
}

bool context_parallel_crosses_nodes(const HardwareProfile& profile, const TrainingLayout& layout, int ranks) {
  return std::int64_t{layout.tensor_parallel} * ranks > profile.devices_per_node;
}

int context_parallel_ranks_per_node(const HardwareProfile& profile, const TrainingLayout& layout, int ranks) {
  return std::clamp(profile.devices_per_node / std::max(1, layout.tensor_parallel), 1, std::max(1, ranks));
}

ContextParallelTimes context_parallel_times(const HardwareProfile& profile, const TrainingLayout& layout, double tokens,
                                            const AttentionWidths& widths, double attention_forward,
                                            double attention_backward) {
  ContextParallelTimes times;
  const int c = layout.context_parallel;
  if (c <= 1) return times;
  // One block of keys and values: the rank's tokens, both tensors.
  const double block = tokens * (widths.keys + widths.values) * kActivationBytes;
  // Q, K and V before an a2a's attention and the output after it.
  const double heads_in = tokens * (widths.queries + widths.keys + widths.values) * kActivationBytes;
  const double heads_out = tokens * widths.output * kActivationBytes;
  auto a2a = [&](int ranks) {
    const bool inter = context_parallel_crosses_nodes(profile, layout, ranks);
    const int local = context_parallel_ranks_per_node(profile, layout, ranks);
    return all_to_all_time(profile, heads_in, ranks, inter, local) + all_to_all_time(profile, heads_out, ranks, inter, local);
  };
  // Ring steps cross a node boundary once the whole group does (c ranks t apart); every step waits
  // for its slowest hop.
  const bool ring_inter = context_parallel_crosses_nodes(profile, layout, c);
  if (layout.cp_comm == "p2p") {
    const double transfer = profile.message_time(block, ring_inter);
    times.forward = ring_attention_exposed(attention_forward, transfer, c);
    times.backward = ring_attention_exposed(attention_backward, profile.message_time(2 * block, ring_inter), c);
    // The block being computed and the one arriving; in the backward, their gradients too.
    times.buffer_bytes = 4 * block;
  } else if (layout.cp_comm == "a2a") {
    times.forward = a2a(c);
    times.backward = a2a(c);
    times.buffer_bytes = c > 1 ? heads_in + heads_out : 0;
  } else if (layout.cp_comm == "allgather") {
    const bool inter = ring_inter;
    const int local = context_parallel_ranks_per_node(profile, layout, c);
    const double gathered = c * block;
    const double gather = collective_time(profile, Collective::kAllGather, gathered, c, inter, local);
    times.forward = gather;
    times.backward = gather + collective_time(profile, Collective::kReduceScatter, gathered, c, inter, local);
    times.buffer_bytes = 2 * gathered;  // all keys and values, then all their gradients
  } else {  // a2a+p2p
    const int inner = layout.hierarchical_cp.size() == 2 ? layout.hierarchical_cp[0] : 1;
    const int outer = layout.hierarchical_cp.size() == 2 ? layout.hierarchical_cp[1] : c;
    // After the inner a2a a rank holds inner x its tokens of 1/inner of the heads: the same block bytes.
    const double transfer = profile.message_time(block, ring_inter);
    times.forward = a2a(inner) + ring_attention_exposed(attention_forward, transfer, outer);
    times.backward = a2a(inner) + ring_attention_exposed(attention_backward, profile.message_time(2 * block, ring_inter), outer);
    times.buffer_bytes = (inner > 1 ? heads_in + heads_out : 0) + 4 * block;
  }
  return times;
}

}  // namespace ppsim
