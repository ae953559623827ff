// SPDX-License-Identifier: Apache-2.0
// Looped breadth-first pipeline (Lamy-Poirier, "Breadth-First Pipeline Parallelism", arXiv 2211.05953):
// v chunks per device on the loop mapping; each device runs every micro-batch's forward of chunk 0,
// then of chunk 1, ... chunk v-1, then the backwards chunk v-1 first, down to chunk 0.
//
// The order is torch.distributed.pipelining's ScheduleLoopedBFS
// (torch/distributed/pipelining/schedules.py, _calculate_single_rank_operations): forwards in
// micro-batch order 0..m-1, backwards in reverse micro-batch order m-1..0, so that the last stage
// starts with the micro-batch whose forward it has just finished. Every device stashes all m·v
// forwards before its first backward.
#include "schedules/builders.hpp"

namespace ppsim {

std::optional<std::string> check_looped_bfs(const ScheduleParams& params) {
  if (params.v < 2) {
    return "needs v >= 2: it loops over several chunks per device (got v = " + std::to_string(params.v) +
           "; with one chunk it is GPipe with the backwards reversed, use gpipe)";
  }
  return std::nullopt;
}

ActionStream looped_bfs_device(ScheduleParams params, int d) {
  for (int chunk = 0; chunk < params.v; ++chunk) {
    for (int j = 0; j < params.m; ++j) co_yield Action{chunk * params.p + d, Op::kForward, j};
  }
  for (int chunk = params.v - 1; chunk >= 0; --chunk) {
    for (int j = params.m - 1; j >= 0; --j) co_yield Action{chunk * params.p + d, Op::kBackward, j};
  }
}

ScheduleStreams looped_bfs_streams(const ScheduleParams& params) {
  return {params, loop_stage_mapping(params.p, params.v), looped_bfs_device};
}

}  // namespace ppsim
