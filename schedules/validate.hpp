// SPDX-License-Identifier: Apache-2.0
#pragma once
// Static checks of a Program: every (stage, micro-batch) has its ops exactly once, on the device
// that owns the stage, in a legal order. Cross-device cycles are left to the engine's deadlock report.

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "schedules/program.hpp"

namespace ppsim {

// A cell of the step x device grid: `step` may equal the device's list size (a missing op).
struct GridMark {
  int device = 0;
  std::size_t step = 0;
};

struct ScheduleProblem {
  std::string message;            // one line naming the action and the rule it breaks
  std::optional<GridMark> where;  // absent for problems of the whole program (sizes, mapping)
};

std::optional<ScheduleProblem> validate_program(const Program& program);

// The communication actions of a lowered program (Program::comms), once validate_program has passed:
// each on the device of its stage, naming a message that crosses devices, a send after the op that
// makes its message and a receive before the op that uses it, each once, every send with its
// receive and the reverse, and every message between devices with both. `where` is the compute
// action the offending one precedes.
std::optional<ScheduleProblem> validate_comm_actions(const Program& program);

// The grid shows at most this many marks, and this many device columns (the marked devices and
// their neighbours when the program has more).
inline constexpr std::size_t kMaxGridMarks = 16;
inline constexpr std::size_t kMaxGridDevices = 16;

// Rows are steps, columns devices (torch.distributed.pipelining's layout); marked cells are in
// [brackets] with "<-- here" on their row. Rows more than `context` away from every mark are elided;
// without marks the first 2 context + 1 rows are shown.
std::string format_step_grid(const Program& program, std::span<const GridMark> marks, std::size_t context = 3);

}  // namespace ppsim
