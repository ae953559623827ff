// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a JSON schedule file through parse_json_schedule and validate_program, as
// `ppsim run --schedule-file FILE.json` reads it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "schedules/validate.hpp"
#include "study/common/errors.hpp"
#include "study/run/schedule_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    ppsim::ScheduleFileParse parse = ppsim::parse_json_schedule("fuzz.json", text);
    if (parse.ok()) {
      if (!ppsim::validate_program(parse.program)) (void)ppsim::validate_comm_actions(parse.program);
      (void)ppsim::write_schedule_json(parse.program);
    }
  } catch (const ppsim::InputError&) {
  }
  return 0;
}
