// SPDX-License-Identifier: Apache-2.0
#pragma once
// `ppsim models`: the architecture and hardware presets a transformer study can name.

#include <iosfwd>

#include <nlohmann/json.hpp>

namespace ppsim {

void write_preset_list(std::ostream& out);

// The same lists as data: {"models": [...], "hardware": [...]}, in base units (FLOP/s, bytes/s, bytes).
nlohmann::ordered_json preset_list_json();

}  // namespace ppsim
