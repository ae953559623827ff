// SPDX-License-Identifier: Apache-2.0
#pragma once
// Ring attention (Liu et al. 2023; Transformer Engine's p2p context parallelism) replayed step by
// step, as the independent check of the closed form the cost model charges
// (models/transformer/context_parallel.hpp): `ppsim formulas --check` compares the two.
//
// c ranks, c steps. At step k rank r computes its queries against the block of keys and values it
// holds, and, as the step starts, sends that block on to rank r + 1 over its own link, which the
// block takes `transfer` to cross (Transformer Engine issues the next step's send and receive
// before the step's attention). A step starts once the rank's previous step is done and its block
// has arrived; the first block is the rank's own. The last step sends nothing.

#include <vector>

namespace ppsim {

// When the slowest rank finishes the ring; `step_compute[k]` is every rank's compute at step k.
double replay_ring_attention(const std::vector<double>& step_compute, double transfer);

}  // namespace ppsim
