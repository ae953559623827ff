#pragma once
// The constructor of every schedule, one per file in schedules/; the registry table lists them.

#include <optional>
#include <string>

#include "schedules/program.hpp"

namespace ppsim {

// Returns why the parameters are outside what the schedule supports, or nothing when they are fine.
using ScheduleCheck = std::optional<std::string> (*)(const ScheduleParams&);
using ScheduleBuild = Program (*)(const ScheduleParams&);

std::optional<std::string> check_single_chunk(const ScheduleParams& params);

Program build_gpipe(const ScheduleParams& params);
Program build_one_f_one_b(const ScheduleParams& params);

}  // namespace ppsim
