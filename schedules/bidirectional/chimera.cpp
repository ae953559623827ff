// SPDX-License-Identifier: Apache-2.0
// Chimera (Li and Hoefler, "Chimera: Efficiently Training Large-Scale Neural Networks with
// Bidirectional Pipelines", SC'21): two pipelines over the same p stages in opposite directions, the
// down pipeline's stage j on rank j and the up pipeline's on rank p-1-j, each carrying half of the
// micro-batches, so every rank holds two stages and the replicas of a stage sum their gradients. The
// order is Ascend/MindSpeed's (mindspeed/core/pipeline_parallel/chimera/chimera_scheduler.py on
// branch core_r0.8.0, read at 46f6ca8; its grid of merged forward and backward blocks, one unit of p
// micro-batches after another), which is op for op the authors' own "direct concatenation"
// (Shigangli/Chimera, branch ChimeraBk at 052379b, main_with_runtime_direct.py's chimera loop).
//
// With h = p/2, rank r's own direction is the one whose first stage lies on its side (down for
// r < h), a = h - r (r < h) or r - h + 1, and b = h - a. Each unit of p micro-batches (p/2 each way)
// runs, with micro-batches first in, first out per direction,
//   a x [B own, F own]  (the first unit: a x [F own])
//   b x [F other, F own]
//   a x [F other, B other]
//   b x [B own, B other]
// and a x [B own] after the last unit. The paper's forward doubling (its 3.5, a separate script of
// the authors' that pairs units) is not this schedule; MindSpeed builds only the concatenation.
#include <array>

#include "schedules/bidirectional/paired_ranks.hpp"
#include "schedules/builders.hpp"

namespace ppsim {
namespace {

ActionStream chimera_device(ScheduleParams params, int r) {
  const int p = params.p;
  const int h = p / 2;
  const bool down = r < h;
  const int a = down ? h - r : r - h + 1;
  const int b = h - a;
  // Program stages: the down pipeline is stages 0..p-1, the up pipeline p..2p-1 (its stage j on
  // device p-1-j, so rank r holds up stage p-1-r).
  const int own_stage = down ? r : 2 * p - 1 - r;
  const int other_stage = down ? 2 * p - 1 - r : r;
  std::array<int, 2> forwards{0, 0};   // next forward's micro-batch: own, other
  std::array<int, 2> backwards{0, 0};  // next backward's
  auto forward = [&](int which) {
    return Action{which == 0 ? own_stage : other_stage, Op::kForward, forwards[static_cast<std::size_t>(which)]++};
  };
  auto backward = [&](int which) {
    return Action{which == 0 ? own_stage : other_stage, Op::kBackward, backwards[static_cast<std::size_t>(which)]++};
  };
  constexpr int kOwn = 0;
  constexpr int kOther = 1;
  for (int unit = 0; unit < params.m / p; ++unit) {
    for (int i = 0; i < a; ++i) {
      if (unit > 0) co_yield backward(kOwn);
      co_yield forward(kOwn);
    }
    for (int i = 0; i < b; ++i) {
      co_yield forward(kOther);
      co_yield forward(kOwn);
    }
    for (int i = 0; i < a; ++i) {
      co_yield forward(kOther);
      co_yield backward(kOther);
    }
    for (int i = 0; i < b; ++i) {
      co_yield backward(kOwn);
      co_yield backward(kOther);
    }
  }
  for (int i = 0; i < a; ++i) co_yield backward(kOwn);
}

}  // namespace

std::optional<std::string> check_chimera(const ScheduleParams& params) {
  return check_paired_ranks(params, 1,
                            "Chimera places one stage of each direction on every device, two pipelines of p stages",
                            "Chimera pairs rank r with rank p-1-r, half of the ranks starting each direction",
                            "MindSpeed's Chimera schedules units of p micro-batches, p/2 each way");
}

ScheduleStreams chimera_streams(const ScheduleParams& params) {
  return two_pipelines(params, bidirectional_stage_mapping(params.p), chimera_device);
}

}  // namespace ppsim
