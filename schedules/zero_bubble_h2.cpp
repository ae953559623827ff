// SPDX-License-Identifier: Apache-2.0
// ZB-H2, the handcrafted zero-bubble schedule: ZB-H1 with extra warmup forwards that fill the wait
// for the first I, and W's held back twice as long, so every device keeps 2p-1 micro-batches in flight.
//
// Source: Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §2.2, §2.3 (Table 2) and Figure 3
// (bottom): more F passes in the warm-up "to fill the bubble preceding the initial B", and the W's
// reordered at the tail so the layout becomes a parallelogram. Figure 3 gives the first and last device
// at p = 4, m = 8: device 1 runs F1..F7, B1 W1 F8, then B W pairs; device 4 runs F B pairs for
// micro-batches 1..7, then W1 F8 B8, then W2..W8. The authors' code has no handcrafted ZB-H2
// (sail-sg/zero-bubble-pipeline-parallelism reaches ZB-2p through its heuristic/ILP scheduler with a
// 2p memory limit), so the devices in between follow ZB-H1's rule (ZeroBubbleH1Pipeline.steps in
// microsoft/Megatron-DeepSpeed, megatron/core/pipeline_parallel/deepspeed_zbh1_schedule.py) with doubled
// counts, which reproduces both rows of Figure 3 and §2.3's memory of every worker. Device d runs:
// - 2(p-d-1) warmup forwards: with T_F = T_B its first I can start (2p-2d-1)·T_F after its first F, a
//   wait it fills with forwards where 1F1B runs only p-d-1;
// - 2d pairs F, I with their W's held back, then steady triples F, I, W (the oldest pending W);
// - cooldown pairs I, W that keep 2d W's pending, then those 2d W's.
// In the paper's notation (T_B = I's time), device 0 idles (p-1)(T_F+T_B-2T_W) between its first and
// last op when T_W <= T_F and T_W <= T_B, none at T_F = T_B = T_W: the paper drops the optimizer-step
// synchronisation so the parallelogram tiles. Device d holds at most 2p-2d-1 full stashes plus 2d that
// only W still needs: (2p-2d-1)·M_B + 2d·M_W, so (2p-1)·M_B on device 0. Below m = 2p-1 device d holds
// 2d - (2p-1-m) W's instead, the order the zero-bubble repository's scheduler builds there (see
// zero_bubble_h2_device); the closed forms hold from m = 2p-1 on.
#include <algorithm>

#include "schedules/builders.hpp"
#include "schedules/held_weight_order.hpp"

namespace ppsim {

std::optional<std::string> check_zero_bubble_h2(const ScheduleParams& params) {
  if (auto why = check_single_chunk(params)) return why;
  return std::nullopt;
}

ActionStream zero_bubble_h2_device(ScheduleParams params, int d) {
  // Below 2p-1 micro-batches the first I comes back before device d has 2d W's to hold: it holds
  // 2d - (2p-1-m), which is what the zero-bubble repository's scheduler (zb.py, memory limit 2p)
  // builds there, so its W's fill the waits it has instead of piling up at the end.
  const int short_by = std::max(0, 2 * params.p - 1 - params.m);
  return held_weight_order(d, params.m, 2 * (params.p - d - 1), std::max(0, 2 * d - short_by));
}

ScheduleStreams zero_bubble_h2_streams(const ScheduleParams& params) {
  return {params, loop_stage_mapping(params.p, 1), zero_bubble_h2_device};
}

}  // namespace ppsim
