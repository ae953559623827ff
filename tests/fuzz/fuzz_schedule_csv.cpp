// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: torch's schedule CSV through parse_schedule_csv, then validate_program (and, for
// a lowered file, validate_comm_actions) and the grid that exit 3 prints, as `ppsim run
// --schedule-file FILE.csv` does.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "schedules/schedule_file.hpp"
#include "schedules/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ppsim::ScheduleFileParse parse = ppsim::parse_schedule_csv(text);
  if (parse.ok()) {
    std::optional<ppsim::ScheduleProblem> problem = ppsim::validate_program(parse.program);
    if (!problem) problem = ppsim::validate_comm_actions(parse.program);
    if (problem && problem->where) {
      (void)ppsim::format_step_grid(parse.program, std::span<const ppsim::GridMark>(&*problem->where, 1));
    }
    (void)ppsim::write_schedule_csv(parse.program);
  } else if (parse.problem->where && parse.program.num_devices > 0) {
    (void)ppsim::format_step_grid(parse.program, std::span<const ppsim::GridMark>(&*parse.problem->where, 1));
  }
  return 0;
}
