// SPDX-License-Identifier: Apache-2.0
#include "study/plan/plan_bound.hpp"

#include <algorithm>
#include <limits>

#include "models/transformer/pass_costs.hpp"
#include "models/transformer/training_step.hpp"
#include "models/transformer/transformer_cost_model.hpp"
#include "schedules/registry.hpp"
#include "study/run/transformer_study.hpp"

namespace ppsim {
namespace {

// Schedules whose steady state runs a forward and a backward as one overlapped op, hiding MoE
// all-to-alls behind the other half's compute (TransformerCostModel::overlap_time): their busy time
// may be below the sum of F and B by the dispatch time.
bool overlaps_pairs(std::string_view schedule) {
  return schedule == "combined-1f1b" || schedule == "dualpipev" || schedule == "dualpipe";
}

// Schedules whose backward is one op (not split into I and W): after the last device's last backward
// the gradient still passes back through p - 1 stages, and no W is left to fill that wait.
bool whole_backward(std::string_view schedule) {
  return schedule == "1f1b" || schedule == "interleaved-1f1b" || schedule == "gpipe" || schedule == "looped-bfs";
}

// Schedules of one pipeline, whose last device waits for the first micro-batch to pass p - 1 stages;
// the bidirectional ones (DualPipe, Chimera, BitPipe) start both ends at once.
bool one_pipeline(std::string_view schedule) {
  const ScheduleInfo* info = find_schedule(schedule);
  return info == nullptr || info->pipelines == 1;
}

}  // namespace

const PlanBounder::WholeModel& PlanBounder::whole_model(const PlanLayout& layout) {
  const Key key{layout.t, layout.c, layout.e, layout.etp, static_cast<int>(layout.recompute), layout.b, layout.d,
                layout.distributed_optimizer, layout.fsdp, layout.replicate};
  if (auto found = cache_.find(key); found != cache_.end()) return found->second;
  PlanLayout one_stage = layout;
  one_stage.p = 1;
  one_stage.v = 1;
  one_stage.schedule = "1f1b";
  one_stage.layers_per_stage.clear();
  const TransformerSetup setup = transformer_setup(layout_scenario(base_, one_stage));
  const TransformerCostModel model(setup, {0}, 1);
  WholeModel whole;
  whole.compute = model.compute_time(Op::kForward, 0) + model.compute_time(Op::kBackward, 0);
  const StaticMemory& memory = model.static_memory().front();
  whole.static_bytes = static_cast<double>(memory.total() - memory.workspace);
  whole.workspace = static_cast<double>(memory.workspace);
  whole.stash = static_cast<double>(model.activation_bytes(0));
  whole.parameters = memory.parameter_count;
  whole.fp8_weights = memory.fp8_weight_count;
  whole.expert_parameters = memory.expert_parameter_count;
  whole.setup = std::make_shared<const TransformerSetup>(setup);
  const Architecture& arch = setup.arch;
  const LayerKinds kinds = layer_kinds(arch, 0, arch.layers);
  whole.layer_forward = std::numeric_limits<double>::infinity();
  whole.layer_compute = std::numeric_limits<double>::infinity();
  whole.layer_backward = std::numeric_limits<double>::infinity();
  double dispatch = 0;
  for (const auto& [count, moe, windowed] :
       {std::tuple{kinds.dense, false, false}, std::tuple{kinds.moe, true, false},
        std::tuple{kinds.windowed_dense, false, true}, std::tuple{kinds.windowed_moe, true, true}}) {
    if (count == 0) continue;
    const PassTimes times = layer_pass_times(arch, setup.layout, setup.hardware, moe, windowed);
    whole.layer_forward = std::min(whole.layer_forward, times.of(Op::kForward));
    whole.layer_compute = std::min(whole.layer_compute, times.of(Op::kForward) + times.of(Op::kBackward));
    whole.layer_backward = std::min(whole.layer_backward, times.of(Op::kBackward));
    if (moe) {
      dispatch += count * (times.forward.dispatch + times.input_grad.dispatch + times.weight_grad.dispatch);
      // What an overlapped pair may hide of one layer: its all-to-alls.
      whole.layer_compute -= times.forward.dispatch + times.input_grad.dispatch + times.weight_grad.dispatch;
    }
  }
  overlap_hidden_[key] = dispatch;
  return cache_.emplace(key, whole).first->second;
}

PlanBounds PlanBounder::of(const PlanLayout& layout) {
  const WholeModel& whole = whole_model(layout);
  const Key key{layout.t, layout.c, layout.e, layout.etp, static_cast<int>(layout.recompute), layout.b, layout.d,
                layout.distributed_optimizer, layout.fsdp, layout.replicate};
  const double hidden = overlaps_pairs(layout.schedule) ? overlap_hidden_[key] : 0.0;
  const double m = static_cast<double>(base_.layout.global_batch) / static_cast<double>(layout.b * layout.d);
  const int p = layout.p;
  PlanBounds bounds;
  // The devices share the model's compute: the busiest does at least the average.
  bounds.step_time = m * std::max(0.0, whole.compute - hidden) / p;
  if (p > 1 && one_pipeline(layout.schedule)) {
    // The last device starts after the first micro-batch's forward through p - 1 chunks of at least
    // q layers each, and then does all its own chunks' work.
    const int q = base_.resolved_model->layers / (p * layout.v);
    // With a whole backward, the last device's last B is followed by p - 1 more, one per stage below.
    const double drain = whole_backward(layout.schedule) ? (p - 1) * q * whole.layer_backward : 0.0;
    const double fill =
        (p - 1) * q * whole.layer_forward + m * layout.v * q * std::max(0.0, whole.layer_compute) + drain;
    bounds.step_time = std::max(bounds.step_time, fill);
  }
  // After the pipeline, the optimizer steps over the fullest device's shard, at least the average's.
  bounds.step_time += optimizer_step_time(*whole.setup, whole.parameters / p, whole.fp8_weights / p,
                                          whole.expert_parameters / p);
  bounds.memory = whole.static_bytes / p + whole.workspace + whole.stash / p;
  return bounds;
}

}  // namespace ppsim
