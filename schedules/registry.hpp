// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one table of schedules: the CLI's list, the docs and the invariant tests all loop over it.

#include <span>
#include <string_view>

#include "schedules/builders.hpp"

namespace ppsim {

struct ScheduleInfo {
  std::string_view name;         // what -s takes
  std::string_view summary;      // one line for `ppsim schedules`
  std::string_view constraints;  // the parameters it accepts, in words
  std::string_view source;       // the paper or code its definition follows
  int default_v;                 // chunks per device when -v is not given
  ScheduleCheck check;
  ScheduleStreamsFn streams;  // nullptr for `custom`, whose program comes from a file
  // Whether the messages waiting at their receiver stay few whatever m is, so that a run from the
  // streams needs memory independent of m. Not for looped BFS: each device runs all m forwards of
  // one chunk before the next, so m activations wait between chunks. Runs of such schedules keep
  // the op limit of stored programs.
  bool bounded_window = true;
  // Program::num_pipelines: 2 for the bidirectional schedules (DualPipe, Chimera, BitPipe), whose two
  // directions run the same stages on different devices and start at both ends at once.
  int pipelines = 1;

  bool generated() const { return streams != nullptr; }
  // The stored program (its streams run to the end); only for generated schedules.
  Program build(const ScheduleParams& params) const { return collect_program(streams(params)); }
};

std::span<const ScheduleInfo> schedule_registry();

// nullptr when no schedule has that name.
const ScheduleInfo* find_schedule(std::string_view name);

// The schedule a user means: its registry name in any case, with or without dashes and
// underscores, or torch.distributed.pipelining's class name with or without its `Schedule`
// prefix (GPipe, 1F1B, Interleaved1F1B, LoopedBFS, ZBVZeroBubble, DualPipeV), or Megatron's
// `interleaved`. nullptr when none.
const ScheduleInfo* resolve_schedule(std::string_view name);

}  // namespace ppsim
