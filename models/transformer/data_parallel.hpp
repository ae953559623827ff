// SPDX-License-Identifier: Apache-2.0
#pragma once
// The data-parallel collectives of one step as Megatron-LM's DistributedDataParallel issues them,
// placed against the simulated pipeline (megatron/core/distributed/distributed_data_parallel.py,
// DistributedDataParallel.__init__ and _make_backward_post_hook; param_and_grad_buffer.py,
// _ParamAndGradBucketGroup.start_grad_sync and start_param_sync; pipeline_parallel/schedules.py,
// which enables gradient sync only for the last micro-batch's backward, per model chunk):
//
// - Gradient reduction. With overlap_grad_reduce, each model chunk's gradients are cut into buckets
//   of bucket_size parameters (default max(40M, 1M * d)) in the order the backward produces them,
//   the reverse of the parameters; only the first pipeline rank's first chunk is bucketed, every
//   other chunk is one bucket ("not on the critical path"). A bucket's reduce-scatter (all-reduce
//   without the distributed optimizer) starts when the chunk's last gradient op has produced its
//   gradients, on the communication stream, one collective at a time, beside the compute stream.
//   Without overlap, each chunk's gradients are reduced in one collective after the device's last op
//   (finalize_model_grads). What runs past the device's last op is exposed.
// - Parameter all-gather (distributed optimizer). Without overlap_param_gather it runs after the
//   optimizer step, exposed. With it, the buckets are gathered in forward order while the next step
//   begins, and a forward that needs a bucket not yet gathered waits: the exposed part is the
//   largest lateness of any bucket against the moment its chunk's first forward reaches it.

#include <vector>

#include "models/transformer/transformer_cost_model.hpp"

namespace ppsim {

// What the simulation tells of one stage (sim's StageFigures, copied so models need not know sim).
struct StageTimes {
  double gradient_start = 0;  // the start of the stage's last B or W, which completes its gradients
  double gradient_end = 0;
  double first_forward = 0;  // the start of its first F
};

// One collective on a device's communication stream.
struct BucketCollective {
  int stage = 0;
  double parameters = 0;  // on this tensor-parallel rank
  double ready = 0;       // gradients complete, or (all-gather) the step's start
  double start = 0;
  double end = 0;
};

struct DeviceCollectives {
  std::vector<BucketCollective> reduce;  // in the order they ran
  double reduce_end = 0;                 // the last reduction's end (the device's end if none)
  double reduce_exposed = 0;             // reduce_end past the device's last op
  std::vector<BucketCollective> gather;  // with overlap_param_gather: the next step's all-gathers
  double gather_exposed = 0;             // how late the latest bucket is for its forward
  // Compute time lost to the SMs the overlapped collectives took while they ran beside it
  // (kDataParallelCollectiveSms): in reduce_end and gather_exposed already.
  double contention = 0;
};

// SMs a data-parallel collective's NCCL kernel occupies while it overlaps compute: 16, the figure
// Megatron-Bridge's performance guide gives for DP collectives on H100 ("#SM for DP collectives =
// 16", docs/performance-guide.md, the NVTE_*_LAYERNORM_SM_MARGIN advice); NCCL's NVLS also runs 16
// channels (one CTA each) on Hopper (src/transport/nvls.cc, NVLS_NCHANNELS_SM90). For `seconds` of a
// collective beside compute on a GPU of `sm_count` SMs, the compute loses seconds * 16 / sm_count
// (its work runs on the other SMs meanwhile); 0 without an SM count (no GEMM shape model).
inline constexpr int kDataParallelCollectiveSms = 16;
double collective_contention(const HardwareProfile& profile, double overlapped_seconds);

// Whether a device's d-way data-parallel ring leaves its node, and how many of the group's ranks
// share a node (the rings that run through that many NICs at once; pass_costs.hpp).
bool data_parallel_crosses_nodes(const TransformerSetup& setup);
int data_parallel_ranks_per_node(const TransformerSetup& setup);
// Compressed gradient communication, a what-if (--grad-compression):
// - "fp8": FP8-LM (Peng et al. 2023, arXiv 2310.18313, section 2.2): the gradients are scaled by
//   their amax and cast to FP8 for the reduction, 1 byte each on the wire. The compression kernels,
//   memory-bound: the amax reads the buffer, the cast reads it again and writes 1 byte; after the
//   reduction the cast back reads 1 byte and writes the buffer's dtype: (3 g + 2) bytes per
//   gradient for a buffer of g bytes per gradient.
// - "1bit": 1-bit Adam (Tang et al. 2021, arXiv 2102.02888; DeepSpeed's OnebitAdam and
//   deepspeed/runtime/comm/nccl.py, NcclBackend.compressed_allreduce): after its warm-up each worker
//   sends the signs of its error-compensated momentum with one scale per chunk, in an all-to-all
//   and an all-gather of 1/8 byte per parameter each, as many bytes as a two-phase ring all-reduce
//   of P/8. It keeps fp32 error feedback for all its momentum (4 bytes per parameter) and for the
//   1/d it serves (4/d), beside the optimizer. Compression reads momentum and error and writes error
//   and signs (4 + 4 + 4 + 1/8 bytes per parameter); the server does the same on its 1/d after
//   summing the d workers' signs (d/8 more). It does not combine with the distributed optimizer.
// Both are charged on each bucket's collective, on its stream.
bool gradients_compressed(const TrainingLayout& layout);

// Seconds of one collective over the d data-parallel ranks of `parameters`' gradients (reduce-scatter
// with the distributed optimizer, all-reduce without) and of their all-gather: bf16, except the
// `fp8_share` of them that are FP8 parameters under --fp8-param-gather (1 byte each). The
// `expert_share` of them that are routed experts' run as a second collective over the expert
// data-parallel group (t d / e ranks; none when e = t d).
double gradient_reduce_time(const TransformerSetup& setup, double parameters, double expert_share = 0);
double parameter_gather_time(const TransformerSetup& setup, double parameters, double fp8_share = 0,
                             double expert_share = 0);

// Megatron's default bucket size in parameters for d data-parallel ranks: max(40M, 1M * d).
double default_bucket_parameters(int data_parallel);

// A chunk of `parameters` cut into buckets of at most `bucket` parameters, in the order its gradients
// are produced: full buckets first, then the rest (the first parameters, produced last).
std::vector<double> bucket_split(double parameters, double bucket);

// The data-parallel collectives of pipeline device `device`, whose last op ends at `device_end`.
DeviceCollectives device_collectives(const TransformerCostModel& model, int device, double device_end,
                                     const std::vector<StageTimes>& stages);

}  // namespace ppsim
