// SPDX-License-Identifier: Apache-2.0
#include "schedules/held_weight_order.hpp"

#include <algorithm>

namespace ppsim {

ActionStream held_weight_order(int stage, int m, int warmup, int held) {
  int forward = 0;
  int input = 0;
  int weight = 0;
  while (forward < std::min(warmup, m)) co_yield Action{stage, Op::kForward, forward++};
  while (forward < m) {
    co_yield Action{stage, Op::kForward, forward++};
    co_yield Action{stage, Op::kBackwardInput, input++};
    if (input - weight > held) co_yield Action{stage, Op::kBackwardWeight, weight++};
  }
  while (input < m) {
    co_yield Action{stage, Op::kBackwardInput, input++};
    if (input - weight > held) co_yield Action{stage, Op::kBackwardWeight, weight++};
  }
  while (weight < m) co_yield Action{stage, Op::kBackwardWeight, weight++};
}

}  // namespace ppsim
