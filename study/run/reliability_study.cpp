// SPDX-License-Identifier: Apache-2.0
#include "study/run/reliability_study.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/report/format.hpp"
#include "study/common/errors.hpp"

namespace ppsim {
namespace {

// About a minute of simulation at some 100 M events a second (tests/noise_test.cpp runs 10^4).
constexpr double kMaxSimulatedEvents = 5e9;

// Where the blocking checkpoint time came from, as an error names it.
std::string checkpoint_time_source(const Scenario& scenario, const HardwareProfile& hardware, double crc, double write) {
  const Scenario::Failures& f = scenario.failures;
  if (f.async_checkpoint) return scenario.source_of("hardware") + ": " + hardware.name + "'s host_link bandwidth";
  if (f.checkpoint_time) return scenario.source_of("checkpoint-time");
  if (crc > write - crc) return scenario.source_of("hardware") + ": " + hardware.name + "'s crc32_rate";
  return scenario.source_of("storage-bandwidth");
}

// A figure that is not finite, a goodput of 0 or no whole step trained is refused with the input
// that made it so, never printed: the largest of a checkpoint, a restart and a step against the
// system MTBF, or a training time shorter than a step.
void refuse_unusable(const Scenario& scenario, const ReliabilityReport& report, const std::string& checkpoint_source) {
  const std::string figure = unusable_reliability(report.figures);
  if (figure.empty()) return;
  const CheckpointPlan& plan = report.plan;
  const double system_mtbf = plan.mtbf / plan.gpus;
  if (figure == "steps" && plan.wall_time && (*plan.wall_time < plan.step_time || report.figures.steps < 0)) {
    throw InputError(scenario.source_of("train-time") + ": " + format_figure(*plan.wall_time) + " s " +
                     (report.figures.steps < 0 ? "holds more steps than ppsim can count" : "is shorter than one step") +
                     " of " + format_figure(plan.step_time) + " s; give --train-steps N");
  }
  struct Cause {
    std::string source;
    double seconds;
    const char* what;
  };
  const Cause causes[] = {{checkpoint_source, plan.checkpoint_time + plan.write_time, "a checkpoint"},
                          {scenario.source_of("restart-time"), plan.restart_time, "a restart"},
                          {scenario.source_of("mtbf"), plan.step_time, "a step"}};
  const Cause* worst = &causes[0];
  for (const Cause& cause : causes) {
    if (!(cause.seconds <= worst->seconds)) worst = &cause;
  }
  throw InputError(worst->source + ": " + worst->what + " of " + format_figure(worst->seconds) +
                   " s against a system MTBF of " + format_figure(system_mtbf) + " s (--mtbf over " +
                   format_figure(plan.gpus) + " GPUs): the run would almost never get past a failure (" +
                   (figure == "steps"     ? std::string("not one whole step would train")
                    : figure == "goodput" ? std::string("its goodput would be 0")
                                          : "its " + figure + " would not be a finite number") +
                   ")");
}

}  // namespace

double checkpoint_bytes_per_gpu(const TransformerCostModel& model) {
  const TrainingLayout& layout = model.setup().layout;
  const double d = layout.data_parallel;
  double most = 0;
  for (const StaticMemory& device : model.static_memory()) {
    // FSDP holds only its shard of both; the distributed optimizer only of the optimizer state. A
    // replicated state is written once across its replicas: the dense parameters' d of them, the
    // routed experts' their expert data-parallel group (t d / e).
    double replicas = d;
    if (device.expert_parameter_count > 0 && device.parameter_count > 0) {
      const double experts = device.expert_parameter_count / device.parameter_count;
      replicas = 1 / ((1 - experts) / d + experts / expert_data_parallel(layout));
    }
    const double parameters =
        layout.fsdp ? static_cast<double>(device.parameters) : static_cast<double>(device.parameters) / replicas;
    const double optimizer = layout.fsdp || layout.distributed_optimizer
                                 ? static_cast<double>(device.optimizer)
                                 : static_cast<double>(device.optimizer) / replicas;
    most = std::max(most, parameters + optimizer);
  }
  return most;
}

ReliabilityReport reliability_report(const Scenario& scenario, const TransformerCostModel& model,
                                     const TrainingFigures& training, const SampleFigures* samples) {
  const Scenario::Failures& f = scenario.failures;
  const HardwareProfile& hardware = model.setup().hardware;
  ReliabilityReport report;
  report.checkpoint_bytes = checkpoint_bytes_per_gpu(model);
  CheckpointPlan& plan = report.plan;
  plan.gpus = static_cast<double>(model.setup().layout.gpus());
  plan.mtbf = *f.mtbf;
  plan.step_time = samples != nullptr && samples->has_training ? samples->step_time.mean : training.step_time;
  plan.restart_time = f.restart_time;
  plan.every_steps = f.checkpoint_every;
  if (f.train_steps) {
    plan.steps = f.train_steps;
  } else {
    plan.wall_time = f.train_time;
  }
  if (scenario.sources.count("restart-time") == 0) report.assumed.push_back("restart-time");
  if (!f.checkpoint_time && scenario.sources.count("storage-bandwidth") == 0) report.assumed.push_back("storage-bandwidth");
  double crc = 0;
  if (f.checksum_crc32) {
    if (!(hardware.crc32_rate > 0)) {
      throw InputError(scenario.source_of("checksum") + ": " + hardware.name +
                       " has no measured crc32_rate in its profile (ppsim-calibrate measures it)");
    }
    crc = report.checkpoint_bytes / hardware.crc32_rate;
  }
  const double write = f.checkpoint_time ? *f.checkpoint_time : report.checkpoint_bytes / f.storage_bandwidth + crc;
  if (f.async_checkpoint) {
    // Only the copy to host memory blocks (torch.distributed.checkpoint.async_save stages the state
    // dict in host memory, then writes it from a background thread).
    if (!(hardware.host_bandwidth > 0)) {
      throw InputError(scenario.source_of("async-checkpoint") + ": " + hardware.name +
                       " has no host_link bandwidth in its profile, which the snapshot to host runs at");
    }
    plan.checkpoint_time = report.checkpoint_bytes / hardware.host_bandwidth;
    plan.write_time = write;
  } else {
    plan.checkpoint_time = write;
  }
  report.figures = plan_checkpoints(plan);
  refuse_unusable(scenario, report, checkpoint_time_source(scenario, hardware, crc, write));
  if (samples != nullptr) {
    // A simulated run takes a step of its loop per checkpoint segment and per failure.
    const double per_run = static_cast<double>(report.figures.steps) / static_cast<double>(report.figures.checkpoint_every) +
                           2 * report.figures.failures_expected;
    if (per_run * static_cast<double>(scenario.samples) > kMaxSimulatedEvents) {
      throw InputError(scenario.source_of("samples") + ": " + std::to_string(scenario.samples) +
                       " simulated training runs of " + format_figure(per_run) +
                       " checkpoints and failures each are above the limit of " + format_figure(kMaxSimulatedEvents) +
                       " events; take fewer samples, or checkpoint less often");
    }
    const ReliabilitySamples runs = simulate_checkpoints(plan, report.figures, scenario.samples, scenario.seed);
    report.samples = runs.n;
    report.sampled_wall_time = distribution_of(runs.wall_times);
    report.sampled_goodput = runs.mean_goodput;
    report.sampled_failures = runs.mean_failures;
  }
  return report;
}

}  // namespace ppsim
