// SPDX-License-Identifier: Apache-2.0
#pragma once
// Seconds of the forward (F), input-gradient (I) and weight-gradient (W) passes of one transformer
// layer, of the embedding and of the LM head, on one tensor-parallel rank for one micro-batch. Each
// kernel is timed on its own through the hardware profile: GEMMs by their FLOPs at the GEMM
// efficiency, memory-bound kernels by the bytes they move at the memory efficiency, tensor-parallel
// collectives as rings over the link that joins the t ranks.
//
// What each pass runs (T = s*b tokens, h hidden, f FFN width, kv = kv_heads * head size, t ranks;
// "R" is a tensor of T x h replicated over the ranks, T x h / t under sequence parallelism):
//   GEMMs (Megatron's column/row-parallel split): QKV T x h x (h + 2kv)/t, attention output
//     T x h/t x h, MLP in T x h x (gated ? 2f : f)/t (gate and up as one GEMM), MLP out T x f/t x h.
//     I (dX = dY W^T) and W (dW = X^T dY) run the same four shapes transposed: the same FLOPs.
//   Attention core, per rank b * a/t heads: unfused, two batched products in F (scores, context)
//     and four in I over the full s x s square, plus the softmax (read and write s^2 per head in F;
//     read two, write one in I). Flash attention (Dao 2023, FlashAttention-2) skips the masked half
//     of the causal square and keeps no s x s tensor; its backward recomputes the scores: 2 products
//     in F, 5 in I.
//   Memory-bound, bytes per pass: norms 4R in F (read, write) and 6R in I (read x and dY, write dX);
//     the two residual adds 6R each in F and I; the activation function 4Tf/t (GELU) or 6Tf/t
//     (SwiGLU) in F and 6Tf/t or 10Tf/t in I; rotary embeddings (models without learned positions)
//     4T(h + kv)/t in each. Dropout, when the model has it (Architecture::dropout), adds its mask
//     kernels: 1 byte per element after the attention output and the MLP, and the attention
//     probabilities' own dropout kernel without flash attention.
//   Collectives (t > 1), each on 2Th bytes: F all-reduces twice (after the attention output and
//     the MLP out GEMMs), I twice (the conjugate f operators); with sequence parallelism each becomes
//     a reduce-scatter plus an all-gather (Korthikanti et al. 2022, section 4.2.2).
//   Recomputation runs in I before the backward: selective re-runs the attention core's forward,
//     full re-runs the whole layer's forward, collectives included.
// W has only the four weight GEMMs. Layer norm weight gradients are small reductions charged to I.

#include "models/hardware/profile.hpp"
#include "models/transformer/architecture.hpp"
#include "models/transformer/training_layout.hpp"
#include "schedules/action.hpp"

namespace ppsim {

// One pass, split by kind of kernel so a report can say where the time goes.
struct PassTime {
  double gemm = 0;        // weight GEMMs (and the LM head)
  double attention = 0;   // score and context products, fused or not
  double memory = 0;      // memory-bound kernels
  double collective = 0;  // tensor-parallel all-reduce / reduce-scatter / all-gather
  double recompute = 0;   // forward work re-run in the backward (I only)
  double dispatch = 0;    // an MoE layer's token dispatch and combine under expert parallelism
  // Of the fields above, what an MoE layer spends between its dispatch and its combine: the routed
  // and shared experts' GEMMs and their activation function. Not a further term of total(): the
  // overlapped schedules' per-layer pairing (TransformerCostModel::overlap_time) needs it apart.
  double experts = 0;

  double total() const { return gemm + attention + memory + collective + recompute + dispatch; }
  PassTime& operator+=(const PassTime& other);
};

struct PassTimes {
  PassTime forward;
  PassTime input_grad;
  PassTime weight_grad;

  PassTimes& operator+=(const PassTimes& other);
  PassTimes scaled(double factor) const;  // every field times `factor` (a run of identical layers)
  double of(Op op) const;                 // the time of op F, B (I + W), I or W
};

// Seconds of a ring collective among `ranks` GPUs on the link of `profile` (intra-node when
// `inter_node` is false): `bytes` is the full tensor; each rank sends (ranks - 1) chunks of
// bytes / ranks per phase (one phase for reduce-scatter or all-gather, two for all-reduce), paying
// the link latency per step. The link efficiency is the one at the whole tensor's size, not at one
// chunk's: NCCL pipelines the steps of a ring, so its own cost model (src/graph/tuning.cc,
// ncclTopoGetAlgoTime) is one latency per step plus nBytes over an algorithm bandwidth that does not
// depend on the chunk, with the protocol (and so the achieved bandwidth) chosen by nBytes.
// Across nodes, a group with `ranks_per_node` of its GPUs in each node runs that many rings at once,
// each through its own GPU's NIC (rail-optimized nodes: one NIC per GPU), as NCCL builds one channel
// per NIC (src/graph/search.cc); the ring then moves at ranks_per_node NICs' bandwidth, up to the
// intra-node link's. NVIDIA's published multi-node bus bandwidths are that: "8x200Gbit/s IB cards
// ... 192GB/s AllReduce BusBW" on DGX A100 (NVIDIA/nccl issue 812), 8 x 24 GB/s.
double ring_collective_time(const HardwareProfile& profile, double bytes, int ranks, int phases, bool inter_node,
                            int ranks_per_node = 1);

// Seconds of an all-reduce of `bytes` among `ranks` GPUs of one node through NVLink SHARP: two
// latencies (reduce in the switch, multicast back) plus nccl-tests' bus bytes, 2(n-1)/n of the tensor,
// at the profile's NVLS bus bandwidth, ramped below large messages as the intra-node link table is.
// Infinite where the node has no NVLS or the group is below the size NCCL runs it for.
double nvls_all_reduce_time(const HardwareProfile& profile, double bytes, int ranks);

// Seconds of an all-to-all in which each of `ranks` GPUs holds `bytes` and sends 1/ranks of them to
// each rank (MoE's token dispatch and combine; NCCL runs it as concurrent point-to-point sends, not a
// ring). Inside a node every pair exchanges at once through the NVSwitch: (n - 1)/n of the bytes at
// the GPU's NVLink bandwidth. Across nodes (`ranks_per_node` of the group in each, rail-optimized:
// one NIC per GPU) the share bound for other nodes, (n - local)/n, leaves through the GPU's own NIC
// while the local share crosses NVLink; the slower of the two sets the time, after one latency.
double all_to_all_time(const HardwareProfile& profile, double bytes, int ranks, bool inter_node, int ranks_per_node);

// Seconds of `op` on a `bytes` tensor among `ranks` GPUs: from the profile's measured table for that
// operation and group size when the group fits in a node and the profile has one (collectives.hpp),
// otherwise derived as a ring (all-reduce two phases; reduce-scatter and all-gather one), an
// all-to-all as above, or, for an all-reduce inside a node with NVLink SHARP, NVLS when that is
// faster.
double collective_time(const HardwareProfile& profile, Collective op, double bytes, int ranks, bool inter_node,
                       int ranks_per_node = 1);

// Whether the t ranks of one tensor-parallel group span more than one node, and how many of them
// share a node (all of a node's GPUs when it does).
bool tensor_parallel_crosses_nodes(const HardwareProfile& profile, const TrainingLayout& layout);
int tensor_parallel_ranks_per_node(const HardwareProfile& profile, const TrainingLayout& layout);

// With `moe`, an MoE layer's: the router's GEMM, this rank's experts as grouped GEMMs over the token
// copies routed to them (top_k times its tokens, its sequence shard under tensor parallelism, times
// --moe-imbalance), the activation function over those copies, the routing, permute and unpermute
// kernels, the attention's tensor-parallel collectives only, and under expert parallelism the token
// dispatch (PassTime::dispatch, by --moe-dispatcher; pass_costs.cpp).
// With `windowed`, a sliding-window layer's: its attention products over the window's band.
PassTimes layer_pass_times(const Architecture& arch, const TrainingLayout& layout, const HardwareProfile& profile,
                           bool moe = false, bool windowed = false);
PassTimes embedding_pass_times(const Architecture& arch, const TrainingLayout& layout, const HardwareProfile& profile);

// What a multi-token prediction module adds around its layer (Megatron's MultiTokenPredictionLayer,
// megatron/core/transformer/multi_token_prediction.py): RMSNorms of the hidden state and of the
// shifted tokens' embedding, their concatenation, and the column-parallel 2h -> h/t projection
// (eh_proj), in each pass; it stashes the two norms' inputs and the projection's input.
struct MtpProjection {
  PassTimes times;
  double stash = 0;         // bytes F keeps for the backward
  double weight_stash = 0;  // of those, what W reads: the projection's input and output gradient
};
MtpProjection mtp_projection(const Architecture& arch, const TrainingLayout& layout, const HardwareProfile& profile);
PassTimes lm_head_pass_times(const Architecture& arch, const TrainingLayout& layout, const HardwareProfile& profile);

// The bytes context parallelism holds beside the stash while one layer's attention runs
// (ContextParallelTimes::buffer_bytes): the largest over the model's layer kinds; 0 without it.
double context_parallel_buffer_bytes(const Architecture& arch, const TrainingLayout& layout,
                                     const HardwareProfile& profile);

}  // namespace ppsim
