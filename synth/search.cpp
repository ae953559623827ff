// SPDX-License-Identifier: Apache-2.0
#include "synth/search.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "schedules/registry.hpp"
#include "synth/stage_costs.hpp"

namespace ppsim {
namespace {

constexpr double kTie = 1e-12;

// What the search minimises: the makespan, then the devices' end times summed, so that among orders
// of one makespan it drifts toward those whose devices finish early (a plateau is where a single
// move rarely shortens the step by itself).
struct Score {
  double makespan = 0;
  double ends = 0;
  bool better_than(const Score& other) const {
    if (makespan < other.makespan - kTie) return true;
    return makespan <= other.makespan + kTie && ends < other.ends - kTie;
  }
};

struct Scored {
  Program program;
  Score score;
  std::int64_t peak = 0;
};

class Judge {
 public:
  Judge(const SynthRequest& request, const CostModel& costs, const std::vector<SynthStage>& stages)
      : request_(request), costs_(costs), stages_(stages), start_(std::chrono::steady_clock::now()) {}

  // The engine's score, or nothing when the program deadlocks.
  std::optional<Score> score(const Program& program) {
    ++replays_;
    SimulationOutcome outcome = engine_.run(program, costs_, request_.engine);
    if (!outcome.result) return std::nullopt;
    Score score{outcome.result->makespan, 0};
    for (const DeviceFigures& device : outcome.result->per_device) score.ends += device.end;
    return score;
  }
  bool fits(const std::vector<Action>& order) const {
    return order_peak_activation(order, stages_) <= request_.memory_limit;
  }
  std::int64_t peak(const Program& program) const {
    std::int64_t most = 0;
    for (const auto& order : program.actions) most = std::max(most, order_peak_activation(order, stages_));
    return most;
  }
  bool out_of_time() {
    if (stopped_) return true;
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start_;
    stopped_ = spent.count() > request_.time_limit;
    return stopped_;
  }
  std::int64_t replays() const { return replays_; }
  bool stopped() const { return stopped_; }

 private:
  const SynthRequest& request_;
  const CostModel& costs_;
  const std::vector<SynthStage>& stages_;
  Engine engine_;
  std::int64_t replays_ = 0;
  bool stopped_ = false;
  std::chrono::steady_clock::time_point start_;
};

std::string policy_words(const ListPolicy& policy) {
  std::string words = "list scheduling: ";
  words += policy.forward_first ? "F before I up to the cap" : "I first";
  words += policy.deep_first ? ", deeper forwards first" : ", shallower forwards first";
  words += policy.deep_first_backward ? ", deeper backwards first" : ", shallower backwards first";
  words += policy.fitting_weights ? ", W only where it fits a wait" : ", W in any wait";
  if (policy.reserve_deeper) words += ", room kept for the deeper chunk";
  if (policy.cap_base > 0) {
    words += ", in flight <= " + std::to_string(policy.cap_base) +
             (policy.cap_slope > 0 ? " - " + std::to_string(policy.cap_slope) + "d" : "");
  }
  return words;
}

std::vector<ListPolicy> policies(const SynthShape& shape, int v) {
  const int p = shape.p;
  // Caps in forwards in flight: 1F1B's p-d (in stages of v chunks, vp-d), ZB-H2's 2p-1-2d, and none.
  std::vector<std::pair<int, int>> caps = {{0, 0}, {v * p, 1}, {v * p, 0}, {2 * p - 1, 2}, {2 * v * p, 1}, {p, 1}};
  std::vector<ListPolicy> all;
  for (const auto& [base, slope] : caps) {
    for (const bool forward_first : {false, true}) {
      if (forward_first && base == 0) continue;  // without a cap F-first would run every forward at once
      for (const bool deep_first : {true, false}) {
        for (const bool deep_backward : {true, false}) {
          for (const bool fitting : {false, true}) {
            for (const bool reserve : {false, true}) {
              if (reserve && v == 1) continue;  // one stage per device: nothing deeper to keep room for
              all.push_back({forward_first, base, slope, deep_first, deep_backward, fitting, reserve});
            }
          }
        }
      }
    }
  }
  return all;
}

bool same_stage_and_microbatch_or_kind(const Action& a, const Action& b) {
  return a.stage == b.stage && (a.microbatch == b.microbatch || a.op == b.op);
}

}  // namespace

Program split_backwards(Program program) {
  for (auto& order : program.actions) {
    std::vector<Action> split;
    split.reserve(order.size() * 3 / 2);
    for (const Action& action : order) {
      if (action.op == Op::kBackward) {
        split.push_back({action.stage, Op::kBackwardInput, action.microbatch});
        split.push_back({action.stage, Op::kBackwardWeight, action.microbatch});
      } else {
        split.push_back({action.stage, action.op, action.microbatch});
      }
    }
    order = std::move(split);
  }
  return program;
}

std::int64_t default_replay_budget(const SynthShape& shape) {
  const double ops = 3.0 * static_cast<double>(shape.stage_device.size()) * shape.m;
  return std::clamp(static_cast<std::int64_t>(2e8 / std::max(1.0, ops)), std::int64_t{64}, std::int64_t{200000});
}

std::int64_t convergence_window(const SynthShape& shape, std::int64_t budget) {
  const double ops = 3.0 * static_cast<double>(shape.stage_device.size()) * shape.m;
  return std::clamp(static_cast<std::int64_t>(2e6 / std::max(1.0, ops)), std::int64_t{256}, std::max<std::int64_t>(budget, 256));
}

SynthOutcome synthesize(const SynthRequest& request, const CostModel& costs) {
  const std::vector<SynthStage> stages = stage_costs(costs, request.shape.stage_device);
  Judge judge(request, costs, stages);
  SynthOutcome outcome;
  std::optional<Scored> best;
  const auto offer = [&](Program program, const std::string& origin, bool registry) {
    for (const auto& order : program.actions) {
      if (!judge.fits(order)) return;
    }
    const std::optional<Score> score = judge.score(program);
    if (!score) return;
    const std::int64_t peak = judge.peak(program);
    if (registry) outcome.registry_seeds.push_back({origin, score->makespan, peak});
    if (!best || score->better_than(best->score)) {
      best = Scored{std::move(program), *score, peak};
      outcome.origin = origin;
    }
  };
  // 1. Seeds: the registry's schedules of this placement, then list scheduling.
  const ScheduleParams params{request.shape.p, request.shape.m, request.v};
  for (const ScheduleInfo& info : schedule_registry()) {
    if (!info.generated() || info.check(params)) continue;
    ScheduleStreams streams = info.streams(params);
    // Seq1F1B's units are slices of a micro-batch, which the search's whole micro-batches are not.
    if (streams.stage_device != request.shape.stage_device || streams.overlapped_pairs ||
        streams.units_per_microbatch != 1) {
      continue;
    }
    offer(split_backwards(collect_program(streams)), std::string(info.name), true);
  }
  for (const ListPolicy& policy : policies(request.shape, request.v)) {
    if (best && judge.out_of_time()) break;
    if (std::optional<Program> program = list_schedule(request.shape, stages, request.memory_limit, policy)) {
      offer(std::move(*program), policy_words(policy), false);
    }
  }
  if (!best) throw std::invalid_argument("no order of F, I and W fits the memory limit");
  // 2. Local search: one op moved up to kReach places along its device's list, kept when the score
  // improves; nearer moves first.
  constexpr int kReach = 4;
  const std::int64_t budget = request.replay_budget > 0 ? request.replay_budget : default_replay_budget(request.shape);
  const std::int64_t window = convergence_window(request.shape, budget);
  std::int64_t last_improvement = judge.replays();
  // Converged: a whole pass, or `window` replays in a row, found no better order.
  const auto converged = [&] { return judge.replays() - last_improvement >= window; };
  bool improved = true;
  while (improved && judge.replays() < budget && !judge.out_of_time() && !converged()) {
    improved = false;
    for (std::size_t d = 0; d < best->program.actions.size(); ++d) {
      auto& order = best->program.actions[d];
      for (std::size_t i = 0; i < order.size(); ++i) {
        for (int reach = 1; reach <= kReach; ++reach) {
          for (const int direction : {-1, 1}) {
            if (judge.replays() >= budget || judge.out_of_time() || converged()) break;
            const std::ptrdiff_t j = static_cast<std::ptrdiff_t>(i) + direction * reach;
            if (j < 0 || j >= static_cast<std::ptrdiff_t>(order.size())) continue;
            const auto target = static_cast<std::size_t>(j);
            // Passing an op of the same stage that it depends on, or of its own kind, cannot be legal.
            const std::size_t low = std::min(i, target), high = std::max(i, target);
            bool legal = true;
            for (std::size_t k = low; k <= high && legal; ++k) {
              if (k != i) legal = !same_stage_and_microbatch_or_kind(order[i], order[k]);
            }
            if (!legal) continue;
            const auto move = [&](std::size_t from, std::size_t to) {
              if (from < to) {
                std::rotate(order.begin() + static_cast<std::ptrdiff_t>(from),
                            order.begin() + static_cast<std::ptrdiff_t>(from) + 1,
                            order.begin() + static_cast<std::ptrdiff_t>(to) + 1);
              } else {
                std::rotate(order.begin() + static_cast<std::ptrdiff_t>(to),
                            order.begin() + static_cast<std::ptrdiff_t>(from),
                            order.begin() + static_cast<std::ptrdiff_t>(from) + 1);
              }
            };
            move(i, target);
            std::optional<Score> score;
            if (judge.fits(order)) score = judge.score(best->program);
            if (score && score->better_than(best->score)) {
              best->score = *score;
              ++outcome.moves;
              improved = true;
              last_improvement = judge.replays();
            } else {
              move(target, i);
            }
          }
        }
      }
    }
  }
  best->peak = judge.peak(best->program);
  outcome.program = std::move(best->program);
  outcome.makespan = best->score.makespan;
  outcome.peak_activation_bytes = best->peak;
  outcome.replays = judge.replays();
  outcome.stopped_by_time_limit = judge.stopped();
  outcome.stop = judge.stopped()                   ? SynthStop::kTimeLimit
                 : converged()                     ? SynthStop::kWindow
                 : judge.replays() >= budget && improved ? SynthStop::kBudget
                                                   : SynthStop::kPass;
  outcome.window = window;
  return outcome;
}

}  // namespace ppsim
