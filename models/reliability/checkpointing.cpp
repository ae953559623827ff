// SPDX-License-Identifier: Apache-2.0
#include "models/reliability/checkpointing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "models/noise.hpp"

namespace ppsim {
namespace {

// Step counts are held as int64: a double above this is no count (and casting it would be UB).
constexpr double kMaxSteps = 4.6e18;

// One segment of tau seconds of work and its checkpoint: its expected wall time and the parts of it.
struct Segment {
  double work = 0;
  double checkpoint = 0;
  double lost = 0;
  double restart = 0;
  double total() const { return work + checkpoint + lost + restart; }
};

Segment expected_segment(double tau, double delta, double write, double restart, double mtbf) {
  const double length = tau + delta;
  const double failures = std::expm1(length / mtbf);  // per segment, before it completes
  // A failure strikes at t < L with density e^{-t/M}/M: on average M - L / (e^{L/M} - 1) into it.
  const double lost_each = failures > 0 ? mtbf - length / failures : 0;
  // A restart of R that a failure can interrupt takes M (e^{R/M} - 1) on average.
  const double restart_each = mtbf * std::expm1(restart / mtbf);
  return Segment{tau, delta, failures * (lost_each + write), failures * restart_each};
}

}  // namespace

double daly_optimum_interval(double delta, double system_mtbf) {
  if (delta >= 2 * system_mtbf) return system_mtbf;
  const double ratio = delta / (2 * system_mtbf);
  return std::sqrt(2 * delta * system_mtbf) * (1 + std::sqrt(ratio) / 3 + ratio / 9) - delta;
}

ReliabilityFigures plan_checkpoints(const CheckpointPlan& plan) {
  if (!(plan.mtbf > 0) || !(plan.step_time > 0) || !(plan.gpus >= 1)) {
    throw std::invalid_argument("plan_checkpoints: mtbf, step time and GPUs must be positive");
  }
  ReliabilityFigures figures;
  const double mtbf = plan.mtbf / plan.gpus;
  figures.system_mtbf = mtbf;
  const double delta = plan.checkpoint_time;
  figures.optimum_period = daly_optimum_interval(delta, mtbf);
  const auto share_of_work = [&](std::int64_t steps) {
    const double tau = static_cast<double>(steps) * plan.step_time;
    const Segment segment = expected_segment(tau, delta, plan.write_time, plan.restart_time, mtbf);
    return segment.work / segment.total();
  };
  std::int64_t every = 0;
  if (plan.every_steps) {
    every = *plan.every_steps;
  } else {
    // A flush schedule checkpoints between steps: the whole number of steps nearest the optimum,
    // whichever of the two neighbours trains more.
    // Clamped before the cast: an optimum beyond 2^62 steps is no whole number ppsim can hold.
    const double steps = std::clamp(figures.optimum_period / plan.step_time, 1.0, kMaxSteps);
    const auto below = static_cast<std::int64_t>(std::floor(steps));
    every = share_of_work(below + 1) > share_of_work(below) ? below + 1 : below;
  }
  // An async write must end before the next snapshot starts one.
  if (plan.write_time > 0) {
    every = std::max(every, static_cast<std::int64_t>(std::ceil(std::min(plan.write_time / plan.step_time, kMaxSteps))));
  }
  figures.checkpoint_every = every;
  const double tau = static_cast<double>(every) * plan.step_time;
  figures.checkpoint_period = tau;
  const Segment segment = expected_segment(tau, delta, plan.write_time, plan.restart_time, mtbf);
  const double total = segment.total();
  figures.goodput = segment.work / total;
  figures.checkpoint_overhead = segment.checkpoint / total;
  figures.lost_work = segment.lost / total;
  figures.restart_overhead = segment.restart / total;
  if (plan.steps) {
    figures.steps = *plan.steps;
    figures.work_time = static_cast<double>(*plan.steps) * plan.step_time;
    figures.wall_time = figures.work_time / figures.goodput;
  } else {
    figures.wall_time = plan.wall_time.value_or(0);
    figures.work_time = figures.wall_time * figures.goodput;
    const double steps = figures.work_time / plan.step_time;
    figures.steps = steps < kMaxSteps ? static_cast<std::int64_t>(std::floor(steps)) : -1;  // -1: not a count
  }
  figures.failures_expected = figures.wall_time / mtbf;  // a Poisson process over the whole wall time
  return figures;
}

std::string unusable_reliability(const ReliabilityFigures& f) {
  const std::pair<const char*, double> figures[] = {
      {"system_mtbf", f.system_mtbf},         {"failures_expected", f.failures_expected},
      {"checkpoint_period", f.checkpoint_period}, {"optimum_period", f.optimum_period},
      {"checkpoint_overhead", f.checkpoint_overhead}, {"lost_work", f.lost_work},
      {"restart_overhead", f.restart_overhead}, {"goodput", f.goodput},
      {"wall_time", f.wall_time},             {"work_time", f.work_time}};
  for (const auto& [name, value] : figures) {
    if (!std::isfinite(value)) return name;
  }
  if (!(f.goodput > 0)) return "goodput";
  if (f.steps < 1) return "steps";
  return "";
}

ReliabilitySamples simulate_checkpoints(const CheckpointPlan& plan, const ReliabilityFigures& closed_form,
                                        std::int64_t samples, std::uint64_t seed) {
  ReliabilitySamples result;
  result.n = samples;
  const double mtbf = closed_form.system_mtbf;
  const double work = static_cast<double>(closed_form.steps) * plan.step_time;
  const double tau = closed_form.checkpoint_period;
  double wall_sum = 0;
  double goodput_sum = 0;
  double failure_sum = 0;
  for (std::int64_t i = 0; i < samples; ++i) {
    // A stream of its own for each sample: the same figures whatever else runs.
    SplitMix64 stream = noise_stream(seed, static_cast<std::uint64_t>(i), 0x636b7074 /* "ckpt" */, 0, 0);
    const auto next_failure = [&](double now) { return now - mtbf * std::log(stream.uniform()); };
    double now = 0;
    double failure = next_failure(now);
    double done = 0;            // work done since the start, durable or not
    double durable = 0;         // work saved by a checkpoint that has been written
    double pending = -1;        // work of the checkpoint being written (async), and when it is
    double pending_until = 0;
    std::int64_t failures = 0;
    while (durable < work || done < work) {
      const double segment_work = std::min(tau, work - done);
      const double length = segment_work + plan.checkpoint_time;
      if (pending >= 0 && pending_until <= now) {
        durable = pending;
        pending = -1;
      }
      if (done >= work) {  // all trained: wait for the last write to land
        now = std::max(now, pending_until);
        if (failure < now) {
          ++failures;
          now = failure;
          done = durable;
          pending = -1;
        } else {
          durable = done;
          break;
        }
      } else if (failure >= now + length) {
        now += length;
        done += segment_work;
        if (pending >= 0 && pending_until <= now) durable = pending;  // the last write landed meanwhile
        if (plan.write_time > 0) {
          pending = done;
          pending_until = now + plan.write_time;
        } else {
          durable = done;
        }
        continue;
      } else {
        ++failures;
        now = failure;
        if (pending >= 0 && pending_until <= now) durable = pending;
        pending = -1;
        done = durable;
      }
      // Restart: it completes only if no failure strikes during it.
      while (true) {
        failure = next_failure(now);
        if (failure >= now + plan.restart_time) {
          now += plan.restart_time;
          break;
        }
        ++failures;
        now = failure;
      }
    }
    result.wall_times.push_back(now);
    wall_sum += now;
    goodput_sum += now > 0 ? work / now : 1;
    failure_sum += static_cast<double>(failures);
  }
  if (samples > 0) {
    result.mean_wall_time = wall_sum / static_cast<double>(samples);
    result.mean_goodput = goodput_sum / static_cast<double>(samples);
    result.mean_failures = failure_sum / static_cast<double>(samples);
  }
  return result;
}

}  // namespace ppsim
