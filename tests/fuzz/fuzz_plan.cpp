// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a plan file's text through the JSON reader and apply_plan_settings, as
// `ppsim plan PLAN.json` reads it (the plan's own keys, then the scenario's). Refusals are fine; a
// crash, a sanitizer report or a leak is not.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/json/json_document.hpp"
#include "study/api.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    ppsim::PlanRequest request;
    ppsim::apply_plan_settings(ppsim::parse_json_text(text, "fuzz.json"), "fuzz.json", "", request);
  } catch (const ppsim::InputError&) {
  } catch (const ppsim::JsonInputError&) {
  }
  return 0;
}
