// SPDX-License-Identifier: Apache-2.0
#pragma once
// A terminal picture of a recorded timeline: one row per device, one column per time slot,
// `|` marking where each device's warmup, steady and cooldown phases meet.

#include <cstddef>
#include <string>

#include "sim/report/ascii_timeline_digest.hpp"
#include "sim/report/report.hpp"

namespace ppsim {

// The largest slot such that every op boundary is a whole number of slots, when that needs at
// most `max_columns` columns; otherwise makespan / max_columns, and cells show the op covering
// their midpoint.
TimelineGrid choose_timeline_grid(const Timeline& timeline, std::size_t max_columns);

// The picture, ending in a newline. Cells read `F3`, `B1`, or `0F3` when a device holds several
// stages; `.` is idle. A report whose timeline was streamed into a digest prints the digest's grid
// (chosen for the same width before the run). Without a recorded timeline it says so in one line.
std::string render_ascii_timeline(const Report& report, std::size_t max_columns = 120);

// The most columns that keep a row within `characters` (at least 16), given the widest label
// the program can produce: long runs get fewer, coarser slots instead of very wide rows.
std::size_t timeline_columns_for_width(const Report& report, std::size_t characters);

}  // namespace ppsim
