// SPDX-License-Identifier: Apache-2.0
#include "models/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace ppsim {
namespace {

double percentile(const std::vector<double>& sorted, double q) {
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double weight = rank - static_cast<double>(below);
  // Equal neighbours give that value exactly, whatever the weight.
  if (sorted[below] == sorted[above]) return sorted[below];
  return sorted[below] + weight * (sorted[above] - sorted[below]);
}

}  // namespace

Distribution distribution_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  Distribution d;
  // Welford's one-pass update (Knuth, TAOCP vol. 2, 4.2.2): the mean moves by each value's
  // difference from it, so equal values give their value and a deviation of exactly 0, and a long
  // step with small noise keeps its digits where a sum of squares about a rounded mean would not.
  double mean = 0;
  double squares = 0;  // sum of squared differences from the running mean
  std::size_t k = 0;
  for (const double v : values) {
    ++k;
    const double delta = v - mean;
    mean += delta / static_cast<double>(k);
    squares += delta * (v - mean);
  }
  d.mean = mean;
  d.stdev = values.size() > 1 ? std::sqrt(squares / static_cast<double>(values.size() - 1)) : 0;
  d.min = values.front();
  d.max = values.back();
  d.p50 = percentile(values, 0.5);
  d.p90 = percentile(values, 0.9);
  d.p99 = percentile(values, 0.99);
  // The mean of equal values is that value, not a rounding error away from it.
  d.mean = std::clamp(d.mean, d.min, d.max);
  return d;
}

Histogram histogram_of(const std::vector<double>& values, int bins) {
  Histogram h;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  const double min = *low;
  const double max = *high;
  if (!(max > min)) bins = 1;
  for (int i = 0; i <= bins; ++i) h.edges.push_back(min + (max - min) * i / bins);
  h.edges.back() = max;
  h.counts.assign(static_cast<std::size_t>(bins), 0);
  for (const double v : values) {
    int bin = max > min ? static_cast<int>((v - min) / (max - min) * bins) : 0;
    bin = std::clamp(bin, 0, bins - 1);
    ++h.counts[static_cast<std::size_t>(bin)];
  }
  return h;
}

}  // namespace ppsim
