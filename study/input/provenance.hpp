// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a result comes from: the ppsim that wrote it and fingerprints of the model and hardware it
// resolved. JSON results carry it under "provenance", so that `ppsim check` can say "the hardware
// profile changed" or "ppsim changed 0.1.0 -> 0.2.0" before listing the figures that moved.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/input/scenario.hpp"

namespace ppsim {

// 64-bit FNV-1a of `text` as 16 hex digits: a fingerprint, not a security hash (the files are the
// user's own; what matters is that a changed file reads as changed).
std::string fingerprint(std::string_view text);

// {"ppsim": version, "revision": git revision, "model": {"name", "fingerprint"}, "hardware": {...}};
// the model and hardware only for a transformer study. A fingerprint covers the resolved profile
// (its canonical JSON), so a preset and a file with the same content match, and any edit shows.
nlohmann::ordered_json provenance_of(const Scenario& scenario);

// What differs between a baseline's provenance and the current one, most fundamental first:
// "ppsim changed 0.1.0 -> 0.2.0 (git abc -> def)", "the hardware profile changed (h100-sxm5-80gb)".
// A baseline without provenance gives one line saying so.
std::vector<std::string> provenance_changes(const nlohmann::ordered_json& baseline, const nlohmann::ordered_json& now);

}  // namespace ppsim
