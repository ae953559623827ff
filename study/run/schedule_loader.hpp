// SPDX-License-Identifier: Apache-2.0
#pragma once
// Custom schedules for the CLI: a schedule file (torch's CSV, or JSON) read into a Program, and a
// registry schedule written out in the same formats (`ppsim export`).

#include <cstddef>
#include <string>

#include "schedules/program.hpp"
#include "schedules/schedule_file.hpp"
#include "study/input/scenario.hpp"

namespace ppsim {

// Schedule files above these sizes are refused before they are read. A JSON schedule costs nlohmann
// about 50 bytes a cell while parsing, a CSV one about 35: both stay under ~2.5 GiB at the op limit.
inline constexpr std::size_t kMaxCsvScheduleFileBytes = std::size_t{512} << 20;  // 512 MiB
inline constexpr std::size_t kMaxJsonScheduleFileBytes = std::size_t{64} << 20;  // 64 MiB

// Reads `path` (JSON when it ends in .json, else CSV). An unreadable file or malformed JSON is an
// InputError; a cell that is not an action, or a stage on two devices, is a ScheduleError with the
// step x device grid.
Program load_schedule_file(const std::string& path);

// A JSON schedule's text (see schedules/schedule_file.hpp) as a program; malformed JSON and a
// document of the wrong shape are InputErrors naming `path`.
ScheduleFileParse parse_json_schedule(const std::string& path, const std::string& text);

// The scenario's one schedule as CSV (torch's _dump_csv) or, with --format json, JSON. `lowered`:
// in torch's lowered format, with the sends, receives and FSDP actions its lowering passes add
// (lower_like_torch; a schedule file that is lowered already is written as it is).
std::string export_schedule(const Scenario& scenario, bool lowered = false);

}  // namespace ppsim
