// SPDX-License-Identifier: Apache-2.0
// GPipe (Huang et al., NeurIPS 2019): every device runs all forwards, then all backwards.
// Backwards run in micro-batch order 0..m-1, as torch.distributed.pipelining's ScheduleGPipe does
// (torch/distributed/pipelining/schedules.py), so exported schedules match it action for action.
#include "schedules/builders.hpp"

namespace ppsim {

std::optional<std::string> check_single_chunk(const ScheduleParams& params) {
  if (params.v != 1) {
    return "needs v = 1: it places exactly one stage on each device (got v = " + std::to_string(params.v) +
           "; use an interleaved schedule for several chunks per device)";
  }
  return std::nullopt;
}

ActionStream gpipe_device(ScheduleParams params, int d) {
  for (int j = 0; j < params.m; ++j) co_yield Action{d, Op::kForward, j};
  for (int j = 0; j < params.m; ++j) co_yield Action{d, Op::kBackward, j};
}

ScheduleStreams gpipe_streams(const ScheduleParams& params) {
  return {params, loop_stage_mapping(params.p, 1), gpipe_device};
}

}  // namespace ppsim
