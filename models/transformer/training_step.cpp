// SPDX-License-Identifier: Apache-2.0
#include "models/transformer/training_step.hpp"

#include <algorithm>
#include <cstdio>

#include "models/transformer/data_parallel.hpp"
#include "models/transformer/layer_costs.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/static_memory.hpp"

namespace ppsim {
namespace {

// FLOPs of the forward work recomputation re-runs in one step.
double recompute_flops(const TransformerSetup& setup) {
  const Architecture& arch = setup.arch;
  const TrainingLayout& layout = setup.layout;
  switch (layout.recompute) {
    case Recompute::kNone:
      return 0;
    case Recompute::kSelective: {
      // The attention core's two products, 4 s^2 q per sequence per layer (q = heads x head size,
      // the hidden size unless the model sets a wider head_dim); with MLA or a sliding window, the
      // scores' and the context's over the keys each query meets. The other modules re-run
      // memory-bound kernels only.
      if (!layout.recompute_modules.core_attn) return 0;
      const double s = static_cast<double>(layout.seq);
      const double q = static_cast<double>(std::int64_t{arch.heads} * head_size(arch));
      if (!has_mla(arch) && arch.sliding_window <= 0) {
        return 4 * s * s * q * arch.layers * static_cast<double>(layout.global_batch);
      }
      const double v = static_cast<double>(value_width(arch));
      double per_sequence = 0;
      for (int i = 0; i < arch.layers; ++i) {
        per_sequence += 2 * s * attention_keys(layout.seq, is_windowed_layer(arch, i) ? arch.sliding_window : 0) * (q + v);
      }
      return per_sequence * static_cast<double>(layout.global_batch);
    }
    case Recompute::kFull:
      return step_flops(arch, layout.seq, layout.global_batch, true) -
             step_flops(arch, layout.seq, layout.global_batch, false);
  }
  return 0;
}

// DualPipe's replicas: each device holds stages whose replicas run on other devices (stage j's in
// direction 0 on device j, in direction 1 on device p-1-j), and the replicas' gradients are summed
// before the optimizer steps. deepseek-ai/DualPipe's examples/example_dualpipe.py does it after
// DualPipe.step, summing each module's gradients with its mirror rank's. Modelled as one all-reduce,
// in the gradient dtype, over the devices sharing the device's stages, once their data-parallel reductions
// have ended; with the distributed optimizer each rank sums only its shard (Megatron's
// reduce-scatter leaves each rank one), as the partners' shards hold the same parameters. Sets
// figures.replica_reduce_time and returns when the last device's sum ends (0 without replicas).
double replica_reduce_end(const TransformerCostModel& model, TrainingFigures& figures) {
  const int pipelines = model.pipelines();
  if (pipelines < 2) return 0;
  const TransformerSetup& setup = model.setup();
  const std::vector<int>& stage_device = model.stage_device();
  const std::size_t length = stage_device.size() / static_cast<std::size_t>(pipelines);
  const bool sharded = setup.layout.distributed_optimizer && !setup.layout.fsdp;
  double end = 0;
  for (std::size_t d = 0; d < figures.collectives.size(); ++d) {
    // The devices holding replicas of device d's stages, d included.
    std::vector<int> group{static_cast<int>(d)};
    bool inter_node = false;
    for (std::size_t s = 0; s < stage_device.size(); ++s) {
      if (stage_device[s] != static_cast<int>(d)) continue;
      for (int k = 1; k < pipelines; ++k) {
        const int partner = stage_device[(s + static_cast<std::size_t>(k) * length) % stage_device.size()];
        if (std::find(group.begin(), group.end(), partner) != group.end()) continue;
        group.push_back(partner);
        inter_node = inter_node || model.crosses_nodes(static_cast<int>(d), partner);
      }
    }
    if (group.size() < 2) continue;  // its replicas share its device: nothing moves
    // With the distributed optimizer each rank sums its shard: the dense parameters' over d, the
    // routed experts' over the expert data-parallel group.
    const StaticMemory& memory = model.static_memory()[d];
    const double parameters =
        sharded ? (memory.parameter_count - memory.expert_parameter_count) / setup.layout.gradient_ranks() +
                      memory.expert_parameter_count / expert_data_parallel(setup.layout)
                : memory.parameter_count;
    const double bytes = gradient_bytes(setup.layout) * parameters;
    const double time =
        collective_time(setup.hardware, Collective::kAllReduce, bytes, static_cast<int>(group.size()), inter_node);
    double ready = 0;
    for (const int member : group) ready = std::max(ready, figures.collectives[static_cast<std::size_t>(member)].reduce_end);
    figures.replica_reduce_time = std::max(figures.replica_reduce_time, time);
    end = std::max(end, ready + time);
  }
  return end;
}

// "2.4%": a share of the memory, as the verdict writes it.
std::string share_text(double share) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100 * share);
  return buffer;
}

}  // namespace

std::string format_gib(std::int64_t bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(1 << 30));
  return buffer;
}

double dp_reduce_time(const TransformerSetup& setup, double parameter_count, double expert_parameter_count) {
  return gradient_reduce_time(setup, parameter_count,
                              parameter_count > 0 ? expert_parameter_count / parameter_count : 0);
}

double optimizer_step_time(const TransformerSetup& setup, double parameter_count, double fp8_weight_count,
                           double expert_parameter_count) {
  const TrainingLayout& layout = setup.layout;
  if (layout.fsdp) {
    // FSDP2's optimizer steps on its fp32 shards (fully_sharded.hpp): the gradient norm reads the
    // gradients (4 bytes), Adam reads gradient, parameter, m and v (16) and writes the last three
    // (12); no bf16 copy to write, as the next UNSHARD casts while it gathers.
    const double shard = parameter_count / layout.fsdp_shards();
    return setup.hardware.memory_time(4 * shard) + setup.hardware.memory_time(28 * shard);
  }
  // The distributed optimizer's shard: the dense parameters over d x c, the routed experts' over the
  // expert data-parallel group.
  const double shard = layout.distributed_optimizer
                           ? (parameter_count - expert_parameter_count) / layout.gradient_ranks() +
                                 expert_parameter_count / expert_data_parallel(layout)
                           : parameter_count;
  // Each step starts by zeroing the whole gradient buffer, not just the optimizer's shard
  // (megatron/training/training.py, train_step: model_chunk.zero_grad_buffer(), which clears
  // param_and_grad_buffer.py's grad_data): one write of every gradient on the device.
  double seconds = setup.hardware.memory_time(gradient_bytes(layout) * parameter_count);
  // Gradient norm for clipping: read the fp32 gradients once. Fused Adam: read the fp32 gradient,
  // master weight, m and v (16 bytes), write master, m and v (12). Then a separate kernel copies the
  // new fp32 master weights into the bf16 parameters (read 4, write 2: distrib_optimizer.py and
  // optimizer.py, _copy_main_params_to_model_params): 34 bytes in all.
  seconds += setup.hardware.memory_time(4 * shard) + setup.hardware.memory_time(28 * shard) +
             setup.hardware.memory_time(6 * shard);
  // fp16 trains under a loss scale: the main gradients are unscaled and checked for inf/NaN before
  // the step (megatron/core/optimizer/optimizer.py, MixedPrecisionOptimizer
  // ._unscale_main_grads_and_check_for_nan: read and write 4 bytes each).
  if (layout.precision == "fp16") seconds += setup.hardware.memory_time(8 * shard);
  // A 16-bit gradient buffer is first copied into the shard's fp32 main gradients (read 2, write 4
  // bytes: megatron/core/optimizer/distrib_optimizer.py, _copy_model_grads_to_main_grads).
  if (gradient_bytes(layout) < kGradientBytes) seconds += setup.hardware.memory_time(6 * shard);
  // FP8: the new weights are cast once to FP8 and its transpose (read 2, write 1 + 1 bytes), on the
  // step's first micro-batch, which the other micro-batches reuse (pass_costs.cpp, fp8_casts).
  if (fp8_weight_count > 0) seconds += setup.hardware.memory_time(4 * fp8_weight_count);
  // The distributed optimizer's parameter all-gather ends the step unless it overlaps the next
  // step's forwards (data_parallel.hpp).
  if (layout.distributed_optimizer && !layout.overlap_param_gather) {
    const double fp8_share = layout.fp8_param_gather && parameter_count > 0 ? fp8_weight_count / parameter_count : 0;
    seconds += parameter_gather_time(setup, parameter_count, fp8_share,
                                     parameter_count > 0 ? expert_parameter_count / parameter_count : 0);
  }
  return seconds;
}

TrainingFigures training_figures(const TransformerCostModel& model, double makespan,
                                 std::span<const double> device_end,
                                 std::span<const std::int64_t> peak_activation_bytes,
                                 const std::vector<StageTimes>& stage_times,
                                 std::span<const std::int64_t> unsharded_bytes) {
  const TransformerSetup& setup = model.setup();
  const TrainingLayout& layout = setup.layout;
  TrainingFigures figures;
  figures.model = setup.arch.name;
  figures.hardware = setup.hardware.name;
  figures.hardware_provenance = setup.hardware.provenance();
  figures.hardware_assumed = setup.hardware.efficiency_assumed;
  figures.gpus = layout.gpus();
  figures.global_batch = layout.global_batch;
  figures.tokens_per_step = layout.global_batch * layout.seq;
  figures.pipeline_time = makespan;
  figures.fsdp = layout.fsdp;

  // Without the simulation's stage times (a caller that has only the devices' ends), every stage's
  // gradients are taken to complete when its device's last op ends.
  std::vector<StageTimes> stages = stage_times;
  if (stages.size() != model.stages().size()) {
    stages.assign(model.stages().size(), StageTimes{});
    for (std::size_t s = 0; s < stages.size(); ++s) {
      const double end = device_end[static_cast<std::size_t>(model.stage_device()[s])];
      stages[s] = StageTimes{end, end, 0};
    }
  }
  // Each device reduces its own gradients beside its compute; the optimizer step waits for all of
  // them (the global gradient norm of clipping is an all-reduce over every rank).
  double reduced = makespan;
  for (std::size_t d = 0; d < device_end.size(); ++d) {
    // Under FSDP the lowered schedule's REDUCE_GRADs reduce the gradients inside the pipeline's time.
    DeviceCollectives collectives = layout.fsdp ? DeviceCollectives{.reduce_end = device_end[d]}
                                                : device_collectives(model, static_cast<int>(d), device_end[d], stages);
    double reduce = 0;
    for (const BucketCollective& bucket : collectives.reduce) reduce += bucket.end - bucket.start;
    figures.dp_reduce_time = std::max(figures.dp_reduce_time, reduce);
    figures.dp_reduce_exposed = std::max(figures.dp_reduce_exposed, collectives.reduce_end - makespan);
    figures.param_gather_exposed = std::max(figures.param_gather_exposed, collectives.gather_exposed);
    figures.optimizer_time =
        std::max(figures.optimizer_time, optimizer_step_time(setup, model.static_memory()[d].parameter_count,
                                                              model.static_memory()[d].fp8_weight_count,
                                                              model.static_memory()[d].expert_parameter_count));
    reduced = std::max(reduced, collectives.reduce_end);
    figures.collectives.push_back(std::move(collectives));
  }
  // Tied embeddings on two devices: the first stage's embedding and the last stage's LM head are
  // one weight, whose gradient the two sum once their data-parallel reductions are done
  // (megatron/core/distributed/finalize_model_grads.py, finalize_model_grads after finish_grad_sync:
  // _allreduce_word_embedding_grads, an all-reduce in the gradient dtype of the vocab/t x h gradient over the
  // embedding group of the first and last pipeline rank). A V-shape keeps both on one device.
  const int first = model.stage_device().front();
  const int last = model.stage_device().back();
  if (setup.arch.tied_embeddings && first != last) {
    const double embedding_gradient_bytes = gradient_bytes(setup.layout) * static_cast<double>(setup.arch.vocab) /
                                  setup.layout.tensor_parallel * static_cast<double>(setup.arch.hidden);
    figures.embedding_reduce_time =
        collective_time(setup.hardware, Collective::kAllReduce, embedding_gradient_bytes, 2, model.crosses_nodes(first, last));
    const double both_reduced =
        std::max(figures.collectives[static_cast<std::size_t>(first)].reduce_end,
                 figures.collectives[static_cast<std::size_t>(last)].reduce_end);
    reduced = std::max(reduced, both_reduced + figures.embedding_reduce_time);
  }
  reduced = std::max(reduced, replica_reduce_end(model, figures));
  figures.step_time = reduced + figures.optimizer_time + figures.param_gather_exposed;
  figures.tokens_per_second = static_cast<double>(figures.tokens_per_step) / figures.step_time;
  figures.samples_per_second = static_cast<double>(layout.global_batch) / figures.step_time;
  figures.model_flops_per_step = step_flops(setup.arch, layout.seq, layout.global_batch, false);
  figures.hardware_flops_per_step = figures.model_flops_per_step + recompute_flops(setup);
  const double peak = *setup.hardware.peak_flops(layout.precision) * static_cast<double>(figures.gpus) * figures.step_time;
  figures.mfu = figures.model_flops_per_step / peak;
  figures.hfu = figures.hardware_flops_per_step / peak;

  double slowest = 0;
  double sum = 0;
  for (std::size_t s = 0; s < model.stages().size(); ++s) {
    const TransformerStageCosts& stage = model.stages()[s];
    const double work = stage.times.forward.total() + stage.times.input_grad.total() + stage.times.weight_grad.total();
    slowest = std::max(slowest, work);
    sum += work;
    figures.stages.push_back(StageSummary{.stage = static_cast<int>(s),
                                          .device = model.stage_device()[s],
                                          .layers = stage.contents.layers,
                                          .embedding = stage.contents.embedding,
                                          .lm_head = stage.contents.lm_head,
                                          .forward = stage.times.forward.total(),
                                          .input_grad = stage.times.input_grad.total(),
                                          .weight_grad = stage.times.weight_grad.total(),
                                          .activation_bytes = model.activation_bytes(static_cast<int>(s))});
  }
  figures.stage_imbalance = sum > 0 ? slowest / (sum / static_cast<double>(model.stages().size())) : 1;

  figures.memory_capacity = setup.hardware.memory_capacity;
  const double headroom = layout.memory_headroom;
  const double usable = static_cast<double>(figures.memory_capacity) * (1 - headroom);
  std::int64_t most = -1;
  for (std::size_t d = 0; d < model.static_memory().size(); ++d) {
    const StaticMemory& fixed = model.static_memory()[d];
    DeviceMemory memory{.parameters = fixed.parameters,
                        .gradients = fixed.gradients,
                        .optimizer = fixed.optimizer,
                        .activations = d < peak_activation_bytes.size() ? peak_activation_bytes[d] : 0,
                        .unsharded = d < unsharded_bytes.size() ? unsharded_bytes[d] : 0,
                        .workspace = fixed.workspace};
    memory.total = memory.parameters + memory.gradients + memory.optimizer + memory.activations + memory.unsharded +
                   memory.workspace;
    memory.fits = static_cast<double>(memory.total) <= usable;
    figures.fits = figures.fits && memory.fits;
    if (memory.total > most) {
      most = memory.total;
      figures.most_memory_device = static_cast<int>(d);
    }
    figures.memory.push_back(memory);
  }
  figures.memory_verdict = "device " + std::to_string(figures.most_memory_device) + " needs " + format_gib(most) +
                           " of " + format_gib(figures.memory_capacity);
  const std::string kept = headroom > 0 ? " with " + share_text(headroom) + " kept free" : "";
  const std::int64_t free_bytes = figures.memory_capacity - most;
  const double free_share = figures.memory_capacity > 0 ? static_cast<double>(free_bytes) / static_cast<double>(figures.memory_capacity) : 0;
  if (!figures.fits) {
    figures.memory_verdict += ": does not fit" + kept;
  } else {
    figures.memory_verdict += ": fits" + kept;
    if (free_share < kTightHeadroom) {
      figures.memory_verdict += " (tight: " + format_gib(free_bytes) + ", " + share_text(free_share) + " headroom)";
    }
  }
  return figures;
}

}  // namespace ppsim
