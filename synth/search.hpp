// SPDX-License-Identifier: Apache-2.0
#pragma once
// ppsim synth: the per-device orders of F, I and W with the shortest makespan under a per-device
// activation-memory limit, judged by the engine itself (so per-stage costs, links and an uneven last
// stage count as they will in a run).
//
// The search, all of it deterministic:
// 1. Seeds: the registry schedules of the same placement that accept the size and fit the limit
//    (a fused B becomes I then W, which holds no more memory), and list-scheduled orders over a grid
//    of policies (synth/list_scheduler.hpp). Each is replayed by the engine; the best is kept.
// 2. Local search from the best: swaps of adjacent ops on one device, kept when the engine's makespan
//    drops and the device stays within the limit, pass after pass until it has converged or the
//    budget of replays is spent. Converged: a whole pass, or a window of replays in a row (2e6 / ops,
//    at least 256: 1% of the budget), found no better order; the window lets large sizes stop
//    where a pass over all their ops would go on finding nothing. Budget and window are fixed by the
//    size, not by the clock; the time limit only stops a search that overruns it, and the outcome
//    says what stopped it.

#include <cstdint>
#include <string>
#include <vector>

#include "models/cost_model.hpp"
#include "schedules/program.hpp"
#include "sim/engine.hpp"
#include "synth/list_scheduler.hpp"

namespace ppsim {

struct SynthRequest {
  SynthShape shape;
  int v = 1;
  std::int64_t memory_limit = 0;  // per device, activation bytes
  double time_limit = 10;         // seconds
  EngineOptions engine;           // as the run that will replay the order
  std::int64_t replay_budget = 0;  // 0: by the size (default_replay_budget)
};

struct SynthSeed {
  std::string origin;  // "zb-h1", or a list-scheduling policy in words
  double makespan = 0;
  std::int64_t peak_activation_bytes = 0;  // most on any device
};

// What ended the local search.
enum class SynthStop : std::uint8_t {
  kPass,       // a whole pass found no better order
  kWindow,     // the convergence window of replays found none
  kBudget,     // the replay budget was spent while it was still finding some
  kTimeLimit,  // --time-limit
};

struct SynthOutcome {
  Program program;
  double makespan = 0;
  std::int64_t peak_activation_bytes = 0;
  std::string origin;   // the seed the local search started from
  int moves = 0;        // swaps the local search kept
  std::int64_t replays = 0;
  bool stopped_by_time_limit = false;
  SynthStop stop = SynthStop::kPass;
  std::int64_t window = 0;  // the convergence window it ran with, in replays
  std::vector<SynthSeed> registry_seeds;  // the registry schedules that fit, as replayed
};

// Engine replays of the local search for a size: about 2e8 replayed ops, some seconds.
std::int64_t default_replay_budget(const SynthShape& shape);
// Replays in a row without a better order after which the local search has converged.
std::int64_t convergence_window(const SynthShape& shape, std::int64_t budget);

// Throws std::invalid_argument when nothing fits the limit (not even one stash per stage).
SynthOutcome synthesize(const SynthRequest& request, const CostModel& costs);

// `B` split into I then W: the fused op's memory, never more, and an order synth can move W's in.
Program split_backwards(Program program);

}  // namespace ppsim
