// SPDX-License-Identifier: Apache-2.0
#pragma once
// Golden schedules kept as CSV under tests/golden/, in torch.distributed.pipelining's _dump_csv layout:
// one row per device, its actions comma-separated. Read here by the test itself (not by the library's
// schedule-file reader, which has tests of its own) so that a golden file pins the schedule alone.

#include <string>
#include <vector>

#include "schedules/action.hpp"
#include "schedules/program.hpp"

namespace ppsim {

// The rows as actions; REQUIREs that every cell is an action. Trailing "\r" and blank lines are skipped.
std::vector<std::vector<Action>> read_schedule_csv(const std::string& path);

// The file's bytes.
std::string read_text(const std::string& path);

// The program's rows as the golden files write them: "\n"-terminated, one action per cell.
std::string to_csv(const Program& program);

}  // namespace ppsim
