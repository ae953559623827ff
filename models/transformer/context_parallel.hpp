// SPDX-License-Identifier: Apache-2.0
#pragma once
// Context parallelism: one sequence split over c ranks, which exchange keys and values in every
// layer's attention, as Transformer Engine's context-parallel attention runs it
// (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py) under Megatron-LM's
// --cp-comm-type, and as torch's context_parallel (torchtitan) runs its ring.
//
// The sequence is cut into 2c chunks and rank i holds chunks i and 2c - 1 - i, so that every rank
// does the same causal work: 1/c of the layer's attention, the products pass_costs times with the
// rank's s/c queries against all s keys. What the exchange costs beyond that compute, per layer:
// - p2p (ring attention; Liu et al. 2023, "Ring Attention with Blockwise Transformers"): c steps; in
//   each the rank computes its queries against one block of keys and values while it passes that
//   block on to the next rank. Each step does the same work, 1/c of the rank's attention; the first
//   uses the rank's own block, so a pass takes A/c + (c - 1) max(A/c, X), X one block's transfer.
//   The backward passes the blocks' gradients along with them: twice the bytes.
// - a2a (Ulysses; Jacobs et al. 2023, DeepSpeed-Ulysses): an all-to-all turns the rank's s/c tokens
//   of every head into all s tokens of h/c heads before the attention (Q, K and V), another turns
//   the output back; the backward runs the same two. Nothing hides them.
// - allgather (Llama 3; Dubey et al. 2024, section 3.3.2): the ranks all-gather K and V, then each
//   computes its queries against all keys; the backward gathers them again (only the local chunk is
//   kept) and reduce-scatters their gradients. Exposed, as the paper says it is small at 8K.
// - a2a+p2p (Megatron's hierarchical CP): a2a within groups of the first size, a ring over the
//   second.
// Megatron orders ranks tp, cp, ep, dp, pp (parallel_state.py), so the c ranks are t apart and the
// group leaves the node once t c GPUs exceed one; across nodes every ring step crosses a NIC.

#include "models/hardware/profile.hpp"
#include "models/transformer/training_layout.hpp"

namespace ppsim {

// The widths of one token's attention tensors on one tensor-parallel rank, in elements.
struct AttentionWidths {
  double queries = 0;
  double keys = 0;
  double values = 0;
  double output = 0;  // the attention's output (heads x value head size)
};

// The exposed seconds of one layer's context-parallel exchange, beyond its attention compute.
struct ContextParallelTimes {
  double forward = 0;
  double backward = 0;
  // Bytes the exchange holds beside the stash while one layer's attention runs (received blocks,
  // gathered keys and values, the transposed heads), for the device's transient memory.
  double buffer_bytes = 0;
};

// `tokens`: the rank's tokens of one micro-batch (s b / c); `attention_forward` and
// `attention_backward`: that rank's attention compute in F and I, which a ring hides behind.
ContextParallelTimes context_parallel_times(const HardwareProfile& profile, const TrainingLayout& layout, double tokens,
                                            const AttentionWidths& widths, double attention_forward,
                                            double attention_backward);

// The ring's closed form: of `ranks` steps, the first on the rank's own block, each later one the
// longer of its block's compute (compute / ranks) and the block's transfer from the neighbour,
// which runs beside it; this returns what the ring adds to `compute`,
// (ranks - 1) max(0, transfer - compute / ranks). `ppsim formulas --check` compares it with a
// step-by-step replay of the ring (sim/ring_replay.hpp).
double ring_attention_exposed(double compute, double transfer, int ranks);

// Whether the c ranks of a context-parallel group span more than one node, and how many share one.
bool context_parallel_crosses_nodes(const HardwareProfile& profile, const TrainingLayout& layout, int ranks);
int context_parallel_ranks_per_node(const HardwareProfile& profile, const TrainingLayout& layout, int ranks);

}  // namespace ppsim
