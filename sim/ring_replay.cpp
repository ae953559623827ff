// SPDX-License-Identifier: Apache-2.0
#include "sim/ring_replay.hpp"

#include <algorithm>
#include <cstddef>

namespace ppsim {

double replay_ring_attention(const std::vector<double>& step_compute, double transfer) {
  const std::size_t ranks = step_compute.size();
  if (ranks == 0) return 0;
  std::vector<double> holds(ranks, 0.0);      // when rank r has the block of its current step
  std::vector<double> done(ranks, 0.0);       // when rank r's previous step ended
  std::vector<double> link_free(ranks, 0.0);  // rank r's link to rank r + 1
  std::vector<double> next(ranks, 0.0);
  // Step k of rank r needs only step k - 1 of ranks r and r - 1: steps in order visit every
  // dependency first.
  for (std::size_t k = 0; k < ranks; ++k) {
    for (std::size_t r = 0; r < ranks; ++r) {
      const double start = std::max(done[r], holds[r]);
      if (k + 1 < ranks) {
        const double sent = std::max(start, link_free[r]);
        link_free[r] = sent + transfer;
        next[(r + 1) % ranks] = link_free[r];
      }
      done[r] = start + step_compute[k];
    }
    holds.swap(next);
  }
  return *std::max_element(done.begin(), done.end());
}

}  // namespace ppsim
