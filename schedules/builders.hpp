#pragma once
// The constructor of every schedule, one per file in schedules/; the registry table lists them.

#include <optional>
#include <string>

#include "schedules/program.hpp"

namespace ppsim {

// Returns why the parameters are outside what the schedule supports, or nothing when they are fine.
// The reason starts "needs v ..." or "needs m ...", so the CLI can name the flag at fault.
using ScheduleCheck = std::optional<std::string> (*)(const ScheduleParams&);
using ScheduleBuild = Program (*)(const ScheduleParams&);

std::optional<std::string> check_single_chunk(const ScheduleParams& params);

// `custom` has no constructor: the CLI reads its program from --schedule-file, so the check
// refuses every size, and loops over the registry (tests, formulas --check) skip it.
std::optional<std::string> check_custom(const ScheduleParams& params);

Program build_gpipe(const ScheduleParams& params);
Program build_one_f_one_b(const ScheduleParams& params);

// Megatron-LM's interleaved 1F1B (virtual pipeline) and breadth-first looping over the chunks.
std::optional<std::string> check_interleaved(const ScheduleParams& params);
Program build_interleaved_one_f_one_b(const ScheduleParams& params);
std::optional<std::string> check_looped_bfs(const ScheduleParams& params);
Program build_looped_bfs(const ScheduleParams& params);

// Zero-bubble schedules (Qi et al.): the backward split into I and W.
std::optional<std::string> check_zero_bubble_h1(const ScheduleParams& params);
Program build_zero_bubble_h1(const ScheduleParams& params);
std::optional<std::string> check_zero_bubble_h2(const ScheduleParams& params);
Program build_zero_bubble_h2(const ScheduleParams& params);
std::optional<std::string> check_zero_bubble_v(const ScheduleParams& params);
Program build_zero_bubble_v(const ScheduleParams& params);

// DeepSeek's DualPipeV: two chunks per device on the V mapping, with overlapped F&B ops.
std::optional<std::string> check_dualpipev(const ScheduleParams& params);
Program build_dualpipev(const ScheduleParams& params);

}  // namespace ppsim
