// SPDX-License-Identifier: Apache-2.0
#pragma once
// The settings of noise, stragglers, Monte-Carlo steps and failures: read from flags and config
// files under the keys of config.cpp's table, checked, and written back into a report's scenario
// only when given, so that a run without them reads and writes exactly as before.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "study/input/scenario.hpp"

namespace ppsim {

// Applies `key` when it is one of these settings and returns true; false for any other key.
bool apply_variability_text(std::string_view key, std::string_view text, const std::string& source, Scenario& scenario);
bool apply_variability_json(std::string_view key, const nlohmann::json& value, const std::string& source,
                            Scenario& scenario);

// The failure settings, which need a model (the GPU count t * p * d).
bool is_failure_setting(std::string_view key);

// What the settings need of each other (--jitter needs --samples, --mtbf a run length): InputError.
void check_variability(const Scenario& scenario);

// Whether the scenario asks for Monte-Carlo steps or reliability figures at all.
bool has_samples(const Scenario& scenario);
bool has_failures(const Scenario& scenario);

// These settings under their keys, only those a run uses.
void variability_to_json(const Scenario& scenario, nlohmann::ordered_json& out);

}  // namespace ppsim
