// SPDX-License-Identifier: Apache-2.0
#include "models/transformer/transformer_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/transformer/data_parallel.hpp"
#include "models/transformer/fully_sharded.hpp"

namespace ppsim {
namespace {

constexpr double kActivationBytes = 2;

// Extra stash of the last stage per micro-batch: the final norm's input and the LM head's input
// (2 bytes per element of a T x h tensor, T x h / t under sequence parallelism), and the fp32 softmax
// of this rank's logits that the cross-entropy backward reads (Korthikanti et al. 2022, section 4.3,
// counts the same 4sbv/t). W keeps the head's input and the bf16 logit gradient.
struct HeadStash {
  double activation = 0;
  double weight = 0;
};

HeadStash lm_head_stash(const Architecture& arch, const TrainingLayout& layout) {
  const double tokens = static_cast<double>(layout.tokens_per_microbatch());
  const double t = layout.tensor_parallel;
  const bool sp = layout.sequence_parallel && layout.tensor_parallel > 1;
  const double input = kActivationBytes * tokens * static_cast<double>(arch.hidden) / (sp ? t : 1);
  const double logits = tokens * static_cast<double>(arch.vocab) / t;
  return HeadStash{.activation = 2 * input + 4 * logits, .weight = input + kActivationBytes * logits};
}

}  // namespace

TransformerCostModel::TransformerCostModel(TransformerSetup setup, std::vector<int> stage_device, int pipelines)
    : setup_(std::move(setup)), stage_device_(std::move(stage_device)), pipelines_(pipelines) {
  const Architecture& arch = setup_.arch;
  const TrainingLayout& layout = setup_.layout;
  const HardwareProfile& hardware = setup_.hardware;
  if (!hardware.peak_flops(layout.precision)) {
    throw std::invalid_argument(hardware.name + " has no " + layout.precision + " peak");
  }
  if (pipelines_ < 1 || stage_device_.size() % static_cast<std::size_t>(pipelines_) != 0) {
    throw std::invalid_argument("the stages do not split into " + std::to_string(pipelines_) + " pipelines");
  }
  for (const int device : stage_device_) {
    // The per-device tables below have layout.pipeline entries.
    if (device < 0 || device >= layout.pipeline) {
      throw std::invalid_argument("stage on device " + std::to_string(device) + " of a pipeline of " +
                                  std::to_string(layout.pipeline));
    }
  }
  StagePlan plan =
      plan_stages(arch, static_cast<int>(stage_device_.size()) / pipelines_, layout.layers_per_stage);
  if (!plan.error.empty()) throw std::invalid_argument("layers-per-stage " + plan.error);
  // Each further pipeline runs replicas of the same stages (DualPipe's second direction).
  const std::size_t logical = plan.stages.size();
  for (int k = 1; k < pipelines_; ++k) {
    for (std::size_t j = 0; j < logical; ++j) plan.stages.push_back(plan.stages[j]);
  }

  const PassTimes embedding = embedding_pass_times(arch, layout, hardware);
  const PassTimes head = lm_head_pass_times(arch, layout, hardware);
  const ActivationLayout activation = layout.activation_layout();
  // Dense layers and, in an MoE model, MoE layers: each kind's times and stashes.
  struct LayerKind {
    PassTimes times;
    double stash = 0;
    double weight_stash = 0;
  };
  auto kind = [&](bool moe, bool windowed = false) {
    LayerKind k{.times = layer_pass_times(arch, layout, hardware, moe, windowed),
                .stash = activation_bytes_per_layer(arch, activation, moe)};
    // With full recomputation the layer is rebuilt before I, so W needs what it needs without it; the
    // engine's stash model cannot keep more than F allocated, so W's share is capped at the stash.
    k.weight_stash = std::min(weight_grad_bytes_per_layer(arch, activation, moe), k.stash);
    return k;
  };
  const LayerKind dense = kind(false);
  const LayerKind moe = has_experts(arch) ? kind(true) : dense;
  // Sliding-window layers differ only in their attention's time.
  const bool windows = arch.sliding_window > 0;
  const LayerKind windowed_dense = windows ? kind(false, true) : dense;
  const LayerKind windowed_moe = windows && has_experts(arch) ? kind(true, true) : moe;
  auto kind_of = [&](int layer) -> const LayerKind& {
    const bool windowed = is_windowed_layer(arch, layer);
    if (is_moe_layer(arch, layer)) return windowed ? windowed_moe : moe;
    return windowed ? windowed_dense : dense;
  };
  // The engine's one stash fraction (for peak_stashed in micro-batch units): the whole model's.
  const double moe_layers = moe_layer_count(arch);
  const double dense_layers = arch.layers - moe_layers;
  const double model_stash = dense_layers * dense.stash + moe_layers * moe.stash;
  if (moe_layers == 0) {
    weight_stash_fraction_ = dense.stash > 0 ? dense.weight_stash / dense.stash : 0;
  } else {
    weight_stash_fraction_ =
        model_stash > 0 ? (dense_layers * dense.weight_stash + moe_layers * moe.weight_stash) / model_stash : 0;
  }
  const HeadStash head_stash = lm_head_stash(arch, layout);

  for (const StageContents& contents : plan.stages) {
    TransformerStageCosts costs;
    costs.contents = contents;
    const LayerKinds kinds = layer_kinds(arch, contents.first_layer, contents.layers);
    const int experts = kinds.moe + kinds.windowed_moe;
    const int plain = kinds.dense + kinds.windowed_dense;
    moe_layers_.push_back(experts);
    if (kinds.windowed_moe == 0) {
      mean_moe_layer_.push_back(moe.times);
    } else {
      PassTimes mean_moe = moe.times.scaled(kinds.moe);
      mean_moe += windowed_moe.times.scaled(kinds.windowed_moe);
      mean_moe_layer_.push_back(mean_moe.scaled(1.0 / experts));
    }
    costs.times = dense.times.scaled(kinds.dense);
    if (kinds.moe > 0) costs.times += moe.times.scaled(kinds.moe);
    if (kinds.windowed_dense > 0) costs.times += windowed_dense.times.scaled(kinds.windowed_dense);
    if (kinds.windowed_moe > 0) costs.times += windowed_moe.times.scaled(kinds.windowed_moe);
    costs.activation_bytes = plain * dense.stash + experts * moe.stash;
    costs.weight_stash_bytes = plain * dense.weight_stash + experts * moe.weight_stash;
    if (contents.embedding) costs.times += embedding;
    if (contents.lm_head) {
      costs.times += head;
      costs.activation_bytes += head_stash.activation;
      costs.weight_stash_bytes += head_stash.weight;
      if (arch.mtp_layers > 0) {
        // Each MTP module after the last layer: the embedding lookup of the shifted tokens, the two
        // norms and the 2h -> h projection, a layer of the last layer's kind, the shared head and loss.
        const LayerKind& layer = kind_of(arch.layers - 1);
        const MtpProjection projection = mtp_projection(arch, layout, hardware);
        PassTimes module = layer.times;
        module += projection.times;
        module += embedding;
        module += head;
        costs.times += module.scaled(arch.mtp_layers);
        costs.activation_bytes += arch.mtp_layers * (layer.stash + projection.stash + head_stash.activation);
        costs.weight_stash_bytes += arch.mtp_layers * (layer.weight_stash + projection.weight_stash + head_stash.weight);
      }
    }
    stages_.push_back(costs);
  }
  if (moe.times.forward.dispatch + moe.times.input_grad.dispatch > 0) {
    for (const TransformerStageCosts& stage : stages_) {
      const StageContents& contents = stage.contents;
      std::vector<Piece> pieces;
      if (contents.embedding) pieces.push_back({embedding, false});
      for (int layer = contents.first_layer; layer < contents.first_layer + contents.layers; ++layer) {
        pieces.push_back({kind_of(layer).times, is_moe_layer(arch, layer)});
      }
      if (contents.lm_head) {
        pieces.push_back({head, false});
        for (int k = 0; k < arch.mtp_layers; ++k) {
          PassTimes lead = embedding;
          lead += mtp_projection(arch, layout, hardware).times;
          pieces.push_back({lead, false});
          pieces.push_back({kind_of(arch.layers - 1).times, is_moe_layer(arch, arch.layers - 1)});
          pieces.push_back({head, false});
        }
      }
      pieces_.push_back(std::move(pieces));
    }
  }
  static_memory_ =
      static_memory_per_device(arch, layout, plan, stage_device_, layout.pipeline);
  // Context parallelism's blocks in flight during one layer's attention, beside the workspace.
  const double context_buffers = context_parallel_buffer_bytes(arch, layout, hardware);
  if (context_buffers > 0) {
    for (StaticMemory& device : static_memory_) device.workspace += std::llround(context_buffers);
  }
  if (layout.fsdp) {
    const bool alone = plan.stages.size() == 1;
    const double fp8_dense = layout.precision == "fp8" ? layer_linear_weight_count(arch, false, layout.tensor_parallel,
                                                                                     layout.expert_parallel)
                                                       : 0;
    const double fp8_moe = layout.precision == "fp8"
                               ? layer_linear_weight_count(arch, true, layout.tensor_parallel, layout.expert_parallel,
                                                           layout.expert_tensor_parallel)
                               : 0;
    for (const StageContents& contents : plan.stages) {
      // torchtitan's units: the embedding, each block, the final norm with the output head (and
      // here the MTP modules, which torchtitan's Llama has none of).
      std::vector<ShardUnit> units;
      auto part = [&](StageContents piece) {
        return stage_parameter_count(arch, piece, layout.tensor_parallel, alone, expert_model_shards(layout));
      };
      if (contents.embedding) units.push_back({part({.embedding = true}), 0, embedding, false});
      for (int layer = contents.first_layer; layer < contents.first_layer + contents.layers; ++layer) {
        const bool experts = is_moe_layer(arch, layer);
        units.push_back({part({.first_layer = layer, .layers = 1}), experts ? fp8_moe : fp8_dense,
                         kind_of(layer).times, true});
      }
      if (contents.lm_head) {
        PassTimes tail = head;
        if (arch.mtp_layers > 0) {
          PassTimes module = kind_of(arch.layers - 1).times;
          module += mtp_projection(arch, layout, hardware).times;
          module += embedding;
          module += head;
          tail += module.scaled(arch.mtp_layers);
        }
        units.push_back({part({.lm_head = true}), 0, tail, false});
      }
      if (layout.fsdp_unit == "stage") {
        double fp8_weights = 0;
        for (const ShardUnit& unit : units) fp8_weights += unit.fp8_weights;
        sharding_.push_back(fully_sharded_stage(setup_, part(contents), fp8_weights));
      } else {
        sharding_.push_back(fully_sharded_units(setup_, units, alone));
      }
    }
  }
  const bool sp = layout.sequence_parallel && layout.tensor_parallel > 1;
  message_bytes_ = kActivationBytes * static_cast<double>(layout.tokens_per_microbatch()) *
                   static_cast<double>(arch.hidden) / (sp ? layout.tensor_parallel : 1);
}

// SMs the token dispatch occupies while it runs beside compute: DeepEP's kernels, 20 (DeepSeek-V3
// technical report, section 3.2.2: "only 20 SMs are sufficient to fully utilize the bandwidths of
// IB and NVLink"); NCCL's all-to-all and all-gather, as many as a data-parallel collective's
// channels (kDataParallelCollectiveSms).
constexpr int kDeepEpSms = 20;

namespace {

// The backward half of a pair: I, I and W (a full B), or W alone.
PassTime backward_half(const PassTimes& times, Op op) {
  if (op == Op::kBackwardWeight) return times.weight_grad;
  PassTime half = times.input_grad;
  if (op == Op::kBackward) half += times.weight_grad;
  return half;
}

}  // namespace

// The pair runs as Megatron's combined step does (megatron/core/models/common/
// model_chunk_schedule_plan.py, TransformerModelChunkSchedulePlan.run; DeepSeek-V3 report, 3.2.1 and
// Figure 4): the forward's MoE layer i beside the backward's layer n-1-i, four phases each, the
// compute stream running one half's module while the communication stream moves the other's tokens:
//   F's attention (and router, permute)   beside  B's combine all-to-all (its gradient)
//   B's experts                           beside  F's dispatch all-to-all
//   F's experts                           beside  B's dispatch all-to-all
//   B's attention                         beside  F's combine all-to-all
// Each phase ends when both streams have (CUDA events join them), so a pair of layers takes the sum
// of four maxima, not the longer of two whole streams. The compute of a phase is slowed by the SMs
// the all-to-all takes while it runs: DeepEP's 20, NCCL's as a data-parallel collective's
// channels. Dense layers, the embedding, the LM head and MoE layers without a partner run alone.
TransformerCostModel::PairPhases TransformerCostModel::pair_phases(int forward_stage, Op backward_op,
                                                                  int backward_stage) const {
  PairPhases pair;
  pair.pairs = std::min(moe_layers_[static_cast<std::size_t>(forward_stage)],
                        moe_layers_[static_cast<std::size_t>(backward_stage)]);
  pair.layer_f = mean_moe_layer_[static_cast<std::size_t>(forward_stage)].forward;
  pair.layer_b = backward_half(mean_moe_layer_[static_cast<std::size_t>(backward_stage)], backward_op);
  const PassTime& layer_f = pair.layer_f;
  const PassTime& layer_b = pair.layer_b;
  if (pair.pairs == 0 || layer_f.dispatch + layer_b.dispatch <= 0) {
    pair.pairs = 0;
    return pair;
  }
  const GemmModel& gemm = setup_.hardware.gemm_model;
  const int sms = setup_.layout.moe_dispatcher == "deepep" ? kDeepEpSms : kDataParallelCollectiveSms;
  const double taken = gemm.sm_count > 0 ? static_cast<double>(std::min(sms, gemm.sm_count / 2)) / gemm.sm_count : 0;
  auto phase = [taken](double compute, double communication) {
    return std::max(compute + std::min(compute, communication) * taken, communication);
  };
  // Dispatch and combine move the same copies: half of a pass's token traffic each.
  const double f_attention = layer_f.total() - layer_f.dispatch - layer_f.experts;
  const double b_attention = layer_b.total() - layer_b.dispatch - layer_b.experts;
  pair.phase = {phase(f_attention, layer_b.dispatch / 2), phase(layer_b.experts, layer_f.dispatch / 2),
                phase(layer_f.experts, layer_b.dispatch / 2), phase(b_attention, layer_f.dispatch / 2)};
  const PassTime f = stages_[static_cast<std::size_t>(forward_stage)].times.forward;
  const PassTime b = backward_half(stages_[static_cast<std::size_t>(backward_stage)].times, backward_op);
  pair.alone = f.total() + b.total() - pair.pairs * (layer_f.total() + layer_b.total());
  return pair;
}

double TransformerCostModel::overlap_time(int forward_stage, Op backward_op, int backward_stage) const {
  const PairPhases pair = pair_phases(forward_stage, backward_op, backward_stage);
  if (pair.pairs == 0) return CostModel::overlap_time(forward_stage, backward_op, backward_stage);
  const double paired = pair.phase[0] + pair.phase[1] + pair.phase[2] + pair.phase[3];
  return pair.pairs * paired + pair.alone;
}

ShardingCosts TransformerCostModel::sharding(int stage) const {
  return sharding_.empty() ? ShardingCosts{} : sharding_[static_cast<std::size_t>(stage)];
}

double TransformerCostModel::compute_time(Op op, int stage) const {
  return stages_[static_cast<std::size_t>(stage)].times.of(op);
}

std::int64_t TransformerCostModel::activation_bytes(int stage) const {
  return std::llround(stages_[static_cast<std::size_t>(stage)].activation_bytes);
}

std::int64_t TransformerCostModel::weight_stash_bytes(int stage) const {
  return std::llround(stages_[static_cast<std::size_t>(stage)].weight_stash_bytes);
}

double TransformerCostModel::weight_stash_fraction() const { return weight_stash_fraction_; }

std::int64_t TransformerCostModel::message_bytes(int, int) const { return std::llround(message_bytes_); }

std::int64_t TransformerCostModel::static_bytes(int device) const {
  return static_memory_[static_cast<std::size_t>(device)].total();
}

// Megatron-LM orders ranks tensor-parallel fastest, then context-parallel, data-parallel, pipeline
// (rank = tp + t * (cp + c * (dp + d * pp))), so pipeline device i's first GPU is rank i * t * c * d,
// and devices_per_node consecutive ranks share a node.
bool TransformerCostModel::crosses_nodes(int a, int b) const {
  const std::int64_t stride = std::int64_t{setup_.layout.tensor_parallel} * setup_.layout.gradient_ranks();
  const std::int64_t per_node = setup_.hardware.devices_per_node;
  return (a * stride) / per_node != (b * stride) / per_node;
}

LinkParams TransformerCostModel::link(int src_device, int dst_device) const {
  const HardwareProfile& hardware = setup_.hardware;
  const bool inter = crosses_nodes(src_device, dst_device);
  // Every message between stages has the same size, so the link's efficiency at that size turns
  // the datasheet bandwidth into the one these messages see.
  const double efficiency = (inter ? hardware.inter_link : hardware.intra_link).at(message_bytes_);
  return LinkParams{.latency = inter ? hardware.inter_node_latency : hardware.intra_node_latency,
                    .bandwidth = (inter ? hardware.inter_node_bandwidth : hardware.intra_node_bandwidth) * efficiency};
}

}  // namespace ppsim
