// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a sweep study's text through the JSON reader and parse_study, as `ppsim sweep
// STUDY.json` reads it (without running the points).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/json/json_document.hpp"
#include "study/common/errors.hpp"
#include "study/sweep/sweep_study.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)ppsim::parse_study(ppsim::parse_ordered_json_text(text, "fuzz.json"), "fuzz.json", "");
  } catch (const ppsim::InputError&) {
  } catch (const ppsim::JsonInputError&) {
  } catch (const ppsim::ScheduleError&) {
  }
  return 0;
}
