// SPDX-License-Identifier: Apache-2.0
#pragma once
// ppsim synth over a scenario: the search of synth/search.hpp on the scenario's costs (its cost flags
// or --model), its figures as `run` prints them, and the order written as torch's CSV.

#include <ostream>
#include <string>

#include "study/input/scenario.hpp"

namespace ppsim {

struct SynthSettings {
  std::string memory_limit;  // --memory-limit, bytes with units ("6 GiB"); required
  std::string placement;     // --placement loop|v; "": v for v = 2, loop for v = 1
  std::string time_limit;    // --time-limit, a duration; "": 10 s
  std::string output;        // -o FILE.csv; "": none
};

// Writes the search's outcome and the order's figures (the scenario's --format) to `out`, and the
// order to settings.output. Nothing reaches `out` or the file unless the search found an order.
// Bad settings are InputErrors naming the flag.
void write_synth(const Scenario& scenario, const SynthSettings& settings, std::ostream& out);

}  // namespace ppsim
