// SPDX-License-Identifier: Apache-2.0
#include "study/run/monte_carlo.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include "models/straggler_cost_model.hpp"
#include "models/transformer/training_step.hpp"
#include "sim/critical_path.hpp"
#include "sim/report/format.hpp"
#include "study/common/errors.hpp"

namespace ppsim {
namespace {

constexpr int kHistogramBins = 20;
// A bound on the work of one command (tools/bench/samples_bench measures sampled ops per second).
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

namespace {

// What one sample leaves for the statistics, kept per sample so that they are summed in sample order.
struct SampleOutcome {
  bool ran = false;
  double makespan = 0;
  double bubble = 0;
  std::vector<double> critical;
  double step_time = 0;
  double throughput = 0;
};

SampleOutcome one_sample(const Scenario& scenario, const Program& program, const CostModel& costs,
                         const EngineOptions& options, const NoiseModel& drawn, const TransformerCostModel* transformer,
                         std::uint64_t i, Engine& engine) {
  NoiseModel noise = drawn;
  noise.seed = scenario.seed;
  noise.sample = i;
  EngineOptions sample_options = options;
  sample_options.noise = &noise;
  sample_options.timeline_sink = nullptr;
  // The in-order sweep draws the same factors and finds the critical path as it runs, holding only
  // what is in flight; paired sends and lowered programs need the event queue, whose timeline the
  // critical path is then walked on.
  const bool sweep = options.comm != CommMode::kPaired && program.comms.empty();
  sample_options.record_timeline = !sweep;
  sample_options.record_critical_path = sweep;
  sample_options.algorithm = sweep ? EngineAlgorithm::kSweep : EngineAlgorithm::kEventQueue;
  const std::vector<double> factors = sampled_straggler_factors(scenario, program.num_devices, i);
  const bool slowed = std::any_of(factors.begin(), factors.end(), [](double f) { return f != 1; });
  const StragglerCostModel straggled(costs, program.stage_device, factors);
  const CostModel& sample_costs = slowed ? static_cast<const CostModel&>(straggled) : costs;
  SimulationOutcome outcome = engine.run(program, sample_costs, sample_options);
  SampleOutcome sample;
  if (!outcome.result) return sample;  // the deterministic step ran: no sample deadlocks (timing never does)
  Result& result = *outcome.result;
  sample.ran = true;
  sample.makespan = result.makespan;
  sample.bubble = result.bubble_ratio;
  sample.critical = sweep ? std::move(result.critical_time) : critical_time_by_device(program, *result.timeline);
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
    sample.step_time = training.step_time;
    sample.throughput = training.tokens_per_second;
  }
  return sample;
}

}  // namespace

SampleFigures sample_steps(const Scenario& scenario, const Program& program, const CostModel& costs,
                           const EngineOptions& options) {
  SampleFigures figures;
  figures.n = scenario.samples;
  figures.seed = scenario.seed;
  const auto* transformer = dynamic_cast<const TransformerCostModel*>(&unwrapped(costs));
  figures.has_training = transformer != nullptr;
  const auto n = static_cast<std::size_t>(scenario.samples);
  // Each sample replays every op: bound the whole, as a run's ops are bounded.
  const double replays = static_cast<double>(n) * static_cast<double>(program.num_ops());
  if (replays > kMaxSampledOps) {
    throw InputError(scenario.source_of("samples") + ": " + std::to_string(n) + " samples of " +
                     std::to_string(program.num_ops()) + " ops are " + format_figure(replays) +
                     " op replays, above the limit of " + format_figure(kMaxSampledOps) +
                     "; take fewer samples or a smaller m");
  }
  NoiseModel drawn = scenario.noise;
  if (scenario.jitter_measured) drawn = measured_noise(scenario, transformer);

  // Samples are taken one at a time by up to sample_threads threads, each into its own slot.
  std::vector<SampleOutcome> outcomes(n);
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto take_samples = [&] {
    try {
      Engine engine;
      for (std::size_t i = next++; i < n; i = next++) {
        outcomes[i] = one_sample(scenario, program, costs, options, drawn, transformer, i, engine);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = n;  // the others stop too
    }
  };
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t wanted = scenario.sample_threads == 0 ? cores : std::min<std::size_t>(scenario.sample_threads, cores);
  const std::size_t threads = std::clamp<std::size_t>(wanted, 1, std::max<std::size_t>(n, 1));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(take_samples);
    } catch (const std::system_error&) {
      break;  // no more threads: the calling thread takes the rest
    }
  }
  take_samples();
  for (std::thread& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);

  // The statistics in sample order, whichever thread ran each: the same bytes for any count.
  std::vector<double> makespans;
  std::vector<double> bubbles;
  std::vector<double> step_times;
  std::vector<double> throughputs;
  makespans.reserve(n);
  bubbles.reserve(n);
  std::vector<double> critical(static_cast<std::size_t>(program.num_devices), 0.0);
  double makespan_sum = 0;
  for (const SampleOutcome& sample : outcomes) {
    if (!sample.ran) continue;
    makespans.push_back(sample.makespan);
    bubbles.push_back(sample.bubble);
    makespan_sum += sample.makespan;
    for (std::size_t d = 0; d < sample.critical.size() && d < critical.size(); ++d) critical[d] += sample.critical[d];
    if (transformer != nullptr) {
      step_times.push_back(sample.step_time);
      throughputs.push_back(sample.throughput);
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
