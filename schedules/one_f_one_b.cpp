// 1F1B, PipeDream-Flush (Narayanan et al., SC'21 §2.2.1), as Megatron-LM's
// forward_backward_pipelining_without_interleaving orders it: device d runs
// min(p-d-1, m) warmup forwards, then alternates forward(warmup+i) and backward(i),
// then drains the remaining backwards. At most min(p-d, m) micro-batches are stashed on device d.
#include <algorithm>

#include "schedules/builders.hpp"

namespace ppsim {

ActionStream one_f_one_b_device(ScheduleParams params, int d) {
  const int warmup = std::min(params.p - d - 1, params.m);
  for (int j = 0; j < warmup; ++j) co_yield Action{d, Op::kForward, j};
  ActionStream::promise_type& buffer = co_await ActionStream::buffer();
  for (int i = 0; i + warmup < params.m;) {
    // The steady pairs the buffer has room for, written straight; the one that fills it is yielded.
    int k = i;
    for (const int end = params.m - warmup; k < end && buffer.room() >= 2; ++k) {
      buffer.put(Action{d, Op::kForward, warmup + k});
      buffer.put(Action{d, Op::kBackward, k});
    }
    i = k;
    if (i + warmup < params.m) {
      co_yield Action{d, Op::kForward, warmup + i};
      co_yield Action{d, Op::kBackward, i};
      ++i;
    }
  }
  for (int j = params.m - warmup; j < params.m; ++j) co_yield Action{d, Op::kBackward, j};
}

ScheduleStreams one_f_one_b_streams(const ScheduleParams& params) {
  return {params, loop_stage_mapping(params.p, 1), one_f_one_b_device};
}

}  // namespace ppsim
