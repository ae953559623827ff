// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs a study's points on worker threads, one Engine each. Every point fills its own slot, so the
// results (and every byte written from them) are the same for any number of threads.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "study/sweep/sweep_study.hpp"

namespace ppsim {

// The figures of one point, flattened for the output files and the summary.
struct PointFigures {
  double makespan = 0;
  double bubble_ratio = 0;
  double bubble_overhead = 0;
  double comm_ratio = 0;
  double total_busy = 0;
  // Tokens per second with a model; otherwise samples per time unit, m * b / makespan (b = -b, default 1).
  double throughput = 0;
  std::int64_t peak_memory_bytes = 0;  // the device that needs most: static + activations (+ workspace)
  std::int64_t peak_activation_bytes = 0;
  double peak_stashed = 0;
  double stage_imbalance = 1;  // slowest stage (or device) over the mean
  bool fits = true;
  // A transformer study's training step.
  double step_time = 0;  // a model's whole step; otherwise the makespan
  double tokens_per_second = 0;
  double samples_per_second = 0;
  double mfu = 0;
  double hfu = 0;
  double dp_reduce_time = 0;
  double dp_reduce_exposed = 0;
  double optimizer_time = 0;
  std::int64_t memory_capacity = 0;
  // --samples: the mean and p99 of the step time (the makespan without a model) over the samples;
  // --mtbf: the run's goodput.
  double mean_step_time = 0;
  double p99_step_time = 0;
  double goodput = 0;
};

// A report's figures as a sweep point has them (the device that needs most, the training step's
// figures with a model); also what --expect tests on run and compare.
PointFigures report_figures(const Report& report);

struct PointResult {
  std::size_t index = 0;
  std::string schedule;
  int p = 0;
  int v = 1;
  int m = 0;
  // The layout of a transformer study (t, d, b, global batch, recomputation).
  int t = 1;
  int d = 1;
  std::int64_t micro_batch = 1;
  std::int64_t global_batch = 0;
  std::string recompute;
  std::vector<std::size_t> choice;  // the value taken from each axis
  std::vector<std::string> labels;  // one per axis
  bool run = false;
  std::string skipped;  // why, when not run
  PointFigures figures;
};

struct SweepOptions {
  unsigned threads = 1;
  // Simulate every point, even those whose figures the closed forms give exactly (the same bytes).
  bool simulate_all = false;
  std::size_t shard_index = 0;
  std::size_t shard_count = 1;
  // --shard was given (even 0/1): the output file starts with its shard record, for ppsim merge.
  bool sharded = false;
  // Called from the calling thread about five times a second while points run: (done, total).
  std::function<void(std::size_t, std::size_t)> progress;
  // Starts one worker thread; empty: std::thread. A std::system_error from it (what std::thread
  // throws when the system refuses a thread) means one worker fewer, not a failure: the tests
  // refuse threads through it, and an embedder may start its own.
  std::function<std::thread(std::function<void()>)> start_thread;
};

// The threads of -j N (jobs=N in Python): N, or every core for 0.
unsigned sweep_threads(unsigned jobs);

// The worker threads a sweep of `points` points starts for `requested` threads: at most one per
// point and one per core. The bytes written never depend on it.
unsigned worker_threads(unsigned requested, std::size_t points);

// The indices of the points a shard runs: index % shard_count == shard_index.
std::vector<std::size_t> shard_points(const Study& study, std::size_t shard_index, std::size_t shard_count);

// Simulates one point. Constraint failures and sizes a schedule refuses make a skipped result;
// a ScheduleError (a program that is invalid or deadlocks) propagates.
PointResult run_point(const Study& study, std::size_t index, Engine& engine, bool simulate_all = false);

// Runs the shard's points in index order of the result. The first ScheduleError or other failure
// (lowest index) is rethrown after every thread has stopped.
std::vector<PointResult> run_sweep(const Study& study, const SweepOptions& options);

}  // namespace ppsim
