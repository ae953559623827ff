// SPDX-License-Identifier: Apache-2.0
#include "synth/list_scheduler.hpp"

#include "synth/placed_ops.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace ppsim {
namespace {


struct Candidate {
  Action action;
  double ready = kNotYet;
};

class ListScheduler {
 public:
  ListScheduler(const SynthShape& shape, const std::vector<SynthStage>& stages, std::int64_t limit,
                const ListPolicy& policy)
      : shape_(shape), stages_(stages), placed_(shape, stages), limit_(limit), policy_(policy) {
    // Each device visits its stages shallow to deep; ties go to the first visited or the last.
    free_at_.assign(static_cast<std::size_t>(shape.p), 0);
    held_.assign(static_cast<std::size_t>(shape.p), 0);
    in_flight_.assign(static_cast<std::size_t>(shape.p), 0);
    program_.num_devices = shape.p;
    program_.num_microbatches = shape.m;
    program_.stage_device = shape.stage_device;
    program_.actions.resize(static_cast<std::size_t>(shape.p));
  }

  std::optional<Program> run() {
    const std::size_t total = 3 * stages_.size() * static_cast<std::size_t>(shape_.m);
    // A device's decision changes only when it places an op or a neighbour sends it an input, so
    // each placement recomputes at most three of them.
    std::vector<Decision> decisions(static_cast<std::size_t>(shape_.p));
    for (int d = 0; d < shape_.p; ++d) decisions[static_cast<std::size_t>(d)].time = decide(d, decisions[static_cast<std::size_t>(d)].op);
    for (std::size_t placed = 0; placed < total; ++placed) {
      int best_device = -1;
      double best_time = kNotYet;
      for (int d = 0; d < shape_.p; ++d) {
        if (decisions[static_cast<std::size_t>(d)].time < best_time) best_time = decisions[static_cast<std::size_t>(d)].time, best_device = d;
      }
      if (best_device < 0) return std::nullopt;
      const Action action = decisions[static_cast<std::size_t>(best_device)].op.action;
      place(best_device, action, best_time);
      const int count = static_cast<int>(stages_.size());
      for (const int s : {action.stage - 1, action.stage, action.stage + 1}) {
        if (s < 0 || s >= count) continue;
        const int d = stages_[static_cast<std::size_t>(s)].device;
        decisions[static_cast<std::size_t>(d)].time = decide(d, decisions[static_cast<std::size_t>(d)].op);
      }
    }
    return std::move(program_);
  }

  struct Decision {
    double time = kNotYet;
    Candidate op;
  };

 private:
  int cap(int d) const {
    if (policy_.cap_base <= 0) return std::numeric_limits<int>::max();
    return std::max(1, policy_.cap_base - policy_.cap_slope * d);
  }

  // What an F on stage s keeps free for the deeper stages of its device (reserve_deeper).
  std::int64_t reserve(int s) const {
    if (!policy_.reserve_deeper) return 0;
    std::int64_t kept = 0;
    for (const int deeper : placed_.device_stages[static_cast<std::size_t>(stages_[static_cast<std::size_t>(s)].device)]) {
      if (deeper > s) kept += stages_[static_cast<std::size_t>(deeper)].activation_bytes;
    }
    return kept;
  }

  // When device d next starts an op and which, by the policy; kNotYet when it cannot.
  double decide(int d, Candidate& chosen) const {
    const auto device = static_cast<std::size_t>(d);
    // Per kind, the device's next op of each of its stages, shallow to deep.
    std::array<std::vector<Candidate>, 3> kinds;
    for (const int s : placed_.device_stages[device]) {
      const auto& next = placed_.next[static_cast<std::size_t>(s)];
      const SynthStage& stage = stages_[static_cast<std::size_t>(s)];
      if (next[0] < shape_.m && held_[device] + stage.activation_bytes + reserve(s) <= limit_ &&
          in_flight_[device] < cap(d)) {
        const double ready = placed_.forward_ready(s, next[0]);
        if (ready < kNotYet) kinds[0].push_back({Action{s, Op::kForward, next[0]}, ready});
      }
      if (next[1] < next[0]) {
        const double ready = placed_.input_ready(s, next[1]);
        if (ready < kNotYet) kinds[1].push_back({Action{s, Op::kBackwardInput, next[1]}, ready});
      }
      if (next[2] < next[1]) kinds[2].push_back({Action{s, Op::kBackwardWeight, next[2]}, placed_.weight_ready(s, next[2])});
    }
    const auto soonest = [](const std::vector<Candidate>& list) {
      double ready = kNotYet;
      for (const Candidate& op : list) ready = std::min(ready, op.ready);
      return ready;
    };
    const double free = free_at_[device];
    const double earliest = std::max(free, std::min({soonest(kinds[0]), soonest(kinds[1]), soonest(kinds[2])}));
    if (earliest == kNotYet) return kNotYet;
    // The preferred op of a kind among those ready by `time`: the deepest or the shallowest stage.
    const auto preferred = [&](int kind, double time, Candidate& op) {
      const bool deep = kind == 0 ? policy_.deep_first : policy_.deep_first_backward;
      bool found = false;
      for (const Candidate& candidate : kinds[static_cast<std::size_t>(kind)]) {
        if (candidate.ready > time) continue;
        if (!found || deep) op = candidate;
        found = true;
      }
      return found;
    };
    const auto pick = [&](double time) -> bool {
      Candidate forward, input;
      const bool f = preferred(0, time, forward);
      const bool i = preferred(1, time, input);
      if (f && (policy_.forward_first || !i)) return chosen = forward, true;
      if (i) return chosen = input, true;
      return false;
    };
    if (pick(earliest)) return earliest;
    Candidate weight;
    preferred(2, earliest, weight);
    // Only a W is ready: run it, unless it would still run when an input may arrive. An input whose
    // producer is not placed yet arrives no sooner than its chain of producers allows, each starting
    // when its device is free at the earliest.
    const double weight_time = stages_[static_cast<std::size_t>(weight.action.stage)].weight;
    if (policy_.fitting_weights) {
      const double known = std::max(free, std::min(soonest(kinds[0]), soonest(kinds[1])));
      double next_input = known;
      for (const int s : placed_.device_stages[device]) {
        const auto& next = placed_.next[static_cast<std::size_t>(s)];
        if (next[1] < next[0]) next_input = std::min(next_input, earliest_input_arrival(s, next[1]));
        if (next[0] < shape_.m && s > 0) next_input = std::min(next_input, earliest_forward_arrival(s, next[0]));
      }
      if (earliest + weight_time > next_input) {
        if (known < kNotYet && known < earliest + weight_time) {
          pick(known);
          return known;
        }
      }
    }
    chosen = weight;
    return earliest;
  }

  // The earliest F(s, k)'s input (from stage s-1) can arrive, placed or not.
  double earliest_forward_arrival(int s, int k) const {
    if (s == 0) return 0;
    const SynthStage& before = stages_[static_cast<std::size_t>(s - 1)];
    const double end = placed_.forward_end[placed_.at(s - 1, k)];
    if (end < kNotYet) return end + before.to_next;
    const double start = std::max(free_at_[static_cast<std::size_t>(before.device)], earliest_forward_arrival(s - 1, k));
    return start + before.forward + before.to_next;
  }
  // The earliest I(s, k)'s input (the gradient from stage s+1, or on the last stage its own F) can arrive.
  double earliest_input_arrival(int s, int k) const {
    const int last = static_cast<int>(stages_.size()) - 1;
    if (s == last) {
      const double end = placed_.forward_end[placed_.at(s, k)];
      return end < kNotYet ? end
                          : std::max(free_at_[static_cast<std::size_t>(stages_[static_cast<std::size_t>(s)].device)],
                                     earliest_forward_arrival(s, k)) +
                                stages_[static_cast<std::size_t>(s)].forward;
    }
    const SynthStage& after = stages_[static_cast<std::size_t>(s + 1)];
    const double end = placed_.input_end[placed_.at(s + 1, k)];
    if (end < kNotYet) return end + after.to_previous;
    const double start = std::max(free_at_[static_cast<std::size_t>(after.device)], earliest_input_arrival(s + 1, k));
    return start + after.input + after.to_previous;
  }

  void place(int d, const Action& action, double start) {
    const auto device = static_cast<std::size_t>(d);
    const SynthStage& stage = stages_[static_cast<std::size_t>(action.stage)];
    auto& next = placed_.next[static_cast<std::size_t>(action.stage)];
    double end = start;
    switch (action.op) {
      case Op::kForward:
        end += stage.forward;
        placed_.forward_end[placed_.at(action.stage, action.microbatch)] = end;
        held_[device] += stage.activation_bytes;
        ++in_flight_[device];
        ++next[0];
        break;
      case Op::kBackwardInput:
        end += stage.input;
        placed_.input_end[placed_.at(action.stage, action.microbatch)] = end;
        held_[device] -= stage.activation_bytes - stage.weight_bytes;
        --in_flight_[device];
        ++next[1];
        break;
      default:
        end += stage.weight;
        held_[device] -= stage.weight_bytes;
        ++next[2];
        break;
    }
    free_at_[device] = end;
    program_.actions[device].push_back(action);
  }

  const SynthShape& shape_;
  const std::vector<SynthStage>& stages_;
  PlacedOps placed_;
  std::int64_t limit_;
  ListPolicy policy_;
  std::vector<double> free_at_;
  std::vector<std::int64_t> held_;
  std::vector<int> in_flight_;
  Program program_;
};

}  // namespace

std::optional<Program> list_schedule(const SynthShape& shape, const std::vector<SynthStage>& stages,
                                     std::int64_t memory_limit, const ListPolicy& policy) {
  return ListScheduler(shape, stages, memory_limit, policy).run();
}

}  // namespace ppsim
