// SPDX-License-Identifier: Apache-2.0
#pragma once
// The per-device order shared by ZB-H1 and ZB-H2 (Qi et al., ICLR 2024, Fig. 3): they differ only in
// how many warmup forwards a device runs and how many W's it holds back.

#include "schedules/action_stream.hpp"

namespace ppsim {

// One device's list: `warmup` forwards, then F, I (and W once more than `held` W's are pending),
// then the remaining I's each followed by a W while more than `held` are pending, then the rest.
ActionStream held_weight_order(int stage, int m, int warmup, int held);

}  // namespace ppsim
