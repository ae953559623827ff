// SPDX-License-Identifier: Apache-2.0
#include "study/plan/plan.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <system_error>
#include <thread>

#include "models/transformer/training_step.hpp"
#include "sim/engine.hpp"
#include "study/common/errors.hpp"
#include "study/plan/plan_bound.hpp"
#include "study/plan/plan_explain.hpp"
#include "study/run/program_cache.hpp"
#include "study/run/study.hpp"
#include "study/run/transformer_study.hpp"

namespace ppsim {
namespace {

// Layouts taken from the bound-ordered list at a time. Fixed, not tied to the thread count, so that
// which layouts are simulated, and so every byte of the output, is the same for any -j.
constexpr std::size_t kBatch = 16;

// Objectives other than the step (the p99 of sampled steps, goodput) are found among this many times
// K of the layouts with the shortest deterministic steps: sampling every layout would cost more than
// the whole search.
constexpr int kFinalistsPerPlace = 3;

// The runners-up over memory shown: those that need at most this much of the memory limit.
constexpr double kRunnerUpMemory = 1.25;

// The layout with the distributed optimizer's choice taken out: layouts that agree on it run the
// same pipeline (the optimizer acts after the pipeline's last op), so they share one simulation.
PlanLayout pipeline_of(PlanLayout layout) {
  layout.distributed_optimizer = false;
  return layout;
}

std::string pipeline_key(const PlanLayout& layout) {
  const PlanLayout pipeline = pipeline_of(layout);
  std::string key = pipeline.label();
  for (const int layers : pipeline.layers_per_stage) key += "," + std::to_string(layers);
  return key;
}

double peak_memory_of(const Report& report) {
  double peak = 0;
  for (const DeviceMemory& device : report.training->memory) peak = std::max(peak, static_cast<double>(device.total));
  return peak;
}

// Lower is better in every objective: throughputs are negated.
double objective_value(const Report& report, PlanObjective objective, std::int64_t gpus) {
  const TrainingFigures& training = *report.training;
  switch (objective) {
    case PlanObjective::kStepTime:
      return training.step_time;
    case PlanObjective::kP99StepTime:
      return report.samples ? report.samples->step_time.p99 : training.step_time;
    case PlanObjective::kGoodput:
      return report.reliability ? -training.tokens_per_second * report.reliability->figures.goodput
                                : -training.tokens_per_second;
    case PlanObjective::kTokensPerSecondPerGpu:
      return -training.tokens_per_second / static_cast<double>(gpus);
  }
  return training.step_time;
}

// The run of one layout; InputError or ScheduleError when a check the enumeration could not make
// refuses it (a size limit).
Report simulate_layout(const Scenario& base, const PlanLayout& layout, Engine& engine) {
  const Scenario scenario =
      resolve_transformer_scenario_with(layout_scenario(base, layout), base.resolved_model, base.resolved_hardware);
  return simulate_schedule(scenario, layout.schedule, false, engine);
}

struct Outcome {
  std::optional<Report> report;
  std::string refusal;
};

// Runs `jobs` (each writes its own slot) on up to `threads` threads; the slots, not the order the
// threads ran in, carry the results.
void run_parallel(std::size_t jobs, unsigned threads, const std::function<void(std::size_t, Engine&)>& job) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    Engine engine;
    for (std::size_t i = next++; i < jobs; i = next++) job(i, engine);
  };
  const unsigned extra = static_cast<unsigned>(std::min<std::size_t>(threads, jobs)) - (jobs > 0 ? 1 : 0);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < extra; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // fewer threads: the calling one takes their jobs
    }
  }
  worker();
  for (std::thread& thread : pool) thread.join();
}

void check_plan_input(const Scenario& given, const PlanSettings& settings) {
  if (given.model.empty()) throw InputError("--model: plan needs a model (a preset or a .json file)");
  if (settings.gpus < 1 || settings.gpus > (std::int64_t{1} << 20)) {
    throw InputError("--gpus: needs a GPU count from 1 to 1048576, got " + std::to_string(settings.gpus));
  }
  if (settings.top < 1 || settings.top > 100) {
    throw InputError("--top: needs 1 to 100 layouts, got " + std::to_string(settings.top));
  }
  if (given.sources.count("global-batch") == 0) {
    throw InputError("--global-batch: plan needs the global batch (sequences per step), which every layout keeps");
  }
  if (given.sources.count("m") > 0) {
    throw InputError(given.source_of("m") + ": plan derives m from --global-batch for each layout; drop it");
  }
  if (given.schedule_file.size() > 0) {
    throw InputError(given.source_of("schedule-file") + ": plan chooses among the registry's schedules");
  }
  if (given.sources.count("layers-per-stage") > 0 && !given.auto_layer_split) {
    throw InputError(given.source_of("layers-per-stage") +
                     ": plan chooses each layout's split (as auto does); give auto or nothing");
  }
  if (given.timeline) throw InputError(given.source_of("timeline") + ": plan prints no timelines; run a layout for one");
  if (settings.objective == PlanObjective::kP99StepTime && given.samples == 0) {
    throw InputError("--objective: p99_step_time needs --samples N (and some noise: --jitter)");
  }
  if (settings.objective == PlanObjective::kGoodput && !given.failures.mtbf) {
    throw InputError("--objective: goodput needs --mtbf (and --train-time or --train-steps)");
  }
}

}  // namespace

PlanObjective parse_objective(const std::string& text, const std::string& source) {
  if (text == "step_time") return PlanObjective::kStepTime;
  if (text == "p99_step_time") return PlanObjective::kP99StepTime;
  if (text == "goodput") return PlanObjective::kGoodput;
  if (text == "tokens_per_second_per_gpu") return PlanObjective::kTokensPerSecondPerGpu;
  throw InputError(source + ": '" + text + "' is not step_time, p99_step_time, goodput or tokens_per_second_per_gpu");
}

const char* objective_name(PlanObjective objective) {
  switch (objective) {
    case PlanObjective::kStepTime:
      return "step_time";
    case PlanObjective::kP99StepTime:
      return "p99_step_time";
    case PlanObjective::kGoodput:
      return "goodput";
    case PlanObjective::kTokensPerSecondPerGpu:
      return "tokens_per_second_per_gpu";
  }
  return "step_time";
}

PlanResult plan_layouts(const Scenario& given, const PlanSettings& settings) {
  check_plan_input(given, settings);
  PlanResult result;
  result.settings = settings;
  // The bulk of the search runs each layout once, deterministically; samples and failures are for
  // the finalists.
  Scenario bulk = given;
  // Runs at 97% of the memory tend to fail on fragmentation or a transient peak, which no count of
  // tensors sees: a plan keeps kTightHeadroom free unless told otherwise.
  if (given.sources.count("memory-headroom") == 0) bulk.layout.memory_headroom = kTightHeadroom;
  bulk.samples = 0;
  bulk.failures = {};
  bulk.auto_layer_split = false;
  // The model and hardware are found once; the layout's rules are each candidate's, so a fixed
  // setting that only some layouts allow (--tp-comm-overlap needs t > 1) narrows the plan instead of
  // refusing it.
  for (const auto& [key, source] : bulk.sources) {
    if (is_cost_setting(key)) {
      throw InputError(source + ": cannot be combined with --model, which derives F, B, W, memory and links");
    }
  }
  result.base = bulk;
  result.base.resolved_model = std::make_shared<const Architecture>(resolve_architecture(bulk));
  result.base.resolved_hardware = std::make_shared<const HardwareProfile>(resolve_hardware(bulk));
  result.base.programs = std::make_shared<ProgramCache>();
  const Scenario& base = result.base;
  check_scenario(base);

  PlanAxes axes;
  axes.gpus = settings.gpus;
  axes.megatron = settings.megatron;
  axes.torchtitan = settings.torchtitan;
  PlanSpace space = enumerate_layouts(base, axes);
  result.enumerated = space.enumerated;
  result.refused = space.refused;
  result.refusals = std::move(space.refusals);

  const HardwareProfile& hardware = *base.resolved_hardware;
  const double limit = static_cast<double>(hardware.memory_capacity) * (1 - base.layout.memory_headroom);
  PlanBounder bounder(base);
  struct Candidate {
    std::size_t index;
    PlanBounds bounds;
  };
  std::vector<Candidate> candidates;
  std::vector<Candidate> over_memory;
  for (std::size_t i = 0; i < space.layouts.size(); ++i) {
    const Candidate candidate{i, bounder.of(space.layouts[i])};
    (candidate.bounds.memory > limit ? over_memory : candidates).push_back(candidate);
  }
  result.over_memory = static_cast<std::int64_t>(over_memory.size());
  auto by_bound = [](const Candidate& a, const Candidate& b) {
    return a.bounds.step_time < b.bounds.step_time ||
           (a.bounds.step_time == b.bounds.step_time && a.index < b.index);
  };
  std::sort(candidates.begin(), candidates.end(), by_bound);
  std::sort(over_memory.begin(), over_memory.end(), by_bound);

  const bool step_ranked =
      settings.objective == PlanObjective::kStepTime || settings.objective == PlanObjective::kTokensPerSecondPerGpu;
  const std::size_t keep = static_cast<std::size_t>(settings.top) * (step_ranked ? 1 : kFinalistsPerPlace);
  std::map<std::string, Report> pipelines;  // pipeline key -> its simulated run
  std::map<std::string, std::size_t> pipeline_runs;  // pipeline key -> the layout that ran it
  std::vector<PlanEntry> fitting;            // kept sorted by step time, then search order
  std::vector<PlanEntry> too_big;            // simulated, over memory
  auto kth_step = [&] {
    return fitting.size() < keep ? std::numeric_limits<double>::infinity()
                                 : fitting[keep - 1].report.training->step_time;
  };
  // Simulates the layouts of `batch` (sharing pipelines) and returns their entries, in order.
  auto evaluate = [&](const std::vector<Candidate>& batch) {
    std::vector<std::string> keys;
    std::vector<std::size_t> to_run;  // one layout per pipeline not yet simulated
    for (std::size_t i = 0; i < batch.size(); ++i) {
      keys.push_back(pipeline_key(space.layouts[batch[i].index]));
      if (pipelines.count(keys[i]) > 0) continue;
      if (std::any_of(to_run.begin(), to_run.end(), [&](std::size_t j) { return keys[j] == keys[i]; })) continue;
      to_run.push_back(i);
    }
    std::vector<Outcome> outcomes(to_run.size());
    run_parallel(to_run.size(), settings.threads, [&](std::size_t job, Engine& engine) {
      try {
        outcomes[job].report = simulate_layout(base, space.layouts[batch[to_run[job]].index], engine);
      } catch (const InputError& error) {
        outcomes[job].refusal = error.what();
      } catch (const ScheduleError& error) {
        outcomes[job].refusal = error.what();
      }
    });
    std::map<std::string, std::string> refused;
    for (std::size_t job = 0; job < to_run.size(); ++job) {
      const std::size_t i = to_run[job];
      ++result.pipelines;
      if (outcomes[job].report) {
        outcomes[job].report->scenario = nlohmann::ordered_json();
        pipelines.emplace(keys[i], std::move(*outcomes[job].report));
        pipeline_runs[keys[i]] = batch[i].index;
      } else {
        refused.emplace(keys[i], outcomes[job].refusal);
      }
    }
    std::vector<PlanEntry> entries;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const PlanLayout& layout = space.layouts[batch[i].index];
      if (auto why = refused.find(keys[i]); why != refused.end()) {
        ++result.refused;
        ++result.refusals[why->second];
        continue;
      }
      const Report& run = pipelines.at(keys[i]);
      PlanEntry entry;
      entry.layout = layout;
      entry.bound = batch[i].bounds.step_time;
      // The run's own layout, or its sibling with the other optimizer: the same pipeline's times.
      const bool simulated_itself = pipeline_runs[keys[i]] == batch[i].index;
      entry.report = simulated_itself
                         ? run
                         : with_training_of(run, resolve_transformer_scenario_with(layout_scenario(base, layout),
                                                                                   base.resolved_model,
                                                                                   base.resolved_hardware));
      entry.peak_memory = peak_memory_of(entry.report);
      entry.fits = entry.report.training->fits;
      entry.objective = entry.report.training->step_time;
      ++result.simulated;
      result.points.push_back({layout, entry.report.training->step_time, entry.peak_memory, entry.fits, entry.bound});
      entries.push_back(std::move(entry));
    }
    return entries;
  };
  auto step_order = [](const PlanEntry& a, const PlanEntry& b) {
    return a.report.training->step_time < b.report.training->step_time;
  };

  std::size_t next = 0;
  while (next < candidates.size()) {
    const double kth = kth_step();
    if (candidates[next].bounds.step_time >= kth) break;
    std::vector<Candidate> batch;
    while (next < candidates.size() && batch.size() < kBatch && candidates[next].bounds.step_time < kth) {
      batch.push_back(candidates[next++]);
    }
    for (PlanEntry& entry : evaluate(batch)) {
      if (!entry.fits) {
        too_big.push_back(std::move(entry));
        continue;
      }
      fitting.insert(std::upper_bound(fitting.begin(), fitting.end(), entry, step_order), std::move(entry));
      if (fitting.size() > keep) fitting.pop_back();
    }
  }
  result.pruned = static_cast<std::int64_t>(candidates.size() - next);

  // The finalists: each one's layer split searched (--layers-per-stage auto within a budget), and
  // under objectives beyond the step, their samples or failures run.
  const bool refine = settings.split_budget > 0;
  run_parallel(fitting.size(), settings.threads, [&](std::size_t i, Engine& engine) {
    PlanEntry& entry = fitting[i];
    Scenario scenario = resolve_transformer_scenario_with(layout_scenario(base, entry.layout),
                                                          base.resolved_model, base.resolved_hardware);
    scenario.samples = given.samples;
    scenario.failures = given.failures;
    scenario.noise = given.noise;
    const bool split = refine && entry.layout.p * entry.layout.v > 1;
    if (split) {
      scenario.auto_layer_split = true;
      scenario.auto_layer_split_budget = settings.split_budget;
    }
    if (!split && scenario.samples == 0 && !scenario.failures.mtbf) return;
    try {
      Report report = simulate_schedule(scenario, entry.layout.schedule, false, engine);
      report.scenario = nlohmann::ordered_json();
      report.provenance = nlohmann::ordered_json();
      if (split && report.training->fits &&
          report.training->step_time < entry.report.training->step_time * (1 - 1e-12)) {
        for (const StageSummary& stage : report.training->stages) entry.layout.layers_per_stage.push_back(stage.layers);
      } else if (split) {
        report.training->pipeline_layout.clear();
        report.training->splits_judged = 0;
        report.training->torchtitan_modules.clear();
        if (scenario.samples == 0 && !scenario.failures.mtbf) return;
        scenario.auto_layer_split = false;
        report = simulate_schedule(scenario, entry.layout.schedule, false, engine);
        report.scenario = nlohmann::ordered_json();
      report.provenance = nlohmann::ordered_json();
      }
      entry.report = std::move(report);
      entry.peak_memory = peak_memory_of(entry.report);
    } catch (const InputError&) {
      // The split search or the samples refused: the entry keeps its deterministic run.
    } catch (const ScheduleError&) {
    }
  });
  for (PlanEntry& entry : fitting) entry.objective = objective_value(entry.report, settings.objective, settings.gpus);
  std::stable_sort(fitting.begin(), fitting.end(),
                   [](const PlanEntry& a, const PlanEntry& b) { return a.objective < b.objective; });
  if (fitting.size() > static_cast<std::size_t>(settings.top)) fitting.resize(static_cast<std::size_t>(settings.top));
  result.top = std::move(fitting);

  // The runners-up over memory: layouts that would have beaten the best one had they fitted, the
  // simulated ones first, then those set aside by their memory bound, simulated now.
  if (!result.top.empty()) {
    const double best = result.top.front().report.training->step_time;
    // Only those within kRunnerUpMemory of the limit: a layout that needs five GPUs' memory is no
    // near miss, and a few GiB are what --memory-headroom, recomputation of one module or a smaller
    // workspace may find.
    const double near = limit * kRunnerUpMemory;
    std::vector<PlanEntry> faster;
    for (PlanEntry& entry : too_big) {
      if (entry.report.training->step_time < best && entry.peak_memory <= near) faster.push_back(std::move(entry));
    }
    std::vector<Candidate> unseen;
    for (const Candidate& candidate : over_memory) {
      if (candidate.bounds.step_time >= best || unseen.size() >= static_cast<std::size_t>(settings.top)) break;
      if (candidate.bounds.memory <= near) unseen.push_back(candidate);
    }
    for (PlanEntry& entry : evaluate(unseen)) {
      if (entry.report.training->step_time < best && entry.peak_memory <= near) faster.push_back(std::move(entry));
    }
    std::stable_sort(faster.begin(), faster.end(), step_order);
    if (faster.size() > 3) faster.resize(3);
    for (PlanEntry& entry : faster) entry.objective = objective_value(entry.report, settings.objective, settings.gpus);
    result.memory_runners_up = std::move(faster);
  }
  explain_plan(result);
  return result;
}

}  // namespace ppsim
