// SPDX-License-Identifier: Apache-2.0
#pragma once
// Failures, checkpoints and goodput of a training run, from the step the simulation gives. Failures
// are a Poisson process: each of the G GPUs fails at rate 1/mtbf, the job at rate 1/M with
// M = mtbf / G, the system MTBF. The job checkpoints every tau seconds of work, each checkpoint
// blocking the step for delta, and a failure loses the work since the last durable checkpoint and
// costs a restart R (detection, rescheduling, reload), itself interruptible by a failure.
//
// Closed forms: J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart
// dumps", Future Generation Computer Systems 22(3), 2006:
//   optimum (eq. 37)   tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / 2M) + (1/9) delta / 2M] - delta
//                      for delta < 2M, and tau = M beyond;
//   wall time (eq. 20) T_w = M e^{R/M} (e^{(tau + delta)/M} - 1) T_s / tau for T_s seconds of work.
// Young (1974, CACM 17(9)) is the first term, sqrt(2 delta M). A segment of tau + delta sees
// e^{(tau+delta)/M} - 1 failures on average, each losing M - L / (e^{L/M} - 1) of it, which splits
// T_w into work, checkpoints, lost work and restarts exactly.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/statistics.hpp"

namespace ppsim {

struct CheckpointPlan {
  double gpus = 1;
  double mtbf = 0;             // of one GPU, seconds (> 0)
  double step_time = 0;        // seconds of one training step (> 0)
  double checkpoint_time = 0;  // delta: what blocks the step (with async checkpoints, the snapshot)
  double write_time = 0;       // async checkpoints: the write that overlaps training (0: blocking)
  double restart_time = 0;     // R
  std::optional<std::int64_t> every_steps;  // checkpoint every N steps; unset: the optimum
  // The run: seconds of wall time, or a number of steps (exactly one is set).
  std::optional<double> wall_time;
  std::optional<std::int64_t> steps;
};

struct ReliabilityFigures {
  double system_mtbf = 0;
  double failures_expected = 0;
  std::int64_t checkpoint_every = 0;   // steps
  double checkpoint_period = 0;        // seconds of work between checkpoints: checkpoint_every steps
  double optimum_period = 0;           // Daly's optimum before rounding to whole steps
  double checkpoint_overhead = 0;      // shares of the wall time
  double lost_work = 0;
  double restart_overhead = 0;
  double goodput = 0;                  // the share of wall time that trains
  double wall_time = 0;                // seconds
  double work_time = 0;                // seconds of training in it
  std::int64_t steps = 0;              // steps trained
};

// Daly's optimum interval (eq. 37) for a blocking time `delta` and a system MTBF `M`.
double daly_optimum_interval(double delta, double system_mtbf);

// The closed forms. With async checkpoints the lost work of a failure grows by the write time, as
// the last checkpoint is durable only once written: charged as R + write_time in eq. 20.
ReliabilityFigures plan_checkpoints(const CheckpointPlan& plan);

// The first figure of `figures` that is no usable result (not finite, a goodput of 0, no whole
// step trained, a step count beyond int64), or "" when all are: a run must refuse its inputs rather
// than report such a figure.
std::string unusable_reliability(const ReliabilityFigures& figures);

// The same run simulated `samples` times (exponential failures, the work since the last durable
// checkpoint lost, restarts that can fail): the distribution of its wall time, for `steps` steps
// (plan.steps, or the closed form's steps for a wall-time budget). Deterministic in `seed`.
struct ReliabilitySamples {
  std::int64_t n = 0;
  double mean_wall_time = 0;
  double mean_goodput = 0;
  double mean_failures = 0;
  std::vector<double> wall_times;  // per sample, in sample order
};
ReliabilitySamples simulate_checkpoints(const CheckpointPlan& plan, const ReliabilityFigures& closed_form,
                                        std::int64_t samples, std::uint64_t seed);

// What a report says of a run's reliability: the closed forms, what they came from and, with
// --samples, the Monte-Carlo training runs.
struct ReliabilityReport {
  CheckpointPlan plan;
  ReliabilityFigures figures;
  double checkpoint_bytes = 0;  // per GPU, written once per checkpoint
  std::int64_t samples = 0;     // Monte-Carlo training runs; 0: none
  Distribution sampled_wall_time;
  double sampled_goodput = 0;
  double sampled_failures = 0;
  std::vector<std::string> assumed;  // settings taken at their defaults, which are assumptions
};

}  // namespace ppsim
