// 1F1B, PipeDream-Flush (Narayanan et al., SC'21 §2.2.1), as Megatron-LM's
// forward_backward_pipelining_without_interleaving orders it: device d runs
// min(p-d-1, m) warmup forwards, then alternates forward(warmup+i) and backward(i),
// then drains the remaining backwards. At most min(p-d, m) micro-batches are stashed on device d.
#include <algorithm>

#include "schedules/builders.hpp"

namespace ppsim {

Program build_one_f_one_b(const ScheduleParams& params) {
  const auto fill_device = [&](int d, std::vector<Action>& list) {
    const int warmup = std::min(params.p - d - 1, params.m);
    for (int j = 0; j < warmup; ++j) list.push_back({d, Op::kForward, j});
    for (int i = 0; i + warmup < params.m; ++i) {
      list.push_back({d, Op::kForward, warmup + i});
      list.push_back({d, Op::kBackward, i});
    }
    for (int j = params.m - warmup; j < params.m; ++j) list.push_back({d, Op::kBackward, j});
  };
  return make_program(params.p, params.m, loop_stage_mapping(params.p, 1), 2 * static_cast<std::size_t>(params.m),
                      fill_device);
}

}  // namespace ppsim
