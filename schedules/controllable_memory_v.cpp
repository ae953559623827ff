// SPDX-License-Identifier: Apache-2.0
// V-Half and V-Min (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024,
// arXiv 2405.15362): V-shaped schedules built from a repeating building block whose lifespan sets
// the activation memory: about 1/2 (V-Half) and 1/3 (V-Min) of 1F1B's.
//
// The construction is the one of the zero-bubble repository (sail-sg/zero-bubble-pipeline-parallelism
// 39f2c186, megatron/core/pipeline_parallel/zerobubble/scheduler/zbv_greedy.py, as its runtime calls
// it for --zero-bubble-v-schedule-mem-setup half|min), on a grid of unit slots, six per micro-batch and
// device (F and I of each chunk, and two W's):
// 1. The building block fixes the slots of micro-batch 0 on device i (chunk 0 is stage i, chunk 1
//    stage 2p-1-i); micro-batch k takes the same slots plus 6k.
//      V-Min:  F0 at i,  F1 at 2p-1-i, I1 at 2p+e+i,   I0 at 4p+e-1-i,  e = 2 if 3 | p, else 0
//      V-Half: F0 at 2i, F1 at 3p-2-i, I1 at 3p+e+2i-1, I0 at 6p+e-2-i, e = 3 if p is even, else 0
// 2. W's go into the idle slots, first in first out; the most stashes any device holds is the memory
//    budget from then on.
// 3. Squeeze: in global slot order, every op of the warmup (before device 0's first chunk-0 I) and of
//    the cooldown (after the last micro-batch's first forward) moves to the earliest free slot after
//    its inputs where its device stays within the budget; the steady state keeps its slots. The grid
//    is then compacted with unit costs (each op as early as its inputs and its device allow).
// 4. The same again without W's (each idle slot is assumed to run one), for the cooldown only.
// 5. W's are put into the idle slots once more, chunk 1's before chunk 0's, and each device runs its
//    ops in slot order. The costs never change the order: the repository's runtime builds these
//    schedules with F = B = W.
// Memory counts as the repository does: F holds a stash, I keeps it, W frees it.
#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <queue>
#include <tuple>
#include <utility>

#include "schedules/builders.hpp"

namespace ppsim {
namespace {

enum class MemorySetup { kHalf, kMin };

// Slot kinds, in the repository's order (ties between kinds at one slot go to the lower one).
constexpr int kF0 = 0, kF1 = 1, kI1 = 2, kI0 = 3, kW = 4, kW0 = 5;  // kW is W1 once W's are split
constexpr int kComputeKinds = 4;

// A device's slots: kinds[t][k] is the slot of micro-batch k's op of kind t.
struct DeviceSlots {
  std::vector<std::vector<int>> kinds;
  int last_slot() const {
    int last = 0;
    for (const auto& list : kinds) last = std::max(last, list.back());
    return last;
  }
};
using Grid = std::vector<DeviceSlots>;

std::array<int, 4> building_block(MemorySetup setup, int p, int i) {
  if (setup == MemorySetup::kMin) {
    const int e = p % 3 == 0 ? 2 : 0;
    return {i, 2 * p - 1 - i, 2 * p + e + i, 4 * p + e - 1 - i};
  }
  const int e = p % 2 == 0 ? 3 : 0;
  return {2 * i, 3 * p - 2 - i, 3 * p + e + 2 * i - 1, 6 * p + e - 2 - i};
}

// The device's ops in slot order, as (slot, kind, micro-batch), from its per-kind lists.
template <typename Visit>
void in_slot_order(const DeviceSlots& device, int kinds, Visit visit) {
  std::vector<std::size_t> next(static_cast<std::size_t>(kinds), 0);
  while (true) {
    int best = -1;
    for (int t = 0; t < kinds; ++t) {
      const auto& list = device.kinds[static_cast<std::size_t>(t)];
      if (next[static_cast<std::size_t>(t)] >= list.size()) continue;
      if (best < 0 || list[next[static_cast<std::size_t>(t)]] <
                          device.kinds[static_cast<std::size_t>(best)][next[static_cast<std::size_t>(best)]]) {
        best = t;
      }
    }
    if (best < 0) return;
    const std::size_t k = next[static_cast<std::size_t>(best)]++;
    visit(device.kinds[static_cast<std::size_t>(best)][k], best, static_cast<int>(k));
  }
}

// Step 2 and 5: one W per idle slot while any is owed (an I owes its W), the rest after the last
// op. Split: chunk 1's W's (kind kW) and chunk 0's (kW0) apart, chunk 1's first.
void put_weights(DeviceSlots& device, bool split) {
  const int last = device.last_slot();
  std::array<int, 2> owed{};
  std::array<std::vector<int>, 2> weights;
  std::vector<std::size_t> next(kComputeKinds, 0);
  for (int slot = 0; slot <= last; ++slot) {
    int kind = -1;
    for (int t = 0; t < kComputeKinds; ++t) {
      const auto& list = device.kinds[static_cast<std::size_t>(t)];
      if (next[static_cast<std::size_t>(t)] < list.size() && list[next[static_cast<std::size_t>(t)]] == slot) {
        kind = t;
        break;
      }
    }
    if (kind >= 0) {
      ++next[static_cast<std::size_t>(kind)];
      if (kind == kI1 || kind == kI0) ++owed[split && kind == kI0 ? 1 : 0];
      continue;
    }
    for (std::size_t w = 0; w < 2; ++w) {
      if (owed[w] > 0) {
        weights[w].push_back(slot);
        --owed[w];
        break;
      }
    }
  }
  int slot = last;
  for (std::size_t w = 0; w < 2; ++w) {
    for (; owed[w] > 0; --owed[w]) weights[w].push_back(++slot);
  }
  device.kinds.resize(kComputeKinds);
  device.kinds.push_back(std::move(weights[0]));
  if (split) device.kinds.push_back(std::move(weights[1]));
}

// The most stashes the device holds: F +1, I 0, W -1; without W slots, every idle slot runs an owed W.
int peak_stashes(const DeviceSlots& device) {
  const int kinds = static_cast<int>(device.kinds.size());
  const bool has_weights = kinds > kComputeKinds;
  int held = 0, peak = 0, owed = 0, expected = 0;
  in_slot_order(device, kinds, [&](int slot, int kind, int) {
    // Idle slots before this op.
    for (; expected < slot; ++expected) {
      if (!has_weights && owed > 0) --held, --owed;
      peak = std::max(peak, held);
    }
    held += kind == kF0 || kind == kF1 ? 1 : kind >= kW ? -1 : 0;
    if (kind == kI1 || kind == kI0) ++owed;
    peak = std::max(peak, held);
    expected = slot + 1;
  });
  return peak;
}

// Every op of every device in global order: slot, then device, then kind, then micro-batch.
template <typename Visit>
void in_global_order(const Grid& grid, int kinds, Visit visit) {
  using Head = std::tuple<int, int, int, int>;  // slot, device, kind, micro-batch
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (int d = 0; d < static_cast<int>(grid.size()); ++d) {
    for (int t = 0; t < kinds; ++t) heads.emplace(grid[static_cast<std::size_t>(d)].kinds[static_cast<std::size_t>(t)][0], d, t, 0);
  }
  while (!heads.empty()) {
    const auto [slot, d, t, k] = heads.top();
    heads.pop();
    const auto& list = grid[static_cast<std::size_t>(d)].kinds[static_cast<std::size_t>(t)];
    if (static_cast<std::size_t>(k) + 1 < list.size()) heads.emplace(list[static_cast<std::size_t>(k) + 1], d, t, k + 1);
    visit(slot, d, t, k);  // may move this op's slot, never a later one's
  }
}

// Compaction with unit costs: each op starts as soon as its inputs and its device allow, in the
// grid's order. F0 and I1 come from the device before, F1 and I0 from the device after; each kind
// follows the one before it for its micro-batch (F0, F1, I1, I0) and itself for the micro-batch before.
Grid compact(const Grid& grid) {
  const int p = static_cast<int>(grid.size());
  const int kinds = static_cast<int>(grid[0].kinds.size());
  Grid start = grid;
  Grid end = grid;
  std::vector<int> device_free(static_cast<std::size_t>(p), 0);
  in_global_order(grid, kinds, [&](int, int d, int t, int k) {
    const auto at = [&](int device, int kind, int mb) {
      return end[static_cast<std::size_t>(device)].kinds[static_cast<std::size_t>(kind)][static_cast<std::size_t>(mb)];
    };
    int ready = device_free[static_cast<std::size_t>(d)];
    if ((t == kF0 || t == kI1) && d > 0) ready = std::max(ready, at(d - 1, t, k));
    if ((t == kF1 || t == kI0) && d + 1 < p) ready = std::max(ready, at(d + 1, t, k));
    if (t > 0 && t < kComputeKinds) ready = std::max(ready, at(d, t - 1, k));
    if (k > 0) ready = std::max(ready, at(d, t, k - 1));
    start[static_cast<std::size_t>(d)].kinds[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)] = ready;
    end[static_cast<std::size_t>(d)].kinds[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)] = ready + 1;
    device_free[static_cast<std::size_t>(d)] = ready + 1;
  });
  return start;
}

// Steps 3 and 4. With W's, the warmup and the cooldown are squeezed; without, the cooldown only.
Grid squeeze(Grid grid, bool with_weights, int m) {
  if (with_weights) {
    for (DeviceSlots& device : grid) put_weights(device, false);
  }
  const int kinds = static_cast<int>(grid[0].kinds.size());
  int budget = 0;
  for (const DeviceSlots& device : grid) budget = std::max(budget, peak_stashes(device));
  std::vector<std::vector<bool>> occupied;
  for (const DeviceSlots& device : grid) occupied.emplace_back(static_cast<std::size_t>(device.last_slot()) + 1, false);
  const int p = static_cast<int>(grid.size());
  int phase = 0;  // 0 warmup, 1 steady, 2 cooldown
  in_global_order(grid, kinds, [&](int slot, int d, int t, int k) {
    DeviceSlots& device = grid[static_cast<std::size_t>(d)];
    int& own = device.kinds[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)];
    const auto keep = [&] { occupied[static_cast<std::size_t>(d)][static_cast<std::size_t>(own)] = true; };
    if (t == kI0 && d == 0 && phase == 0) phase = 1;
    if (phase == 1) {
      if (t == kF0 && k == m - 1) phase = 2;
      return keep();
    }
    if (phase == 0 && !with_weights) return keep();
    const auto at = [&](int device_index, int kind, int mb) {
      return grid[static_cast<std::size_t>(device_index)].kinds[static_cast<std::size_t>(kind)][static_cast<std::size_t>(mb)];
    };
    int after = -1;
    if ((t == kF0 || t == kI1) && d > 0) after = std::max(after, at(d - 1, t, k));
    if ((t == kF1 || t == kI0) && d + 1 < p) after = std::max(after, at(d + 1, t, k));
    if (t > 0 && t < kComputeKinds) after = std::max(after, at(d, t - 1, k));
    if (t == kW) {
      // The W of the k-th I in slot order, whichever chunk's.
      std::vector<int> inputs = device.kinds[kI1];
      inputs.insert(inputs.end(), device.kinds[kI0].begin(), device.kinds[kI0].end());
      std::nth_element(inputs.begin(), inputs.begin() + k, inputs.end());
      after = std::max(after, inputs[static_cast<std::size_t>(k)]);
    }
    if (k > 0) after = std::max(after, at(d, t, k - 1));
    for (int candidate = after + 1; candidate < slot; ++candidate) {
      if (occupied[static_cast<std::size_t>(d)][static_cast<std::size_t>(candidate)]) continue;
      own = candidate;
      if (peak_stashes(device) <= budget) return keep();
    }
    own = slot;
    keep();
  });
  if (!with_weights) {
    for (DeviceSlots& device : grid) put_weights(device, false);
  }
  return compact(grid);
}

void drop_weights(Grid& grid) {
  for (DeviceSlots& device : grid) device.kinds.resize(kComputeKinds);
}

using Orders = std::vector<std::vector<Action>>;

Orders build_orders(MemorySetup setup, int p, int m) {
  Grid grid(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    const std::array<int, 4> block = building_block(setup, p, i);
    for (const int first : block) {
      std::vector<int> slots;
      for (int k = 0; k < m; ++k) slots.push_back(first + 6 * k);
      grid[static_cast<std::size_t>(i)].kinds.push_back(std::move(slots));
    }
  }
  grid = squeeze(std::move(grid), true, m);
  drop_weights(grid);
  grid = squeeze(std::move(grid), false, m);
  drop_weights(grid);
  Orders orders(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    DeviceSlots& device = grid[static_cast<std::size_t>(i)];
    put_weights(device, true);
    const int chunk0 = i;
    const int chunk1 = 2 * p - 1 - i;
    in_slot_order(device, static_cast<int>(device.kinds.size()), [&](int, int kind, int k) {
      static constexpr std::array<Op, 6> kOps = {Op::kForward,       Op::kForward,        Op::kBackwardInput,
                                                 Op::kBackwardInput, Op::kBackwardWeight, Op::kBackwardWeight};
      const bool first_chunk = kind == kF0 || kind == kI0 || kind == kW0;
      orders[static_cast<std::size_t>(i)].push_back(
          Action{first_chunk ? chunk0 : chunk1, kOps[static_cast<std::size_t>(kind)], k});
    });
  }
  return orders;
}

// Every device's stream needs the whole grid; the last one built is kept per thread, so a program's
// p streams build it once.
std::shared_ptr<const Orders> orders_for(MemorySetup setup, int p, int m) {
  thread_local std::tuple<MemorySetup, int, int> key{MemorySetup::kHalf, 0, 0};
  thread_local std::shared_ptr<const Orders> cached;
  if (!cached || key != std::make_tuple(setup, p, m)) {
    cached = std::make_shared<const Orders>(build_orders(setup, p, m));
    key = {setup, p, m};
  }
  return cached;
}

ActionStream replay(std::shared_ptr<const Orders> orders, int d) {
  for (const Action& action : (*orders)[static_cast<std::size_t>(d)]) co_yield action;
}

ActionStream v_half_device(ScheduleParams params, int d) {
  return replay(orders_for(MemorySetup::kHalf, params.p, params.m), d);
}
ActionStream v_min_device(ScheduleParams params, int d) {
  return replay(orders_for(MemorySetup::kMin, params.p, params.m), d);
}

}  // namespace

std::optional<std::string> check_controllable_memory_v(const ScheduleParams& params) {
  if (params.v != 2) {
    return "needs v = 2: V-Half and V-Min place two chunks on each device, stages d and 2p-1-d (got v = " +
           std::to_string(params.v) + ")";
  }
  return std::nullopt;
}

ScheduleStreams v_half_streams(const ScheduleParams& params) {
  return {params, v_stage_mapping(params.p), v_half_device};
}

ScheduleStreams v_min_streams(const ScheduleParams& params) {
  return {params, v_stage_mapping(params.p), v_min_device};
}

}  // namespace ppsim
