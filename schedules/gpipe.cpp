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

Program build_gpipe(const ScheduleParams& params) {
  const auto fill_device = [&](int d, std::vector<Action>& list) {
    for (int j = 0; j < params.m; ++j) list.push_back({d, Op::kForward, j});
    for (int j = 0; j < params.m; ++j) list.push_back({d, Op::kBackward, j});
  };
  return make_program(params.p, params.m, loop_stage_mapping(params.p, 1), 2 * static_cast<std::size_t>(params.m),
                      fill_device);
}

}  // namespace ppsim
