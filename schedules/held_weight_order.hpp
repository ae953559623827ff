#pragma once
// The per-device order shared by ZB-H1 and ZB-H2 (Qi et al., ICLR 2024, Fig. 3): they differ only in
// how many warmup forwards a device runs and how many W's it holds back.

#include <algorithm>
#include <vector>

#include "schedules/action.hpp"

namespace ppsim {

// One device's list: `warmup` forwards, then F, I (and W once more than `held` W's are pending),
// then the remaining I's each followed by a W while more than `held` are pending, then the rest.
inline void append_held_weight_order(std::vector<Action>& list, int stage, int m, int warmup, int held) {
  int forward = 0;
  int input = 0;
  int weight = 0;
  const auto add = [&](Op op, int& next) { list.push_back({stage, op, next++}); };
  const auto maybe_weight = [&] {
    if (input - weight > held) add(Op::kBackwardWeight, weight);
  };
  while (forward < std::min(warmup, m)) add(Op::kForward, forward);
  while (forward < m) {
    add(Op::kForward, forward);
    add(Op::kBackwardInput, input);
    maybe_weight();
  }
  while (input < m) {
    add(Op::kBackwardInput, input);
    maybe_weight();
  }
  while (weight < m) add(Op::kBackwardWeight, weight);
}

}  // namespace ppsim
