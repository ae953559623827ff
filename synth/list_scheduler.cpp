#include "synth/list_scheduler.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace ppsim {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct Candidate {
  Action action;
  double ready = kNever;
};

class ListScheduler {
 public:
  ListScheduler(const SynthShape& shape, const std::vector<StageCosts>& stages, std::int64_t limit,
                const ListPolicy& policy)
      : shape_(shape), stages_(stages), limit_(limit), policy_(policy) {
    const auto count = stages.size();
    const auto m = static_cast<std::size_t>(shape.m);
    forward_end_.assign(count * m, kNever);
    input_end_.assign(count * m, kNever);
    next_.assign(count, {0, 0, 0});
    device_stages_.resize(static_cast<std::size_t>(shape.p));
    for (int s = 0; s < static_cast<int>(count); ++s) device_stages_[static_cast<std::size_t>(stages[static_cast<std::size_t>(s)].device)].push_back(s);
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
    for (std::size_t placed = 0; placed < total; ++placed) {
      int best_device = -1;
      double best_time = kNever;
      Candidate best_op;
      for (int d = 0; d < shape_.p; ++d) {
        Candidate op;
        const double time = decide(d, op);
        if (time < best_time) best_time = time, best_device = d, best_op = op;
      }
      if (best_device < 0) return std::nullopt;
      place(best_device, best_op.action, best_time);
    }
    return std::move(program_);
  }

 private:
  std::size_t at(int stage, int mb) const {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(shape_.m) + static_cast<std::size_t>(mb);
  }
  int cap(int d) const {
    if (policy_.cap_base <= 0) return std::numeric_limits<int>::max();
    return std::max(1, policy_.cap_base - policy_.cap_slope * d);
  }

  // What an F on stage s keeps free for the deeper stages of its device (reserve_deeper).
  std::int64_t reserve(int s) const {
    if (!policy_.reserve_deeper) return 0;
    std::int64_t kept = 0;
    for (const int deeper : device_stages_[static_cast<std::size_t>(stages_[static_cast<std::size_t>(s)].device)]) {
      if (deeper > s) kept += stages_[static_cast<std::size_t>(deeper)].activation_bytes;
    }
    return kept;
  }

  // When device d next starts an op and which, by the policy; kNever when it cannot.
  double decide(int d, Candidate& chosen) const {
    const auto device = static_cast<std::size_t>(d);
    // Per kind, the device's next op of each of its stages, shallow to deep.
    std::array<std::vector<Candidate>, 3> kinds;
    const int last = static_cast<int>(stages_.size()) - 1;
    for (const int s : device_stages_[device]) {
      const auto& next = next_[static_cast<std::size_t>(s)];
      const StageCosts& stage = stages_[static_cast<std::size_t>(s)];
      if (next[0] < shape_.m && held_[device] + stage.activation_bytes + reserve(s) <= limit_ &&
          in_flight_[device] < cap(d)) {
        const double ready = s == 0 ? 0.0 : forward_end_[at(s - 1, next[0])] + stages_[static_cast<std::size_t>(s - 1)].to_next;
        if (ready < kNever) kinds[0].push_back({Action{s, Op::kForward, next[0]}, ready});
      }
      if (next[1] < next[0]) {
        const double ready = s == last ? forward_end_[at(s, next[1])]
                                       : input_end_[at(s + 1, next[1])] + stages_[static_cast<std::size_t>(s + 1)].to_previous;
        if (ready < kNever) kinds[1].push_back({Action{s, Op::kBackwardInput, next[1]}, ready});
      }
      if (next[2] < next[1]) kinds[2].push_back({Action{s, Op::kBackwardWeight, next[2]}, input_end_[at(s, next[2])]});
    }
    const auto soonest = [](const std::vector<Candidate>& list) {
      double ready = kNever;
      for (const Candidate& op : list) ready = std::min(ready, op.ready);
      return ready;
    };
    const double free = free_at_[device];
    const double earliest = std::max(free, std::min({soonest(kinds[0]), soonest(kinds[1]), soonest(kinds[2])}));
    if (earliest == kNever) return kNever;
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
      for (const int s : device_stages_[device]) {
        const auto& next = next_[static_cast<std::size_t>(s)];
        if (next[1] < next[0]) next_input = std::min(next_input, earliest_input_arrival(s, next[1]));
        if (next[0] < shape_.m && s > 0) next_input = std::min(next_input, earliest_forward_arrival(s, next[0]));
      }
      if (earliest + weight_time > next_input) {
        if (known < kNever && known < earliest + weight_time) {
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
    const StageCosts& before = stages_[static_cast<std::size_t>(s - 1)];
    const double end = forward_end_[at(s - 1, k)];
    if (end < kNever) return end + before.to_next;
    const double start = std::max(free_at_[static_cast<std::size_t>(before.device)], earliest_forward_arrival(s - 1, k));
    return start + before.forward + before.to_next;
  }
  // The earliest I(s, k)'s input (the gradient from stage s+1, or on the last stage its own F) can arrive.
  double earliest_input_arrival(int s, int k) const {
    const int last = static_cast<int>(stages_.size()) - 1;
    if (s == last) {
      const double end = forward_end_[at(s, k)];
      return end < kNever ? end
                          : std::max(free_at_[static_cast<std::size_t>(stages_[static_cast<std::size_t>(s)].device)],
                                     earliest_forward_arrival(s, k)) +
                                stages_[static_cast<std::size_t>(s)].forward;
    }
    const StageCosts& after = stages_[static_cast<std::size_t>(s + 1)];
    const double end = input_end_[at(s + 1, k)];
    if (end < kNever) return end + after.to_previous;
    const double start = std::max(free_at_[static_cast<std::size_t>(after.device)], earliest_input_arrival(s + 1, k));
    return start + after.input + after.to_previous;
  }

  void place(int d, const Action& action, double start) {
    const auto device = static_cast<std::size_t>(d);
    const StageCosts& stage = stages_[static_cast<std::size_t>(action.stage)];
    auto& next = next_[static_cast<std::size_t>(action.stage)];
    double end = start;
    switch (action.op) {
      case Op::kForward:
        end += stage.forward;
        forward_end_[at(action.stage, action.microbatch)] = end;
        held_[device] += stage.activation_bytes;
        ++in_flight_[device];
        ++next[0];
        break;
      case Op::kBackwardInput:
        end += stage.input;
        input_end_[at(action.stage, action.microbatch)] = end;
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
  const std::vector<StageCosts>& stages_;
  std::int64_t limit_;
  ListPolicy policy_;
  std::vector<double> forward_end_;
  std::vector<double> input_end_;
  std::vector<std::array<int, 3>> next_;  // per stage: the next F, I and W micro-batch
  std::vector<std::vector<int>> device_stages_;
  std::vector<double> free_at_;
  std::vector<std::int64_t> held_;
  std::vector<int> in_flight_;
  Program program_;
};

}  // namespace

std::optional<Program> list_schedule(const SynthShape& shape, const std::vector<StageCosts>& stages,
                                     std::int64_t memory_limit, const ListPolicy& policy) {
  return ListScheduler(shape, stages, memory_limit, policy).run();
}

}  // namespace ppsim
