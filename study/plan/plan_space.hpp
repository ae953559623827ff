// SPDX-License-Identifier: Apache-2.0
#pragma once
// The layouts ppsim plan considers: every combination of tensor, context, expert (and expert
// tensor), pipeline and data parallelism for exactly N GPUs, with the virtual pipeline, micro-batch,
// recomputation, optimizer sharding (Megatron's distributed optimizer, or torchtitan's FSDP and HSDP)
// and schedule, kept only when the framework that would run it accepts it.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/hardware/profile.hpp"
#include "models/transformer/architecture.hpp"
#include "models/transformer/layer_costs.hpp"
#include "study/input/scenario.hpp"

namespace ppsim {

struct PlanLayout {
  int t = 1;
  int c = 1;
  int e = 1;
  int etp = 1;
  int p = 1;
  int v = 1;
  int d = 1;
  std::int64_t b = 1;  // micro-batch
  Recompute recompute = Recompute::kNone;
  bool distributed_optimizer = false;
  bool fsdp = false;      // torchtitan's FSDP2 over d * c (with replicate > 1: HSDP)
  int replicate = 1;      // HSDP replicas
  std::string schedule;
  std::vector<int> layers_per_stage;  // empty: as even as possible (Megatron's and torchtitan's default)

  bool torchtitan() const { return fsdp; }
  // The layout's short name: "t4 c1 p8 v5 d2 b1 none dist-opt interleaved-1f1b".
  std::string label() const;
};

// Megatron-LM's split with --account-for-embedding-in-pipeline-split and
// --account-for-loss-in-pipeline-split (torchtitan's default split weighs the embedding and the output
// the same way): the embedding and the loss count as one layer each, so the first and last stages
// hold one layer fewer than the others. Empty where (layers + 2) does not divide into `stages`.
std::vector<int> accounted_split(int layers, int stages);

// The scenario that runs `layout` on top of the fixed settings of `base` (resolved: its model and
// hardware are kept), m following from the global batch.
Scenario layout_scenario(const Scenario& base, const PlanLayout& layout);

struct PlanSpace {
  std::vector<PlanLayout> layouts;  // every accepted layout, in enumeration order
  std::int64_t enumerated = 0;
  std::map<std::string, std::int64_t> refusals;  // the rule (its one line, numbers elided) -> count
  std::int64_t refused = 0;
};

struct PlanAxes {
  std::int64_t gpus = 0;
  bool megatron = true;
  bool torchtitan = true;
};

// Every layout of `base` (resolved) on axes.gpus GPUs. The layout flags `base` was given (-t, -p,
// -v, --context-parallel, -e, --expert-tensor-parallel, -b, --recompute, --distributed-optimizer,
// --fsdp, --data-parallel-replicate, -s, -d) pin their axes. Each candidate passes the checks a
// `ppsim run` of it would (the frameworks' rules, transformer_study.cpp, and the schedule's own), and
// tensor parallelism stays inside one node.
PlanSpace enumerate_layouts(const Scenario& base, const PlanAxes& axes);

}  // namespace ppsim
