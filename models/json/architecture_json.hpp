// SPDX-License-Identifier: Apache-2.0
#pragma once
// configs/models/*.json <-> Architecture.

#include <nlohmann/json.hpp>
#include <string>

#include "models/transformer/architecture.hpp"

namespace ppsim {

// Reads and checks an architecture (positive sizes, heads dividing hidden unless head_dim is given,
// kv_heads dividing heads, top_k at most the experts); throws JsonInputError "origin: $.path: what".
Architecture architecture_from_json(const nlohmann::json& json, const std::string& origin);

// Reads `path`.
Architecture load_architecture(const std::string& path);

// The architecture in the schema of configs/models/*.json; architecture_from_json reads it back equal.
nlohmann::ordered_json architecture_to_json(const Architecture& arch);

}  // namespace ppsim
