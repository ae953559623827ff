// SPDX-License-Identifier: Apache-2.0
// Noise over the real schedule, stragglers and the reliability closed forms: the draws' moments,
// the engine's noisy replay against the closed forms it must meet, the critical path, and Daly's
// optimum and the Monte-Carlo training runs against the figures of the Llama 3 405B run.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "models/noise.hpp"
#include "models/reliability/checkpointing.hpp"
#include "models/statistics.hpp"
#include "models/straggler_cost_model.hpp"
#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "sim/critical_path.hpp"
#include "sim/engine.hpp"

using Catch::Matchers::WithinRel;

namespace {

// `samples` noisy steps of `program`: each sample's makespan.
std::vector<double> noisy_makespans(const ppsim::Program& program, const ppsim::CostModel& costs, ppsim::NoiseModel noise,
                                    int samples, ppsim::CommMode comm = ppsim::CommMode::kOverlap) {
  ppsim::Engine engine;
  std::vector<double> makespans;
  for (int i = 0; i < samples; ++i) {
    noise.sample = static_cast<std::uint64_t>(i);
    ppsim::EngineOptions options;
    options.comm = comm;
    options.noise = &noise;
    const ppsim::SimulationOutcome outcome = engine.run(program, costs, options);
    REQUIRE(outcome.result.has_value());
    makespans.push_back(outcome.result->makespan);
  }
  return makespans;
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (const double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// Llama 3's 405B run: 16,384 GPUs at the per-GPU MTBF that gives its 419 failures in 54 days,
// 100,000 steps of `step` seconds with a blocking checkpoint of 60 s and a restart of `restart`.
ppsim::CheckpointPlan llama3_plan(double step, double restart) {
  ppsim::CheckpointPlan plan;
  plan.gpus = 16384;
  plan.mtbf = 50680.0 * 3600;
  plan.step_time = step;
  plan.checkpoint_time = 60;
  plan.restart_time = restart;
  plan.steps = 100'000;
  return plan;
}

ppsim::Program build(std::string_view name, int p, int m) {
  const ppsim::ScheduleInfo* info = ppsim::find_schedule(name);
  REQUIRE(info != nullptr);
  return info->build(ppsim::ScheduleParams{p, m, info->default_v});
}

}  // namespace

TEST_CASE("Every noise distribution has mean 1 and the coefficient of variation asked for", "[noise]") {
  const auto distribution =
      GENERATE(ppsim::NoiseDistribution::kLognormal, ppsim::NoiseDistribution::kGamma, ppsim::NoiseDistribution::kNormal);
  const double cv = GENERATE(0.05, 0.2);
  INFO(ppsim::noise_distribution_name(distribution) << " cv " << cv);
  constexpr int kDraws = 200'000;
  double sum = 0;
  double squares = 0;
  for (int i = 0; i < kDraws; ++i) {
    ppsim::SplitMix64 stream = ppsim::noise_stream(7, 0, static_cast<std::uint64_t>(i), 0, 0);
    const double x = ppsim::noise_factor(stream, distribution, cv);
    REQUIRE(x > 0);
    sum += x;
    squares += x * x;
  }
  const double m = sum / kDraws;
  const double sd = std::sqrt(squares / kDraws - m * m);
  // Standard errors: cv / sqrt(n) < 0.0005 for the mean; the truncation of the normal is below
  // 1e-6 at these CVs (4.5 and 5 standard deviations).
  CHECK(std::abs(m - 1) < 0.003);
  CHECK(std::abs(sd / cv - 1) < 0.02);
}

TEST_CASE("A draw is a function of its seed, sample and keys alone", "[noise]") {
  ppsim::SplitMix64 a = ppsim::noise_stream(1, 2, 3, 4, 5);
  ppsim::SplitMix64 b = ppsim::noise_stream(1, 2, 3, 4, 5);
  ppsim::SplitMix64 c = ppsim::noise_stream(1, 3, 3, 4, 5);
  const double x = ppsim::noise_factor(a, ppsim::NoiseDistribution::kGamma, 0.1);
  CHECK(x == ppsim::noise_factor(b, ppsim::NoiseDistribution::kGamma, 0.1));
  CHECK(x != ppsim::noise_factor(c, ppsim::NoiseDistribution::kGamma, 0.1));
}

TEST_CASE("On one device the mean noisy makespan is m (E[F] + E[B]) within 1% at 4000 samples", "[noise]") {
  const auto distribution =
      GENERATE(ppsim::NoiseDistribution::kLognormal, ppsim::NoiseDistribution::kGamma, ppsim::NoiseDistribution::kNormal);
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{});
  ppsim::NoiseModel noise;
  noise.op_cv.fill(0.2);
  noise.distribution = distribution;
  const std::vector<double> makespans = noisy_makespans(build("1f1b", 1, 8), costs, noise, 4000);
  CHECK_THAT(mean(makespans), WithinRel(8.0 * (1 + 2), 0.01));
}

TEST_CASE("Noise never lowers the mean makespan below the deterministic one", "[noise]") {
  // A pipeline's makespan is a maximum of sums of op times, convex in them: by Jensen, its mean
  // under mean-1 noise is at least its value at the means.
  const char* name = GENERATE("gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zbv", "dualpipev");
  INFO(name);
  const ppsim::Program program = build(name, 4, 8);
  ppsim::UniformCosts uniform;
  uniform.latency = ppsim::Duration{0.1};
  const ppsim::UniformCostModel costs(uniform);
  ppsim::Engine engine;
  const double deterministic = engine.run(program, costs).result->makespan;
  ppsim::NoiseModel noise;
  noise.op_cv.fill(0.1);
  noise.link_cv = 0.1;
  const std::vector<double> makespans = noisy_makespans(program, costs, noise, 500);
  CHECK(mean(makespans) > deterministic);
}

TEST_CASE("Without noise every registry schedule replays to its deterministic figures, event queue or not",
          "[noise]") {
  const ppsim::CommMode comm = GENERATE(ppsim::CommMode::kOverlap, ppsim::CommMode::kBlocking);
  ppsim::UniformCosts uniform;
  uniform.latency = ppsim::Duration{0.25};
  uniform.message_bytes = ppsim::ByteCount{50};
  uniform.bandwidth = ppsim::Bandwidth{100};
  const ppsim::UniformCostModel costs(uniform);
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    if (!info.generated() || info.check(ppsim::ScheduleParams{4, 8, info.default_v})) continue;
    INFO(info.name);
    const ppsim::Program program = info.build(ppsim::ScheduleParams{4, 8, info.default_v});
    ppsim::Engine engine;
    ppsim::EngineOptions plain;
    plain.comm = comm;
    const double deterministic = engine.run(program, costs, plain).result->makespan;
    ppsim::NoiseModel silent;  // zero variation: no draws at all
    const std::vector<double> makespans = noisy_makespans(program, costs, silent, 3, comm);
    for (const double makespan : makespans) CHECK(makespan == deterministic);
  }
}

TEST_CASE("Percentiles are monotone and interpolate between ranks", "[noise]") {
  const ppsim::Distribution d = ppsim::distribution_of({5, 1, 4, 2, 3});
  CHECK(d.mean == 3);
  CHECK(d.min == 1);
  CHECK(d.p50 == 3);
  CHECK(d.p90 == Approx(4.6));
  CHECK(d.p99 == Approx(4.96));
  CHECK(d.max == 5);
  CHECK(d.stdev == Approx(std::sqrt(2.5)));
  std::vector<double> values;
  for (int i = 0; i < 1000; ++i) {
    ppsim::SplitMix64 stream = ppsim::noise_stream(3, 0, static_cast<std::uint64_t>(i), 0, 0);
    values.push_back(ppsim::noise_factor(stream, ppsim::NoiseDistribution::kLognormal, 0.5));
  }
  const ppsim::Distribution many = ppsim::distribution_of(values);
  CHECK(many.min <= many.p50);
  CHECK(many.p50 <= many.p90);
  CHECK(many.p90 <= many.p99);
  CHECK(many.p99 <= many.max);
  const ppsim::Histogram h = ppsim::histogram_of(values, 20);
  std::int64_t counted = 0;
  for (const auto c : h.counts) counted += c;
  CHECK(counted == 1000);
  CHECK(h.edges.front() == many.min);
  CHECK(h.edges.back() == many.max);
}

TEST_CASE("A straggler's factor is its stages' costs multiplied, exactly", "[noise]") {
  const ppsim::Program program = build("zbv", 4, 8);  // device 1 holds stages 1 and 6
  const ppsim::UniformCostModel uniform(ppsim::UniformCosts{});
  const ppsim::StragglerCostModel straggled(uniform, program.stage_device, {1, 1.5, 1, 1});
  for (int stage = 0; stage < program.num_stages(); ++stage) {
    const double factor = program.stage_device[static_cast<std::size_t>(stage)] == 1 ? 1.5 : 1;
    for (const ppsim::Op op : {ppsim::Op::kForward, ppsim::Op::kBackwardInput, ppsim::Op::kBackwardWeight}) {
      CHECK(straggled.compute_time(op, stage) == uniform.compute_time(op, stage) * factor);
    }
  }
  CHECK(&ppsim::unwrapped(straggled) == &uniform);
}

TEST_CASE("The critical path of a single device is all of its ops", "[noise]") {
  const ppsim::Program program = build("1f1b", 1, 4);
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{});
  ppsim::Engine engine;
  ppsim::EngineOptions options;
  options.record_timeline = true;
  const ppsim::Result result = *engine.run(program, costs, options).result;
  const std::vector<double> path = ppsim::critical_time_by_device(program, *result.timeline);
  REQUIRE(path.size() == 1);
  CHECK(path[0] == 12);
}

TEST_CASE("GPipe's critical path runs down the forwards and back up the backwards", "[noise]") {
  // p = 4, m = 2, F = 1, B = 2: two paths are critical, and ties stay on the device: 0F0 .. 3F0,
  // 3F1, 3B0, then 2B0, 1B0, 0B0 and 0B1. 15 of the makespan 15: d0 5, d1 3, d2 3, d3 4.
  const ppsim::Program program = build("gpipe", 4, 2);
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{});
  ppsim::Engine engine;
  ppsim::EngineOptions options;
  options.record_timeline = true;
  const ppsim::Result result = *engine.run(program, costs, options).result;
  CHECK(result.makespan == 15);
  const std::vector<double> path = ppsim::critical_time_by_device(program, *result.timeline);
  double total = 0;
  for (const double t : path) total += t;
  CHECK(total == 15);
  CHECK(path == std::vector<double>{5, 3, 3, 4});
}

TEST_CASE("Llama 3's 16384 GPUs at a per-GPU MTBF of 50680 h expect 419 failures in 54 days", "[reliability]") {
  ppsim::CheckpointPlan plan = llama3_plan(10, 600);
  plan.steps.reset();
  plan.wall_time = 54.0 * 86400;
  const ppsim::ReliabilityFigures f = ppsim::plan_checkpoints(plan);
  CHECK_THAT(f.failures_expected, WithinRel(419.0, 0.01));
  CHECK_THAT(f.system_mtbf, WithinRel(50680.0 * 3600 / 16384, 1e-12));
  // The shares of the wall time add up.
  CHECK(f.goodput + f.checkpoint_overhead + f.lost_work + f.restart_overhead == Approx(1).epsilon(1e-12));
}

TEST_CASE("With C = 60 s the checkpoint period is Daly's optimum, about 19 minutes, within 1%", "[reliability]") {
  const double mtbf = 50680.0 * 3600 / 16384;  // 11136 s
  const double daly = ppsim::daly_optimum_interval(60, mtbf);
  // Daly's eq. 37 by hand: sqrt(2 * 60 * M) (1 + sqrt(60 / 2M) / 3 + (60 / 2M) / 9) - 60.
  const double r = 60 / (2 * mtbf);
  CHECK_THAT(daly, WithinRel(std::sqrt(2 * 60 * mtbf) * (1 + std::sqrt(r) / 3 + r / 9) - 60, 1e-12));
  CHECK(daly / 60 > 18.5);
  CHECK(daly / 60 < 19.5);
  const ppsim::CheckpointPlan plan = llama3_plan(7, 0);
  const ppsim::ReliabilityFigures f = ppsim::plan_checkpoints(plan);
  CHECK_THAT(f.checkpoint_period, WithinRel(daly, 0.01));  // rounded to whole 7 s steps
  CHECK(std::fmod(f.checkpoint_period, 7) == 0);
  CHECK(f.optimum_period == daly);
}

TEST_CASE("Monte-Carlo training runs meet the closed forms: goodput within half a point at 10^4 runs",
          "[reliability]") {
  const ppsim::CheckpointPlan plan = llama3_plan(10, 60);  // about 12 days of work
  const ppsim::ReliabilityFigures f = ppsim::plan_checkpoints(plan);
  const ppsim::ReliabilitySamples runs = ppsim::simulate_checkpoints(plan, f, 10'000, 1);
  // The first-order form 1 - C/tau - (tau/2 + R)/M, and Daly's exact one.
  const double tau = f.checkpoint_period;
  const double first_order = 1 - 60 / tau - (tau / 2 + 60) / f.system_mtbf;
  CHECK(std::abs(runs.mean_goodput - first_order) < 0.005);
  CHECK(std::abs(runs.mean_goodput - f.goodput) < 0.002);
  CHECK_THAT(runs.mean_failures, WithinRel(f.failures_expected, 0.01));
  // Deterministic in the seed.
  CHECK(ppsim::simulate_checkpoints(plan, f, 10, 1).wall_times == ppsim::simulate_checkpoints(plan, f, 10, 1).wall_times);
}

TEST_CASE("An async checkpoint blocks only for its snapshot and loses the write it had not finished",
          "[reliability]") {
  ppsim::CheckpointPlan plan = llama3_plan(10, 600);
  const ppsim::ReliabilityFigures blocking = ppsim::plan_checkpoints(plan);
  plan.checkpoint_time = 2;  // the snapshot to host
  plan.write_time = 60;
  const ppsim::ReliabilityFigures async = ppsim::plan_checkpoints(plan);
  CHECK(async.goodput > blocking.goodput);
  CHECK(async.checkpoint_every < blocking.checkpoint_every);  // cheaper checkpoints, taken more often
  const ppsim::ReliabilitySamples runs = ppsim::simulate_checkpoints(plan, async, 4000, 2);
  CHECK(std::abs(runs.mean_goodput - async.goodput) < 0.005);
}
