// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a model architecture file (configs/models/*.json) or a transformers
// config.json, as `--model FILE` reads them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/json/architecture_json.hpp"
#include "models/json/hf_config_json.hpp"
#include "models/json/json_document.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json json = ppsim::parse_json_text(text, "fuzz.json");
    if (ppsim::is_hf_config(json)) {
      (void)ppsim::architecture_from_hf_config(json, "fuzz.json", "fuzz");
    } else {
      (void)ppsim::architecture_from_json(json, "fuzz.json");
    }
  } catch (const ppsim::JsonInputError&) {
  }
  return 0;
}
