// SPDX-License-Identifier: Apache-2.0
#pragma once
// Checks every property DESIGN.md promises of a finished simulation, recomputed from the program,
// the cost model and the recorded timeline, so that any schedule can be tested without knowing its
// expected numbers.

#include "models/cost_model.hpp"
#include "models/uniform_cost_model.hpp"
#include "schedules/program.hpp"
#include "sim/engine.hpp"
#include "sim/result.hpp"

namespace ppsim {

// Uses Catch2 CHECKs (one per family of properties, with the first violations as context):
// - compute spans: one per action, in each device's action order, never overlapping, lasting the op's cost;
// - dependencies: F after F(s-1), B/I after F(s) and the backward of s+1, W after I, each plus the
//   message's latency and transfer time when the stages are on different devices;
// - as soon as possible: every op starts exactly when its device is free (after its previous op, or
//   in blocking mode after that op's message left the link) and its inputs have arrived;
// - messages: one per cross-device dependency, leaving the link first come first served without
//   overlap, busy bytes / bandwidth, arriving latency after leaving; per_link sums and comm_ratio;
// - memory: recomputed from the spans (F allocates at its start; B, I and W free at their end, frees
//   first at an instant), ending at the static bytes; the samples' maximum is the reported peak;
// - figures: busy is the sum of the cost model's op times, makespan = last end - first start,
//   bubble_ratio, bubble_overhead, per-device idle and phases.
// `with_timeline` must come from a run with record_timeline; `comm` is the mode it ran in.
void check_invariants(const Program& program, const CostModel& costs, const Result& with_timeline,
                      CommMode comm = CommMode::kOverlap);

// Uniform costs with slow links (messages queue, latency shifts every op), stashes and static
// bytes: the model the all-sizes sweeps run every schedule under.
UniformCosts slow_link_costs();

// Per-chunk F = I = W = 1 (B = 2), free links, 1 MiB stashes: the zero-bubble papers' unit costs,
// at which the V and interleaved zero-bubble closed forms are written.
UniformCostModel unit_chunk_costs(double weight_stash_fraction = 0.5);

// The most stashes any device held (peak_stashed over the devices).
double most_stashed(const Result& result);

// Runs the engine with a timeline, requires that the program finishes, checks the invariants and
// returns the result.
Result run_checked(const Program& program, const CostModel& costs, CommMode comm = CommMode::kOverlap);

}  // namespace ppsim
