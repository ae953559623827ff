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

// The lines of tests/golden/`name` in a reference's own notation (DualPipe's, Chimera's, BitPipe's,
// Seq1F1B's): its non-empty lines, without those starting with '#' (notes on where it came from).
std::vector<std::string> read_golden_lines(const std::string& name);

// The program's rows as the golden files write them: "\n"-terminated, one action per cell.
std::string to_csv(const Program& program);

}  // namespace ppsim
