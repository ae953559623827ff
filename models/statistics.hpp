// SPDX-License-Identifier: Apache-2.0
#pragma once
// The distribution of one figure over many random draws (mean, standard deviation, percentiles)
// and a histogram of it: Monte-Carlo steps and Monte-Carlo training runs report these.

#include <cstdint>
#include <vector>

namespace ppsim {

struct Distribution {
  double mean = 0;
  double stdev = 0;  // the sample standard deviation (n - 1); 0 for one sample
  double min = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
};

// Percentiles interpolate linearly between the nearest ranks, at (n - 1) * q (numpy's default), so
// min <= p50 <= p90 <= p99 <= max. `values` must not be empty.
Distribution distribution_of(std::vector<double> values);

struct Histogram {
  std::vector<double> edges;  // bins + 1 edges from min to max
  std::vector<std::int64_t> counts;
};

// `bins` equal bins over [min, max] (one bin when all values are equal).
Histogram histogram_of(const std::vector<double>& values, int bins);

}  // namespace ppsim
