// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cost model of a real training run: op times, stashes, messages and static memory derived from
// a transformer architecture, a training layout and a hardware profile, for a program whose stages
// sit on devices as `stage_device` says. Everything is computed once, in the constructor.

#include <array>
#include <string>
#include <vector>

#include "models/cost_model.hpp"
#include "models/hardware/profile.hpp"
#include "models/transformer/architecture.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/stage_plan.hpp"
#include "models/transformer/static_memory.hpp"
#include "models/transformer/training_layout.hpp"

namespace ppsim {

struct TransformerSetup {
  Architecture arch;
  TrainingLayout layout;
  HardwareProfile hardware;
};

// One stage's costs, per micro-batch on one tensor-parallel rank.
struct TransformerStageCosts {
  StageContents contents;
  PassTimes times;
  double activation_bytes = 0;    // stashed by F until the backward
  double weight_stash_bytes = 0;  // the part W still needs after I
};

class TransformerCostModel final : public CostModel {
 public:
  // Throws std::invalid_argument when the layer split does not fit (plan_stages' error) or the
  // profile has no peak for the layout's precision; the config layer checks both first.
  // `pipelines` (Program::num_pipelines): the stages form that many pipelines over the same layers,
  // stage k*S + j a replica of stage j (DualPipe's two directions); the layers split over S stages,
  // and a device holds the parameters, gradients and optimizer state of every replica it runs.
  TransformerCostModel(TransformerSetup setup, std::vector<int> stage_device, int pipelines = 1);

  double compute_time(Op op, int stage) const override;
  std::int64_t activation_bytes(int stage) const override;
  std::int64_t weight_stash_bytes(int stage) const override;
  double weight_stash_fraction() const override;
  std::int64_t message_bytes(int from_stage, int to_stage) const override;
  std::int64_t static_bytes(int device) const override;
  LinkParams link(int src_device, int dst_device) const override;
  // With layout.fsdp, each stage's FSDP2 collectives and buffers (fully_sharded.hpp); none otherwise.
  ShardingCosts sharding(int stage) const override;
  // An overlapped forward and backward (DualPipe's overlapped_forward_backward, torch's OVERLAP_F_B,
  // Megatron's combined 1F1B): layer by layer, each half's MoE all-to-alls run on a communication
  // stream beside the other half's compute (transformer_cost_model.cpp). A dense model has nothing
  // to hide: the sum of the halves.
  double overlap_time(int forward_stage, Op backward_op, int backward_stage) const override;
  // Under expert parallelism, where each MoE layer's dispatch and combine fall inside an op or an
  // overlapped pair, for the timelines' all-to-all lanes (expert_exchanges.cpp).
  bool has_exchanges() const override { return !pieces_.empty(); }
  void exchanges(const Action& action, const Action* partner, std::vector<Exchange>& out) const override;

  const TransformerSetup& setup() const { return setup_; }
  const std::vector<TransformerStageCosts>& stages() const { return stages_; }
  const std::vector<StaticMemory>& static_memory() const { return static_memory_; }
  const std::vector<int>& stage_device() const { return stage_device_; }
  int pipelines() const { return pipelines_; }
  // Whether pipeline devices a and b sit in different nodes (see the layout note in the .cpp).
  bool crosses_nodes(int a, int b) const;

 private:
  TransformerSetup setup_;
  std::vector<int> stage_device_;
  int pipelines_ = 1;
  std::vector<TransformerStageCosts> stages_;
  // Per stage: its MoE layers and their mean passes (windowed and full ones differ), which
  // overlap_time pairs layer by layer.
  std::vector<int> moe_layers_;
  std::vector<PassTimes> mean_moe_layer_;
  // An overlapped pair as overlap_time runs it: `pairs` layer pairs of four phases each (0 when
  // nothing overlaps), then the layers and parts that run alone.
  struct PairPhases {
    int pairs = 0;
    PassTime layer_f;  // the mean MoE layer's forward and backward half
    PassTime layer_b;
    std::array<double, 4> phase{};
    double alone = 0;
  };
  PairPhases pair_phases(int forward_stage, Op backward_op, int backward_stage) const;
  // The parts of a stage's forward in order (the embedding, each layer, the head, MTP modules'
  // parts) and whether each is an MoE layer, for exchanges(); empty when no layer exchanges tokens.
  struct Piece {
    PassTimes times;
    bool moe = false;
  };
  std::vector<std::vector<Piece>> pieces_;
  std::vector<StaticMemory> static_memory_;
  std::vector<ShardingCosts> sharding_;  // per stage, with layout.fsdp
  double message_bytes_ = 0;
  double weight_stash_fraction_ = 0;
};

}  // namespace ppsim
