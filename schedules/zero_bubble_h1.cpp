// SPDX-License-Identifier: Apache-2.0
// ZB-H1, the memory-efficient handcrafted zero-bubble schedule: 1F1B with every backward split into
// I and W, and each device's W's held back so that all devices keep p micro-batches in flight.
//
// Source: Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §2.1, §2.3 (Table 2) and Figure 3
// (top), and the per-stage order of ZeroBubbleH1Pipeline.steps in microsoft/Megatron-DeepSpeed,
// megatron/core/pipeline_parallel/deepspeed_zbh1_schedule.py, with --enable-zbh1-exact-semantics (it
// fuses I and W on the first stage, where W follows I at once anyway; ppsim splits it as Figure 3 does).
// Device d runs:
// - p-d-1 warmup forwards, as 1F1B;
// - d pairs F, I with their W's held back (none on the first device, p-1 on the last), so that every
//   device's first I starts as soon as the gradient arrives: device 0 waits (p-1)·T_B, not 1F1B's
//   (p-1)·(T_B+T_W);
// - steady triples F, I, W (the oldest pending W), then cooldown pairs I, W that keep d W's pending,
//   then those d W's, which fill the tail where 1F1B idles.
// In the paper's notation (T_B = I's time), device 0 idles (p-1)(T_F+T_B-T_W) between its first and last
// op when T_W <= T_F, and device d holds at most p-d full stashes plus d that only W still needs:
// (p-d)·M_B + d·M_W, so p·M_B on device 0, as 1F1B. With m < p the same rule gives the zero-bubble
// repository's hand-written ZB-H1 (branch zb-h1-quick-start, Megatron's 1F1B with warmup min(p-d-1, m)
// and W's held d back): the last devices never reach their steady state, and the closed forms above
// hold only from m = p on.
#include <algorithm>

#include "schedules/builders.hpp"
#include "schedules/held_weight_order.hpp"

namespace ppsim {

std::optional<std::string> check_zero_bubble_h1(const ScheduleParams& params) {
  if (auto why = check_single_chunk(params)) return why;
  return std::nullopt;
}

ActionStream zero_bubble_h1_device(ScheduleParams params, int d) {
  return held_weight_order(d, params.m, params.p - d - 1, d);
}

ScheduleStreams zero_bubble_h1_streams(const ScheduleParams& params) {
  return {params, loop_stage_mapping(params.p, 1), zero_bubble_h1_device};
}

}  // namespace ppsim
