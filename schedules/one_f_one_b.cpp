// SPDX-License-Identifier: Apache-2.0
// 1F1B, PipeDream-Flush (Narayanan et al., SC'21 §2.2.1), as Megatron-LM's
// forward_backward_pipelining_without_interleaving orders it: device d runs
// min(p-d-1, m) warmup forwards, then alternates forward(warmup+i) and backward(i),
// then drains the remaining backwards. At most min(p-d, m) micro-batches are stashed on device d.
#include <algorithm>

#include "schedules/builders.hpp"

namespace ppsim {

namespace {

// Steady pairs F(warmup + k) B(k) for k in [first, first + pairs), written from `out` on; a plain
// function, so that its counters live in registers across the stores.
void write_steady_pairs(Action* out, int d, int warmup, int first, int pairs) {
  for (int k = first; k < first + pairs; ++k) {
    *out++ = Action{d, Op::kForward, warmup + k};
    *out++ = Action{d, Op::kBackward, k};
  }
}

}  // namespace

ActionStream one_f_one_b_device(ScheduleParams params, int d) {
  const int warmup = std::min(params.p - d - 1, params.m);
  for (int j = 0; j < warmup; ++j) co_yield Action{d, Op::kForward, j};
  ActionStream::promise_type& buffer = co_await ActionStream::buffer();
  const int steady = params.m - warmup;
  for (int i = 0; i < steady;) {
    // The steady pairs the buffer has room for, written straight; the one that fills it is yielded.
    const int pairs = std::min(static_cast<int>(buffer.room() / 2), steady - i);
    write_steady_pairs(buffer.free_slots(), d, warmup, i, pairs);
    buffer.commit(2 * static_cast<std::size_t>(pairs));
    i += pairs;
    if (i < steady) {
      co_yield Action{d, Op::kForward, warmup + i};
      co_yield Action{d, Op::kBackward, i};
      ++i;
    }
  }
  for (int j = steady; j < params.m; ++j) co_yield Action{d, Op::kBackward, j};
}

ScheduleStreams one_f_one_b_streams(const ScheduleParams& params) {
  return {params, loop_stage_mapping(params.p, 1), one_f_one_b_device};
}

}  // namespace ppsim
