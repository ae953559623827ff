// SPDX-License-Identifier: Apache-2.0
#pragma once
// --samples N: the schedule's program replayed N times, each step with draws of its own: every
// compute op's time by --jitter, every message's by --link-jitter, each device slowed by
// --straggler-prob. Sample i's streams derive from (seed, i) alone, so the figures are the same
// bytes whatever the thread count or the order samples run in.

#include "models/cost_model.hpp"
#include "schedules/program.hpp"
#include "sim/engine.hpp"
#include "sim/sample_statistics.hpp"
#include "study/input/scenario.hpp"

namespace ppsim {

// `costs` is the model the deterministic step ran (deterministic stragglers included) and
// `options` its engine options.
SampleFigures sample_steps(const Scenario& scenario, const Program& program, const CostModel& costs,
                           const EngineOptions& options);

// The per-device factors of sample `sample` under --straggler-prob (all 1 without it).
std::vector<double> sampled_straggler_factors(const Scenario& scenario, int devices, std::uint64_t sample);

}  // namespace ppsim
