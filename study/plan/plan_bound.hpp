// SPDX-License-Identifier: Apache-2.0
#pragma once
// Lower bounds that let ppsim plan set a layout aside without simulating it: on its step time (no
// device can finish before it has done its share of the compute, nor the last device before the
// first micro-batch has reached it) and on its fullest device's memory (no device holds less than
// the average of the static memory plus one micro-batch's stash), the optimizer's step over the average
// device's parameters added to the first. Both hold for any schedule and any
// layer split; they come from one cost model of the whole model on one stage, shared by every layout
// with the same per-layer costs.

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "models/transformer/transformer_cost_model.hpp"
#include "study/input/scenario.hpp"
#include "study/plan/plan_space.hpp"

namespace ppsim {

struct PlanBounds {
  double step_time = 0;  // seconds: the step cannot be shorter
  double memory = 0;     // bytes: the fullest device holds at least this much
};

class PlanBounder {
 public:
  explicit PlanBounder(const Scenario& base) : base_(base) {}
  PlanBounds of(const PlanLayout& layout);

 private:
  struct WholeModel {
    double compute = 0;          // F + B of every layer, the embedding and the head, per micro-batch
    double layer_forward = 0;    // the cheapest layer's F
    double layer_compute = 0;    // the cheapest layer's F + B
    double layer_backward = 0;   // the cheapest layer's B
    double static_bytes = 0;     // parameters, gradients and optimizer state of the whole model
    double workspace = 0;
    double stash = 0;            // one micro-batch's stash through the whole model
    double parameters = 0;       // on one tensor-parallel rank (StaticMemory::parameter_count)
    double fp8_weights = 0;
    double expert_parameters = 0;
    std::shared_ptr<const TransformerSetup> setup;  // the one-stage layout, for the optimizer's step
  };
  // What the whole model costs on one stage: the same for every p, v and schedule.
  const WholeModel& whole_model(const PlanLayout& layout);

  const Scenario& base_;
  using Key = std::tuple<int, int, int, int, int, std::int64_t, int, bool, bool, int>;
  std::map<Key, WholeModel> cache_;
  std::map<Key, double> overlap_hidden_;  // the whole model's all-to-all time, which overlapped pairs may hide
};

}  // namespace ppsim
