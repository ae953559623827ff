// SPDX-License-Identifier: Apache-2.0
#include "synth/exhaustive.hpp"

#include "synth/placed_ops.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace ppsim {
namespace {

// Start times equal up to rounding count as equal: the canonical order breaks their tie by device.
constexpr double kSlack = 1e-9;

class BranchAndBound {
 public:
  BranchAndBound(const SynthShape& shape, const std::vector<SynthStage>& stages, std::int64_t limit, double upper,
                 std::int64_t budget)
      : shape_(shape), stages_(stages), placed_(shape, stages), limit_(limit), best_makespan_(upper), budget_(budget) {
    const auto count = stages.size();
    const auto m = static_cast<std::size_t>(shape.m);
    remaining_.assign(static_cast<std::size_t>(shape.p), 0);
    for (int s = 0; s < static_cast<int>(count); ++s) {
      const SynthStage& stage = stages[static_cast<std::size_t>(s)];
      remaining_[static_cast<std::size_t>(stage.device)] +=
          static_cast<double>(shape.m) * (stage.forward + stage.input + stage.weight);
    }
    free_at_.assign(static_cast<std::size_t>(shape.p), 0);
    held_.assign(static_cast<std::size_t>(shape.p), 0);
    orders_.resize(static_cast<std::size_t>(shape.p));
    total_ = 3 * count * m;
  }

  ExhaustiveResult run() {
    search(0, 0.0, -1, 0.0);
    ExhaustiveResult result;
    result.nodes = nodes_;
    result.proved = nodes_ <= budget_;
    result.makespan = best_makespan_;
    if (!best_orders_.empty()) {
      Program program;
      program.num_devices = shape_.p;
      program.num_microbatches = shape_.m;
      program.stage_device = shape_.stage_device;
      program.actions = best_orders_;
      result.best = std::move(program);
    }
    return result;
  }

 private:
  double duration(const Action& a) const {
    const SynthStage& stage = stages_[static_cast<std::size_t>(a.stage)];
    return a.op == Op::kForward ? stage.forward : a.op == Op::kBackwardInput ? stage.input : stage.weight;
  }
  double ready(const Action& a) const {
    return a.op == Op::kForward         ? placed_.forward_ready(a.stage, a.microbatch)
           : a.op == Op::kBackwardInput ? placed_.input_ready(a.stage, a.microbatch)
                                        : placed_.weight_ready(a.stage, a.microbatch);
  }


  // The last micro-batch's chain (its F's down, I's back up, each W after its I) can finish no
  // sooner than its ops run one after the other, each once its device is free.
  double last_microbatch_bound() const {
    const int k = shape_.m - 1;
    const int count = static_cast<int>(stages_.size());
    const auto free = [&](int s) { return free_at_[static_cast<std::size_t>(stages_[static_cast<std::size_t>(s)].device)]; };
    double arrival = 0;
    double forward = 0;
    for (int s = 0; s < count; ++s) {
      const SynthStage& stage = stages_[static_cast<std::size_t>(s)];
      const double done = placed_.forward_end[placed_.at(s, k)];
      forward = done < kNotYet ? done : std::max(free(s), arrival) + stage.forward;
      arrival = forward + stage.to_next;
    }
    double bound = 0;
    double input = forward;
    for (int s = count - 1; s >= 0; --s) {
      const SynthStage& stage = stages_[static_cast<std::size_t>(s)];
      const double done = placed_.input_end[placed_.at(s, k)];
      const double ready = s == count - 1 ? forward : input + stages_[static_cast<std::size_t>(s + 1)].to_previous;
      input = done < kNotYet ? done : std::max(free(s), ready) + stage.input;
      // Its W, unless already run (then the device's free time already counts it).
      if (placed_.next[static_cast<std::size_t>(s)][2] <= k) bound = std::max(bound, std::max(free(s), input) + stage.weight);
    }
    return bound;
  }

  // `placed` ops so far, the last placed started at `last_start` on `last_device`; `makespan` so far.
  void search(std::size_t placed, double last_start, int last_device, double makespan) {
    if (++nodes_ > budget_) return;
    if (placed == total_) {
      if (makespan < best_makespan_ - kSlack) {
        best_makespan_ = makespan;
        best_orders_ = orders_;
      }
      return;
    }
    // Every device still has to run its remaining work, none of it before last_start.
    double bound = makespan;
    for (int d = 0; d < shape_.p; ++d) {
      const auto device = static_cast<std::size_t>(d);
      if (remaining_[device] > 0) bound = std::max(bound, std::max(free_at_[device], last_start) + remaining_[device]);
    }
    bound = std::max(bound, last_microbatch_bound());
    if (bound >= best_makespan_ - kSlack) return;
    // Candidates in order of start time, so good orders come first and tighten the bound early.
    struct Move {
      double start;
      int device;
      Action action;
    };
    std::vector<Move> moves;
    for (int d = 0; d < shape_.p; ++d) {
      const auto device = static_cast<std::size_t>(d);
      for (const int s : placed_.device_stages[device]) {
        const auto& next = placed_.next[static_cast<std::size_t>(s)];
        const SynthStage& stage = stages_[static_cast<std::size_t>(s)];
        const auto consider = [&](const Action& a) {
          const double r = ready(a);
          if (r == kNotYet) return;
          const double start = std::max(free_at_[device], r);
          // Canonical order: starts never decrease, and equal starts go up by device.
          if (start < last_start - kSlack) return;
          if (start <= last_start + kSlack && d < last_device) return;
          moves.push_back({start, d, a});
        };
        if (next[0] < shape_.m && held_[device] + stage.activation_bytes <= limit_) consider({s, Op::kForward, next[0]});
        if (next[1] < next[0]) consider({s, Op::kBackwardInput, next[1]});
        if (next[2] < next[1]) consider({s, Op::kBackwardWeight, next[2]});
      }
    }
    std::sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
      return a.start != b.start ? a.start < b.start : a.device < b.device;
    });
    for (const Move& move : moves) {
      apply(move.device, move.action, move.start, +1);
      const double end = move.start + duration(move.action);
      search(placed + 1, move.start, move.device, std::max(makespan, end));
      apply(move.device, move.action, move.start, -1);
      if (nodes_ > budget_) return;
    }
  }

  void apply(int d, const Action& a, double start, int sign) {
    const auto device = static_cast<std::size_t>(d);
    const SynthStage& stage = stages_[static_cast<std::size_t>(a.stage)];
    auto& next = placed_.next[static_cast<std::size_t>(a.stage)];
    const double time = duration(a);
    const int kind = a.op == Op::kForward ? 0 : a.op == Op::kBackwardInput ? 1 : 2;
    if (sign > 0) {
      saved_free_.push_back(free_at_[device]);
      free_at_[device] = start + time;
      orders_[device].push_back(a);
      ++next[static_cast<std::size_t>(kind)];
      if (kind == 0) placed_.forward_end[placed_.at(a.stage, a.microbatch)] = start + time;
      if (kind == 1) placed_.input_end[placed_.at(a.stage, a.microbatch)] = start + time;
    } else {
      free_at_[device] = saved_free_.back();
      saved_free_.pop_back();
      orders_[device].pop_back();
      --next[static_cast<std::size_t>(kind)];
      if (kind == 0) placed_.forward_end[placed_.at(a.stage, a.microbatch)] = kNotYet;
      if (kind == 1) placed_.input_end[placed_.at(a.stage, a.microbatch)] = kNotYet;
    }
    remaining_[device] -= sign * time;
    const std::int64_t delta = kind == 0   ? stage.activation_bytes
                               : kind == 1 ? -(stage.activation_bytes - stage.weight_bytes)
                                           : -stage.weight_bytes;
    held_[device] += sign * delta;
  }

  const SynthShape& shape_;
  const std::vector<SynthStage>& stages_;
  PlacedOps placed_;
  std::int64_t limit_;
  double best_makespan_;
  std::int64_t budget_;
  std::int64_t nodes_ = 0;
  std::size_t total_ = 0;
  std::vector<double> remaining_;
  std::vector<double> free_at_;
  std::vector<double> saved_free_;
  std::vector<std::int64_t> held_;
  std::vector<std::vector<Action>> orders_;
  std::vector<std::vector<Action>> best_orders_;
};

}  // namespace

ExhaustiveResult exhaustive_schedule(const SynthShape& shape, const std::vector<SynthStage>& stages,
                                     std::int64_t memory_limit, double upper_bound, std::int64_t node_budget) {
  return BranchAndBound(shape, stages, memory_limit, upper_bound, node_budget).run();
}

}  // namespace ppsim
