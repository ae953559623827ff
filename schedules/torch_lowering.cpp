// SPDX-License-Identifier: Apache-2.0
#include "schedules/torch_lowering.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

namespace ppsim {
namespace {

constexpr int kMaxActiveStages = 3;  // _add_unshard_reshard's default

// One entry of a device's lowered list: a compute cell (one action, or an overlapped pair, which
// torch prints as one OVERLAP_F_B cell) or a communication / FSDP action.
struct Item {
  bool compute = false;
  std::size_t first = 0;  // compute: the cell's first position in the device's list
  std::size_t count = 0;  // compute: 1, or 2 for a pair
  CommAction comm;        // otherwise
};

// The cells of one device: each starts at a position and holds one or two actions.
std::vector<Item> cells_of(const std::vector<Action>& list) {
  std::vector<Item> cells;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::size_t count = list[i].fused_with_next && i + 1 < list.size() ? 2 : 1;
    cells.push_back(Item{true, i, count, {}});
    i += count - 1;
  }
  return cells;
}

Item comm_item(CommOp op, std::int32_t stage, std::int32_t microbatch = -1) {
  return Item{false, 0, 0, CommAction{0, op, stage, microbatch}};
}

// Passes 1 and 2 for one device: its cells with UNSHARD, RESHARD and REDUCE_GRAD among them.
std::vector<Item> with_fsdp_actions(const std::vector<Action>& list, int m) {
  const std::vector<Item> cells = cells_of(list);
  std::vector<Item> items;
  std::vector<std::int32_t> active;  // unsharded stages, kept sorted (see the header)
  std::vector<int> gradients;        // per stage: B and W done, for REDUCE_GRAD
  // For each cell, the next kMaxActiveStages distinct stages from it on; a pair adds both halves
  // before the count is tested, as next_stage_indices does. Built backwards from each stage's first
  // cell from here on (`firsts`, in cell order), so a device whose stages are fewer than
  // kMaxActiveStages costs a pass over its cells, not one per cell.
  std::vector<std::vector<std::int32_t>> lookahead(cells.size());
  std::vector<std::pair<std::int32_t, std::size_t>> firsts;  // (stage, cell where it first appears)
  for (std::size_t c = cells.size(); c-- > 0;) {
    std::vector<std::pair<std::int32_t, std::size_t>> here;
    for (std::size_t h = 0; h < cells[c].count; ++h) {
      const std::int32_t stage = list[cells[c].first + h].stage;
      if (std::none_of(here.begin(), here.end(), [&](const auto& entry) { return entry.first == stage; })) {
        here.emplace_back(stage, c);
      }
    }
    std::erase_if(firsts, [&](const auto& entry) {
      return std::any_of(here.begin(), here.end(), [&](const auto& mine) { return mine.first == entry.first; });
    });
    firsts.insert(firsts.begin(), here.begin(), here.end());
    std::vector<std::int32_t>& next = lookahead[c];
    for (std::size_t i = 0; i < firsts.size() && static_cast<int>(next.size()) < kMaxActiveStages;) {
      const std::size_t cell = firsts[i].second;
      for (; i < firsts.size() && firsts[i].second == cell; ++i) next.push_back(firsts[i].first);
    }
  }
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const std::vector<std::int32_t>& next = lookahead[c];
    std::vector<std::int32_t> evict;
    for (const std::int32_t stage : active) {
      if (std::find(next.begin(), next.end(), stage) == next.end()) evict.push_back(stage);
    }
    for (const std::int32_t stage : evict) {
      items.push_back(comm_item(CommOp::kReshard, stage));
      active.erase(std::find(active.begin(), active.end(), stage));
    }
    for (const std::int32_t stage : next) {
      if (std::find(active.begin(), active.end(), stage) != active.end()) continue;
      items.push_back(comm_item(CommOp::kUnshard, stage));
      active.insert(std::upper_bound(active.begin(), active.end(), stage), stage);
    }
    items.push_back(cells[c]);
    // _add_reduce_grad: W and B count (not I); the m-th of a stage is followed by its REDUCE_GRAD.
    for (std::size_t h = 0; h < cells[c].count; ++h) {
      const Action& a = list[cells[c].first + h];
      if (a.op != Op::kBackward && a.op != Op::kBackwardWeight) continue;
      const auto stage = static_cast<std::size_t>(a.stage);
      if (gradients.size() <= stage) gradients.resize(stage + 1, 0);
      if (++gradients[stage] == m) items.push_back(comm_item(CommOp::kReduceGrad, a.stage));
    }
  }
  for (const std::int32_t stage : active) items.push_back(comm_item(CommOp::kReshard, stage));
  return items;
}

}  // namespace

Program lower_like_torch(const Program& program) {
  const std::size_t p = program.actions.size();
  const PipelineShape shape = program.pipeline_shape();
  const std::size_t m = static_cast<std::size_t>(program.num_microbatches);
  auto device_of = [&](std::int32_t stage) { return program.stage_device[static_cast<std::size_t>(stage)]; };
  auto key = [&](std::int32_t stage, std::int32_t microbatch) {
    return static_cast<std::size_t>(stage) * m + static_cast<std::size_t>(microbatch);
  };

  std::vector<std::deque<Item>> queues(p);
  for (std::size_t d = 0; d < p; ++d) {
    const std::vector<Item> items = with_fsdp_actions(program.actions[d], program.num_microbatches);
    queues[d].assign(items.begin(), items.end());
  }
  // What each device has taken so far. Every action is taken on one device (a compute action and its
  // SEND on the stage's, a RECV on the receiving stage's), so one table per kind serves all devices:
  // "F(s-1, j) was taken on this device" is "F(s-1, j) was taken and s-1 is on this device".
  const std::size_t slots = static_cast<std::size_t>(shape.stages) * m;
  std::vector<char> forward_done(slots), input_grad_done(slots), full_backward_done(slots);
  std::vector<char> recv_f(slots), recv_b(slots);

  auto ready = [&](const Action& a, int device) {
    if (a.op == Op::kForward && !shape.first(a.stage)) {
      return recv_f[key(a.stage, a.microbatch)] ||
             (forward_done[key(a.stage - 1, a.microbatch)] && device_of(a.stage - 1) == device);
    }
    if (is_backward_input(a.op) && !shape.last(a.stage)) {
      const std::size_t next = key(a.stage + 1, a.microbatch);
      return recv_b[key(a.stage, a.microbatch)] ||
             ((input_grad_done[next] || full_backward_done[next]) && device_of(a.stage + 1) == device);
    }
    return true;
  };

  std::vector<std::vector<Item>> lowered(p);
  std::size_t remaining = 0;
  for (const auto& queue : queues) remaining += queue.size();
  while (remaining > 0) {
    bool progress = false;
    for (std::size_t d = 0; d < p; ++d) {
      if (queues[d].empty()) continue;
      const Item head = queues[d].front();
      const int device = static_cast<int>(d);
      if (head.compute) {
        bool all_ready = true;
        for (std::size_t h = 0; h < head.count; ++h) {
          all_ready = all_ready && ready(program.actions[d][head.first + h], device);
        }
        if (!all_ready) continue;
      }
      lowered[d].push_back(head);
      for (std::size_t h = 0; head.compute && h < head.count; ++h) {
        const Action& a = program.actions[d][head.first + h];
        const std::size_t k = key(a.stage, a.microbatch);
        if (a.op == Op::kForward) forward_done[k] = 1;
        if (a.op == Op::kBackwardInput) input_grad_done[k] = 1;
        if (a.op == Op::kBackward) full_backward_done[k] = 1;
        // The output crosses devices: the SEND follows the op here, the RECV joins the receiver's list now.
        if (a.op == Op::kForward && !shape.last(a.stage) && device_of(a.stage + 1) != device) {
          lowered[d].push_back(comm_item(CommOp::kSendF, a.stage, a.microbatch));
          lowered[static_cast<std::size_t>(device_of(a.stage + 1))].push_back(
              comm_item(CommOp::kRecvF, a.stage + 1, a.microbatch));
          recv_f[key(a.stage + 1, a.microbatch)] = 1;
        }
        if (is_backward_input(a.op) && !shape.first(a.stage) && device_of(a.stage - 1) != device) {
          lowered[d].push_back(comm_item(CommOp::kSendB, a.stage, a.microbatch));
          lowered[static_cast<std::size_t>(device_of(a.stage - 1))].push_back(
              comm_item(CommOp::kRecvB, a.stage - 1, a.microbatch));
          recv_b[key(a.stage - 1, a.microbatch)] = 1;
        }
      }
      queues[d].pop_front();
      --remaining;
      progress = true;
    }
    if (!progress) {
      throw std::runtime_error("the schedule cannot be lowered: no device can take its next action "
                               "(torch: Malformed compute schedule, can't schedule sends/recvs)");
    }
  }

  Program result = program;
  result.comms.assign(p, {});
  for (std::size_t d = 0; d < p; ++d) {
    std::size_t position = 0;
    for (const Item& item : lowered[d]) {
      if (item.compute) {
        position = item.first + item.count;
        continue;
      }
      CommAction comm = item.comm;
      comm.before = position;
      result.comms[d].push_back(comm);
    }
  }
  return result;
}

}  // namespace ppsim
