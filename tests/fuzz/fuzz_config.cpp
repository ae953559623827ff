// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a config file's text through the JSON reader and apply_config_json, as
// `ppsim run -c FILE` reads it. Refusals are fine; a crash, a sanitizer report or a leak is not.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/json/json_document.hpp"
#include "study/common/errors.hpp"
#include "study/input/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    ppsim::Scenario scenario;
    ppsim::apply_config_json(ppsim::parse_json_text(text, "fuzz.json"), "fuzz.json", scenario);
  } catch (const ppsim::InputError&) {
  } catch (const ppsim::JsonInputError&) {
  }
  return 0;
}
