// SPDX-License-Identifier: Apache-2.0
#include "study/run/monte_carlo.hpp"

#include <algorithm>

#include "models/straggler_cost_model.hpp"
#include "models/transformer/training_step.hpp"
#include "sim/critical_path.hpp"
#include "sim/report/format.hpp"
#include "study/common/errors.hpp"

namespace ppsim {
namespace {

constexpr int kHistogramBins = 20;
// About four minutes of replays at the engine's 4 M sampled ops per second (tools/bench/samples_bench).
constexpr double kMaxSampledOps = 1e9;
constexpr std::uint64_t kStragglerStream = 0x737472616767ULL;  // "strag": apart from the ops' streams

// --jitter measured: the hardware profile's variability, as ppsim-calibrate measured it.
NoiseModel measured_noise(const Scenario& scenario, const TransformerCostModel* transformer) {
  if (transformer == nullptr) {
    throw InputError(scenario.source_of("jitter") + ": measured takes the hardware profile's variability, which "
                                                   "needs --model");
  }
  const HardwareProfile& hardware = transformer->setup().hardware;
  if (!hardware.has_variability()) {
    throw InputError(scenario.source_of("jitter") + ": " + hardware.name +
                     " has no variability table (ppsim-calibrate writes one into the profiles it measures)");
  }
  NoiseModel noise = scenario.noise;
  noise.op_cv = hardware.op_variability;
  if (scenario.sources.count("link-jitter") == 0) noise.link_cv = hardware.link_variability;
  return noise;
}

}  // namespace

std::vector<double> sampled_straggler_factors(const Scenario& scenario, int devices, std::uint64_t sample) {
  std::vector<double> factors(static_cast<std::size_t>(devices), 1.0);
  if (!(scenario.straggler_probability > 0)) return factors;
  for (int d = 0; d < devices; ++d) {
    SplitMix64 stream = noise_stream(scenario.seed, sample, kStragglerStream, static_cast<std::uint64_t>(d), 0);
    if (stream.uniform() < scenario.straggler_probability) factors[static_cast<std::size_t>(d)] = scenario.straggler_factor;
  }
  return factors;
}

SampleFigures sample_steps(const Scenario& scenario, const Program& program, const CostModel& costs,
                           const EngineOptions& options) {
  SampleFigures figures;
  figures.n = scenario.samples;
  figures.seed = scenario.seed;
  const auto* transformer = dynamic_cast<const TransformerCostModel*>(&unwrapped(costs));
  figures.has_training = transformer != nullptr;
  const auto n = static_cast<std::size_t>(scenario.samples);
  // Each sample replays every op and records its span: bound the whole, as a run's ops are bounded.
  const double replays = static_cast<double>(n) * static_cast<double>(program.num_ops());
  if (replays > kMaxSampledOps) {
    throw InputError(scenario.source_of("samples") + ": " + std::to_string(n) + " samples of " +
                     std::to_string(program.num_ops()) + " ops are " + format_figure(replays) +
                     " op replays, above the limit of " + format_figure(kMaxSampledOps) +
                     "; take fewer samples or a smaller m");
  }
  std::vector<double> makespans;
  std::vector<double> bubbles;
  std::vector<double> step_times;
  std::vector<double> throughputs;
  makespans.reserve(n);
  bubbles.reserve(n);
  std::vector<double> critical(static_cast<std::size_t>(program.num_devices), 0.0);
  double makespan_sum = 0;
  NoiseModel drawn = scenario.noise;
  if (scenario.jitter_measured) drawn = measured_noise(scenario, transformer);
  Engine engine;
  for (std::uint64_t i = 0; i < n; ++i) {
    NoiseModel noise = drawn;
    noise.seed = scenario.seed;
    noise.sample = i;
    EngineOptions sample_options = options;
    sample_options.noise = &noise;
    sample_options.record_timeline = true;  // the critical path walks the spans
    sample_options.timeline_sink = nullptr;
    sample_options.algorithm = EngineAlgorithm::kEventQueue;
    const std::vector<double> factors = sampled_straggler_factors(scenario, program.num_devices, i);
    const bool slowed = std::any_of(factors.begin(), factors.end(), [](double f) { return f != 1; });
    const StragglerCostModel straggled(costs, program.stage_device, factors);
    const CostModel& sample_costs = slowed ? static_cast<const CostModel&>(straggled) : costs;
    SimulationOutcome outcome = engine.run(program, sample_costs, sample_options);
    if (!outcome.result) continue;  // the deterministic step ran: no sample deadlocks (timing never does)
    const Result& result = *outcome.result;
    makespans.push_back(result.makespan);
    bubbles.push_back(result.bubble_ratio);
    makespan_sum += result.makespan;
    const std::vector<double> path = critical_time_by_device(program, *result.timeline);
    for (std::size_t d = 0; d < path.size(); ++d) critical[d] += path[d];
    if (transformer != nullptr) {
      std::vector<double> device_end;
      std::vector<std::int64_t> peaks;
      std::vector<std::int64_t> unsharded;
      for (const DeviceFigures& device : result.per_device) {
        device_end.push_back(device.end);
        peaks.push_back(device.peak_activation_bytes);
        unsharded.push_back(device.peak_memory_bytes - device.static_bytes - device.peak_activation_bytes);
      }
      std::vector<StageTimes> stages;
      for (const StageFigures& stage : result.per_stage) {
        stages.push_back({stage.gradient_start, stage.gradient_end, stage.first_forward});
      }
      const TrainingFigures training = training_figures(*transformer, result.makespan, device_end, peaks, stages, unsharded);
      step_times.push_back(training.step_time);
      throughputs.push_back(training.tokens_per_second);
    }
  }
  figures.n = static_cast<std::int64_t>(makespans.size());
  if (makespans.empty()) return figures;
  figures.makespan = distribution_of(makespans);
  figures.bubble_ratio = distribution_of(bubbles);
  for (const double time : critical) figures.critical_share.push_back(makespan_sum > 0 ? time / makespan_sum : 0);
  if (transformer != nullptr) {
    figures.step_time = distribution_of(step_times);
    figures.tokens_per_second = distribution_of(throughputs);
    figures.histogram = histogram_of(step_times, kHistogramBins);
    figures.histogram_of = "step_time";
  } else {
    figures.histogram = histogram_of(makespans, kHistogramBins);
    figures.histogram_of = "makespan";
  }
  return figures;
}

}  // namespace ppsim
