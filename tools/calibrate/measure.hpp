// SPDX-License-Identifier: Apache-2.0
#pragma once
// The timing loop both backends share: a few untimed warm-up runs (first-touch page faults,
// library heuristics, instruction caches, clocks ramping up), then timed runs until there are
// `min_runs` and either `max_runs` or `budget_seconds` of timed work. The median is what the
// profile uses: a run disturbed by another process or an interrupt moves the mean, not the median.

#include <algorithm>
#include <cmath>
#include <vector>

#include "tools/calibrate/backend.hpp"

namespace ppsim::calibrate {

// Min, median (mean of the two middle values for an even count) and max of `seconds`.
inline Spread summarize(std::vector<double> seconds) {
  Spread s;
  if (seconds.empty()) return s;
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  s.min = seconds.front();
  s.max = seconds.back();
  s.median = n % 2 == 1 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  s.runs = static_cast<int>(n);
  double sum = 0;
  for (const double x : seconds) sum += x;
  s.mean = sum / static_cast<double>(n);
  double squares = 0;
  for (const double x : seconds) squares += (x - s.mean) * (x - s.mean);
  s.stdev = n > 1 ? std::sqrt(squares / static_cast<double>(n - 1)) : 0;
  return s;
}

// `run_once()` performs one run (with whatever it does untimed before it, such as flushing a
// cache) and returns the seconds of its timed part.
template <typename RunOnce>
Spread measure(const MeasureOptions& options, RunOnce&& run_once) {
  for (int i = 0; i < options.warmup; ++i) run_once();
  std::vector<double> seconds;
  double total = 0;
  while (static_cast<int>(seconds.size()) < options.min_runs ||
         (static_cast<int>(seconds.size()) < options.max_runs && total < options.budget_seconds)) {
    const double s = run_once();
    seconds.push_back(s);
    total += s;
  }
  return summarize(std::move(seconds));
}

}  // namespace ppsim::calibrate
