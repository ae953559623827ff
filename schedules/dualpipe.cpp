// SPDX-License-Identifier: Apache-2.0
// DualPipe (DeepSeek-AI, DeepSeek-V3 Technical Report, arXiv 2412.19437, 3.2.1, Figure 5; the order
// of deepseek-ai/DualPipe's dualpipe/dualpipe.py, DualPipe.step, read at 3da1bbe): two pipelines over
// the same p stages in opposite directions. Direction 0 enters at device 0 (stage j on device j),
// direction 1 at device p-1 (its stage j, program stage p + j, on device p-1-j), each carrying m/2
// of the step's micro-batches; every device holds two stages' parameters, and the two replicas of a
// stage sum their gradients after the step (the example's all-gather of module grads).
//
// Rank r's order is DualPipeV's (dualpipe_v.cpp) for device h = min(r, p-1-r) of p/2 devices and m/2
// micro-batches: dualpipe.py XORs its "phase" with r >= p/2, so phase 0 is the direction entering at
// r's nearer end, and it runs the eight steps of dualpipev.py with `half_rank` in place of the rank,
// the two middle ranks taking the special first pair of DualPipeV's last device.
#include <algorithm>

#include "schedules/builders.hpp"

namespace ppsim {
namespace {

ActionStream dualpipe_device(ScheduleParams params, int r) {
  const int p = params.p;
  const int forward_stage = r;            // direction 0's stage on rank r
  const int reverse_stage = 2 * p - 1 - r;  // direction 1's stage p-1-r (program stage p + p-1-r)
  const bool second_half = r >= p / 2;
  const int near = second_half ? reverse_stage : forward_stage;
  const int far = second_half ? forward_stage : reverse_stage;
  return dualpipe_rank_order(p / 2, params.m / 2, std::min(r, p - 1 - r), near, far);
}

}  // namespace

std::optional<std::string> check_dualpipe(const ScheduleParams& params) {
  if (params.v != 1) {
    return "needs v = 1: DualPipe places one stage of each direction on every device, two pipelines of p stages "
           "(got v = " + std::to_string(params.v) + ")";
  }
  if (params.p % 2 != 0) {
    return "needs p even: dualpipe.py asserts num_ranks % 2 == 0, pairing rank r with rank p-1-r (got p = " +
           std::to_string(params.p) + ")";
  }
  if (params.m % 2 != 0 || params.m < 2 * params.p) {
    return "needs m even and m >= 2p: dualpipe.py asserts num_chunks % 2 == 0 and num_chunks >= num_ranks * 2, "
           "half of them in each direction (got m = " + std::to_string(params.m) + " for p = " +
           std::to_string(params.p) + ")";
  }
  return std::nullopt;
}

ScheduleStreams dualpipe_streams(const ScheduleParams& params) {
  ScheduleStreams streams{params, bidirectional_stage_mapping(params.p), dualpipe_device, true};
  streams.num_pipelines = 2;
  return streams;
}

}  // namespace ppsim
