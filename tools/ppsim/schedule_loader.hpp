#pragma once
// Custom schedules for the CLI: a schedule file (torch's CSV, or JSON) read into a Program, and a
// registry schedule written out in the same formats (`ppsim export`).

#include <string>

#include "schedules/program.hpp"
#include "tools/ppsim/scenario.hpp"

namespace ppsim {

// Reads `path` (JSON when it ends in .json, else CSV). An unreadable file or malformed JSON is an
// InputError; a cell that is not an action, or a stage on two devices, is a ScheduleError with the
// step x device grid.
Program load_schedule_file(const std::string& path);

// The scenario's one schedule as CSV (torch's _dump_csv) or, with --format json, JSON.
std::string export_schedule(const Scenario& scenario);

}  // namespace ppsim
