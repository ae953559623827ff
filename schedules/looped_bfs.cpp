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

Program build_looped_bfs(const ScheduleParams& params) {
  const int p = params.p;
  const int m = params.m;
  const int v = params.v;

  const auto fill_device = [&](int d, std::vector<Action>& list) {
    for (int chunk = 0; chunk < v; ++chunk) {
      for (int j = 0; j < m; ++j) list.push_back({chunk * p + d, Op::kForward, j});
    }
    for (int chunk = v - 1; chunk >= 0; --chunk) {
      for (int j = m - 1; j >= 0; --j) list.push_back({chunk * p + d, Op::kBackward, j});
    }
  };
  return make_program(p, m, loop_stage_mapping(p, v), 2 * static_cast<std::size_t>(m) * static_cast<std::size_t>(v),
                      fill_device);
}

}  // namespace ppsim
