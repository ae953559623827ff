// SPDX-License-Identifier: Apache-2.0
#pragma once
// A whole training step from a simulated pipeline: the pipeline's own time, then each device's
// data-parallel gradient reduction and the optimizer step; throughput, model FLOPs utilisation and
// memory per device against the hardware's capacity.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "models/transformer/data_parallel.hpp"
#include "models/transformer/transformer_cost_model.hpp"

namespace ppsim {

// A layout that fits with less than this share of a GPU's memory free is reported as tight: runs
// that reach 97% of the memory tend to fail on fragmentation or a transient peak, which no count of
// tensors sees.
inline constexpr double kTightHeadroom = 0.05;


struct DeviceMemory {
  std::int64_t parameters = 0;
  std::int64_t gradients = 0;
  std::int64_t optimizer = 0;
  std::int64_t activations = 0;  // the simulated peak of stashed activations
  // FSDP: what its unsharded parameters and gradients add to that peak, held beside the stashes
  std::int64_t unsharded = 0;
  std::int64_t workspace = 0;
  std::int64_t total = 0;
  bool fits = true;
};

// One stage's per-micro-batch costs, for the stage table of a report.
struct StageSummary {
  int stage = 0;
  int device = 0;
  int layers = 0;
  bool embedding = false;
  bool lm_head = false;
  double forward = 0;  // seconds
  double input_grad = 0;
  double weight_grad = 0;
  std::int64_t activation_bytes = 0;
};

struct TrainingFigures {
  std::string model;
  std::string hardware;
  std::string hardware_provenance;  // HardwareProfile::provenance(): where step_time's kernel times come from
  bool hardware_assumed = false;    // the profile's efficiency tables are the datasheet's assumptions
  std::int64_t gpus = 0;  // t * c * p * d
  std::int64_t global_batch = 0;
  std::int64_t tokens_per_step = 0;

  double pipeline_time = 0;          // the simulated makespan
  double dp_reduce_time = 0;         // longest data-parallel gradient reduction of any device (all buckets)
  double dp_reduce_exposed = 0;      // how far the reductions run past the pipeline's last op
  double optimizer_time = 0;         // longest optimizer step (and parameter all-gather) of any device
  double param_gather_exposed = 0;   // with overlap_param_gather: the next step's forwards waiting
  double embedding_reduce_time = 0;  // tied embeddings: the first and last stage's gradient all-reduce
  // Stages replicated over pipelines (DualPipe): the longest all-reduce of a device's gradients with
  // the devices holding the same stages' replicas (ranks r and p-1-r), after their data-parallel ones.
  double replica_reduce_time = 0;
  // FSDP (layout.fsdp): the longest total of any device's all-gathers (UNSHARD) and reduce-scatters
  // (REDUCE_GRAD) in a step; what of them the compute waited for is in pipeline_time.
  bool fsdp = false;
  double fsdp_gather_time = 0;
  double fsdp_reduce_time = 0;
  double step_time = 0;              // seconds per optimizer step
  double tokens_per_second = 0;
  double samples_per_second = 0;
  double model_flops_per_step = 0;     // 6N-style accounting without recomputation (PaLM's MFU)
  double hardware_flops_per_step = 0;  // with the recomputed forward work
  double mfu = 0;                      // model FLOPs / (step time * GPUs * dense peak)
  double hfu = 0;                      // hardware FLOPs / the same
  double stage_imbalance = 0;          // slowest stage's F + B over the mean stage's

  std::int64_t memory_capacity = 0;
  std::vector<DeviceMemory> memory;  // per pipeline device
  int most_memory_device = 0;
  bool fits = true;
  std::string memory_verdict;  // "device 0 needs 91.3 GiB of 80 GiB", said plainly

  std::vector<StageSummary> stages;
  std::vector<DeviceCollectives> collectives;  // per pipeline device: its communication stream

  // --layers-per-stage auto: the split the search chose (the stages' layers are in `stages`), as
  // Megatron-LM's --pipeline-model-parallel-layout, and how many splits it judged; empty otherwise.
  std::string pipeline_layout;
  std::vector<std::vector<std::string>> torchtitan_modules;  // the same split as torchtitan's module lists
  int splits_judged = 0;
};

// `device_end[d]` is when device d's last op ends and `peak_activation_bytes[d]` its simulated peak
// stash, with the pipeline's first op at time 0 and `makespan` its length; `stage_times` (one per
// stage, or empty) when each stage's gradients complete and its first forward starts;
// `unsharded_bytes[d]` (or empty) what FSDP's unsharded buffers add to device d's peak.
TrainingFigures training_figures(const TransformerCostModel& model, double makespan,
                                 std::span<const double> device_end,
                                 std::span<const std::int64_t> peak_activation_bytes,
                                 const std::vector<StageTimes>& stage_times = {},
                                 std::span<const std::int64_t> unsharded_bytes = {});

// Seconds of one device's data-parallel gradient reduction in one collective: fp32 gradients
// all-reduced over the d ranks (reduce-scattered with the distributed optimizer).
double dp_reduce_time(const TransformerSetup& setup, double parameter_count, double expert_parameter_count = 0);

// Seconds of one device's optimizer step: zeroing its whole gradient buffer, then the gradient-norm
// pass, the fused Adam update and the copy into the bf16 parameters over its shard (memory-bound:
// the buffer's bytes per gradient, then 38 per parameter of the shard, 8 more under fp16's loss
// scale; see the .cpp), plus the bf16 parameter all-gather of the distributed optimizer unless it
// overlaps the next step, and under FP8 the cast of `fp8_weight_count` linear weights to their FP8
// copies (4 bytes each).
// With expert parallelism, `expert_parameter_count` of them are routed experts' (their shard is over
// the expert data-parallel group).
double optimizer_step_time(const TransformerSetup& setup, double parameter_count, double fp8_weight_count = 0,
                           double expert_parameter_count = 0);

// "61.2 GiB": bytes in binary units with one decimal.
std::string format_gib(std::int64_t bytes);

}  // namespace ppsim
