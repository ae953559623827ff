// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a hardware profile file (configs/hardware/*.json), as `--hardware FILE` reads it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/json/hardware_profile_json.hpp"
#include "models/json/json_document.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)ppsim::hardware_profile_from_json(ppsim::parse_json_text(text, "fuzz.json"), "fuzz.json");
  } catch (const ppsim::JsonInputError&) {
  }
  return 0;
}
