// SPDX-License-Identifier: Apache-2.0
#pragma once
// Builds per-device orders of F, I and W by list scheduling: whenever a device is free, it takes one
// of the ops whose inputs have arrived, by a policy, under a per-device activation-memory limit. The
// zero-bubble paper's heuristic works this way (Qi et al., ICLR 2024, §3.1): I first, since the device
// before waits for its gradient; F while memory allows; W to fill what would otherwise be idle.

#include <cstdint>
#include <optional>
#include <vector>

#include "schedules/program.hpp"
#include "synth/stage_costs.hpp"

namespace ppsim {

struct ListPolicy {
  // An F before a ready I while the device has fewer than its cap of forwards in flight (a
  // warmup), else I first.
  bool forward_first = false;
  // In-flight forwards on device d at most cap_base - cap_slope * d (at least one); cap_base 0: memory only.
  int cap_base = 0;
  int cap_slope = 0;
  // Among ready ops of one kind, the deeper stage (nearer the loss) first: for forwards, and for
  // input and weight gradients.
  bool deep_first = true;
  bool deep_first_backward = true;
  // A W runs in a wait only if it ends before the device's next input may arrive.
  bool fitting_weights = false;
  // An F leaves room for one stash of each deeper stage of its device, so that a tight limit never
  // fills a device with shallow stashes while the deeper ones, which free them, cannot start.
  bool reserve_deeper = false;
};

struct SynthShape {
  int p = 0;
  int m = 0;
  std::vector<int> stage_device;
};

// The orders, or nothing when the memory limit leaves some device unable to go on (a limit below
// what one stash per stage needs).
std::optional<Program> list_schedule(const SynthShape& shape, const std::vector<SynthStage>& stages,
                                     std::int64_t memory_limit, const ListPolicy& policy);

}  // namespace ppsim
