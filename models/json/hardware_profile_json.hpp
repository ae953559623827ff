// SPDX-License-Identifier: Apache-2.0
#pragma once
// configs/hardware/*.json <-> HardwareProfile. The same schema serves the datasheet presets and the
// profiles ppsim-calibrate measures; a measured profile adds a free-form "calibration" object
// (metadata and the spread of each measurement), which is kept but not interpreted.

#include <nlohmann/json.hpp>
#include <string>

#include "models/hardware/profile.hpp"

namespace ppsim {

struct LoadedProfile {
  HardwareProfile profile;
  nlohmann::ordered_json calibration;  // null when the file has none
};

// Reads and checks a profile (types, ranges, monotone efficiency tables, validate_hardware_profile);
// throws JsonInputError "origin: $.path: what".
LoadedProfile hardware_profile_from_json(const nlohmann::json& json, const std::string& origin);

// Reads `path` (throws JsonInputError naming the file for unreadable or malformed JSON).
LoadedProfile load_hardware_profile(const std::string& path);

// The profile in the schema of configs/hardware/*.json, keys in a fixed order; `calibration` is
// written under "calibration" unless null. hardware_profile_from_json reads it back equal.
nlohmann::ordered_json hardware_profile_to_json(const HardwareProfile& profile,
                                                const nlohmann::ordered_json& calibration = nullptr);

}  // namespace ppsim
