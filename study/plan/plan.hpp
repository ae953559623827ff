// SPDX-License-Identifier: Apache-2.0
#pragma once
// ppsim plan: the whole layout for N GPUs. Every layout the frameworks would accept is enumerated
// (plan_space.hpp), those that cannot fit or cannot beat the best ones found are set aside by lower
// bounds (plan_bound.hpp), the rest are simulated in order of their bound, and the best K come back
// with what each wins on and how to launch it (plan_launch.hpp, plan_output.hpp).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/report/report.hpp"
#include "study/input/scenario.hpp"
#include "study/plan/plan_space.hpp"

namespace ppsim {

enum class PlanObjective { kStepTime, kP99StepTime, kGoodput, kTokensPerSecondPerGpu };

struct PlanSettings {
  std::int64_t gpus = 0;  // N, exactly t * c * p * d
  int top = 5;            // K
  PlanObjective objective = PlanObjective::kStepTime;
  unsigned threads = 1;   // simulations side by side; the result is the same for any number
  // Which frameworks' layouts: Megatron-LM's (DDP or the distributed optimizer) and torchtitan's
  // (FSDP2 or HSDP, torch's schedules).
  bool megatron = true;
  bool torchtitan = true;
  // Splits the layer-split search judges per finalist (--layers-per-stage auto inside plan); 0: none.
  // 32 keeps the search a fraction of the whole plan at 1,024 GPUs; --split-budget raises it.
  int split_budget = 32;
};

// "step_time" and the other names of --objective; InputError naming `source` otherwise.
PlanObjective parse_objective(const std::string& text, const std::string& source);
const char* objective_name(PlanObjective objective);

// One simulated layout and its figures.
struct PlanEntry {
  PlanLayout layout;
  Report report;           // its run (training figures; the samples and reliability where asked)
  double objective = 0;    // in the objective's own unit; lower is better after objective_sign
  double bound = 0;        // the lower bound on its step time that ordered the search
  double peak_memory = 0;  // bytes on its fullest device
  bool fits = true;
  std::string why;         // what it wins or loses on, against the best
};

struct PlanResult {
  Scenario base;  // the fixed settings, resolved (model, hardware, sequence, global batch)
  PlanSettings settings;
  std::int64_t enumerated = 0;       // combinations of the axes
  std::int64_t refused = 0;          // of them, refused by a framework's rule
  std::map<std::string, std::int64_t> refusals;  // rule -> layouts it refused
  std::int64_t over_memory = 0;      // set aside before simulation: their memory's lower bound is over
  std::int64_t pruned = 0;           // set aside by the bound on their step time
  std::int64_t simulated = 0;        // layouts whose figures come from a simulation
  std::int64_t pipelines = 0;        // simulations run: layouts that differ after the pipeline share one
  std::vector<PlanEntry> top;        // the best K that fit, best first
  std::vector<PlanEntry> memory_runners_up;  // faster than the best, but over memory
  // Every simulated layout's step time and peak memory, in search order: the Pareto page's points.
  struct Point {
    PlanLayout layout;
    double step_time = 0;
    double peak_memory = 0;
    bool fits = true;
    double bound = 0;  // the lower bound on its step that ordered the search
  };
  std::vector<Point> points;
};

// Plans `base` (a transformer study: --model, --hardware, --seq, --global-batch and anything else
// fixed; a layout flag that is given pins its axis) for settings.gpus GPUs.
PlanResult plan_layouts(const Scenario& base, const PlanSettings& settings);

}  // namespace ppsim
