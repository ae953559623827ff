// SPDX-License-Identifier: Apache-2.0
#include "study/sweep/sweep_runner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include "study/common/errors.hpp"
#include "study/run/study.hpp"
#include "study/run/transformer_study.hpp"

namespace ppsim {
namespace {

void take_inputs(const Scenario& scenario, PointResult& result) {
  result.p = scenario.params.p;
  result.m = scenario.params.m;
  result.t = scenario.layout.tensor_parallel;
  result.d = scenario.layout.data_parallel;
  result.micro_batch = scenario.layout.micro_batch;
  result.global_batch = scenario.layout.global_batch;
  result.recompute = recompute_name(scenario.layout.recompute);
}

PointFigures figures_of(const Study& study, const Report& report) {
  PointFigures f = report_figures(report);
  if (study.memory_limit && f.peak_memory_bytes > *study.memory_limit) f.fits = false;
  return f;
}

}  // namespace

PointFigures report_figures(const Report& report) {
  const Result& r = report.result;
  PointFigures f;
  f.makespan = r.makespan;
  f.bubble_ratio = r.bubble_ratio;
  f.bubble_overhead = r.bubble_overhead;
  f.comm_ratio = r.comm_ratio;
  f.total_busy = r.total_busy;
  double busiest = 0;
  for (const DeviceFigures& device : r.per_device) {
    f.peak_memory_bytes = std::max(f.peak_memory_bytes, device.peak_memory_bytes);
    f.peak_activation_bytes = std::max(f.peak_activation_bytes, device.peak_activation_bytes);
    f.peak_stashed = std::max(f.peak_stashed, device.peak_stashed);
    busiest = std::max(busiest, device.busy);
  }
  const double mean_busy = r.per_device.empty() ? 0 : r.total_busy / static_cast<double>(r.per_device.size());
  f.stage_imbalance = mean_busy > 0 ? busiest / mean_busy : 1;
  // Samples per time unit: m micro-batches of b samples each (with a model, tokens per second below).
  // The step's micro-batches, not the program's units: DualPipe's and Chimera's are m/2 per pipeline,
  // Seq1F1B's mk slices.
  f.throughput = r.makespan > 0 ? static_cast<double>(report.params.m) * static_cast<double>(report.samples_per_microbatch) / r.makespan : 0;
  f.step_time = r.makespan;
  if (report.training) {
    const TrainingFigures& t = *report.training;
    f.throughput = t.tokens_per_second;
    f.stage_imbalance = t.stage_imbalance;
    f.fits = t.fits;
    f.peak_memory_bytes = 0;
    for (const DeviceMemory& memory : t.memory) f.peak_memory_bytes = std::max(f.peak_memory_bytes, memory.total);
    f.step_time = t.step_time;
    f.tokens_per_second = t.tokens_per_second;
    f.samples_per_second = t.samples_per_second;
    f.mfu = t.mfu;
    f.hfu = t.hfu;
    f.dp_reduce_time = t.dp_reduce_time;
    f.dp_reduce_exposed = t.dp_reduce_exposed;
    f.optimizer_time = t.optimizer_time;
    f.memory_capacity = t.memory_capacity;
  }
  if (report.samples) {
    const SampleFigures& s = *report.samples;
    f.mean_step_time = s.has_training ? s.step_time.mean : s.makespan.mean;
    f.p99_step_time = s.has_training ? s.step_time.p99 : s.makespan.p99;
  }
  if (report.reliability) f.goodput = report.reliability->figures.goodput;
  return f;
}

unsigned sweep_threads(unsigned jobs) { return jobs > 0 ? jobs : std::max(1u, std::thread::hardware_concurrency()); }

unsigned worker_threads(unsigned requested, std::size_t points) {
  // More threads than cores only wait their turn, and each holds an engine and a stack: -j 600 on
  // a small machine, or jobs=40000 from Python, runs on the cores there are.
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp<std::size_t>(std::min<std::size_t>(requested, cores), 1, std::max<std::size_t>(points, 1)));
}

std::vector<std::size_t> shard_points(const Study& study, std::size_t shard_index, std::size_t shard_count) {
  std::vector<std::size_t> indices;
  indices.reserve(study.points / shard_count + 1);
  for (std::size_t i = shard_index; i < study.points; i += shard_count) indices.push_back(i);
  return indices;
}

PointResult run_point(const Study& study, std::size_t index, Engine& engine, bool simulate_all) {
  PointResult result;
  result.index = index;
  try {
    PreparedPoint point = prepare_point(study, index);
    result.schedule = point.schedule;
    result.v = point.v;
    result.choice = std::move(point.choice);
    result.labels = std::move(point.labels);
    take_inputs(point.scenario, result);
    if (!point.skipped.empty()) {
      result.skipped = point.skipped;
      return result;
    }
    Scenario scenario = resolve_transformer_scenario(std::move(point.scenario));
    take_inputs(scenario, result);
    // Sequence slices cut only seq1f1b's micro-batches, as in compare: a study with a schedule axis
    // runs its other schedules on whole ones.
    if (point.schedule != "seq1f1b") scenario.params.sequence_splits = 0;
    check_scenario(scenario);
    const Report report = simulate_all ? simulate_schedule(scenario, point.schedule, /*record_timeline=*/false, engine)
                                       : summarize_schedule(std::move(scenario), point.schedule, engine);
    result.p = report.params.p;
    result.m = report.params.m;
    result.v = report.params.v;
    result.figures = figures_of(study, report);
    result.run = true;
  } catch (const InputError& error) {
    result.skipped = short_reason(study, error.what());
  }
  return result;
}

std::vector<PointResult> run_sweep(const Study& study, const SweepOptions& options) {
  const std::vector<std::size_t> indices = shard_points(study, options.shard_index, options.shard_count);
  const std::size_t total = indices.size();
  std::vector<PointResult> results(total);
  std::vector<std::exception_ptr> errors(total);
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex mutex;
  std::condition_variable finished;

  // Points are taken one at a time, so a slow point does not hold up a whole block; each result
  // goes to its own slot, whichever thread ran it. Errors do not stop the others, so the error
  // reported (the lowest index) does not depend on the number of threads either.
  auto take_points = [&](Engine& engine) {
    for (std::size_t k = next.fetch_add(1); k < total; k = next.fetch_add(1)) {
      try {
        results[k] = run_point(study, indices[k], engine, options.simulate_all);
      } catch (...) {
        errors[k] = std::current_exception();
      }
      if (done.fetch_add(1) + 1 == total) {
        const std::lock_guard<std::mutex> lock(mutex);
        finished.notify_all();
      }
    }
  };
  std::size_t running = 0;  // workers that have not returned; guarded by `mutex`
  auto worker = [&] {
    try {
      Engine engine;
      take_points(engine);
    } catch (...) {
      // Only the engine's own memory can fail here (run_point's errors stay in their slots): this
      // worker stops, and the others or the calling thread take its points.
    }
    const std::lock_guard<std::mutex> lock(mutex);
    --running;
    finished.notify_all();
  };

  const unsigned threads = worker_threads(options.threads, total);
  std::vector<std::thread> pool;
  if (threads > 1 || options.progress) {
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) {
      {
        const std::lock_guard<std::mutex> lock(mutex);
        ++running;
      }
      try {
        pool.push_back(options.start_thread ? options.start_thread(worker) : std::thread(worker));
      } catch (const std::system_error&) {  // no more threads (RLIMIT_NPROC, address space): fewer workers
        const std::lock_guard<std::mutex> lock(mutex);
        --running;
        break;
      }
    }
  }
  if (options.progress && !pool.empty()) {
    std::unique_lock<std::mutex> lock(mutex);
    while (!finished.wait_for(lock, std::chrono::milliseconds(200),
                              [&] { return done.load() == total || running == 0; })) {
      lock.unlock();
      options.progress(done.load(), total);
      lock.lock();
    }
  }
  for (std::thread& thread : pool) thread.join();
  // Points no worker took (no thread could start, or every worker's engine failed): run them here.
  if (next.load() < total) {
    Engine engine;
    take_points(engine);
  }
  if (options.progress) options.progress(total, total);
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return results;
}

}  // namespace ppsim
