// SPDX-License-Identifier: Apache-2.0
// BitPipe (Wu et al., "BitPipe: Bidirectional Interleaved Pipeline Parallelism for Accelerating Large
// Models Training", arXiv 2410.19367): two V-shaped pipelines of 2p stages in opposite directions,
// every rank holding four chunks, two of each direction. The order follows wuhouming/BitPipe's
// megatron/core/pipeline_parallel/bitpipe_schedule.py (forward_backward_pipelining_with_BitPipe,
// read at 6fb0e22; the schedule came in with c66cb12), and the placement its transformer.py and
// parallel_state.py set up. Rank r holds
//   chunk 0: down stage r           chunk 2: down stage 2p-1-r   (the down V: first and last on rank 0)
//   chunk 1: up stage p-1-r         chunk 3: up stage p+r        (the up V: first and last on rank p-1)
// so every stage has a replica on rank p-1-r, whose gradients the two ranks sum. The reference numbers
// a rank's passes with one id in [0, 2m): micro-batch b's first pass is b, its second m + b; b goes
// down when b mod p < p/2, so each direction gets m/2, in blocks of p/2.
//
// With h = p/2, d = min(r, p-1-r), u = h - d pairs and w = 3h + d warmup forwards, rank r runs
//   w F; m/p - 1 times { u (F, B); w-u+1 B; u-1 (F, B); w-u+1 F }; u (F, B); the remaining w B
// where F and B walk the lists below, one block of 2p ids per p micro-batches. The eager replica
// all-reduce the reference issues before its last backward is the step's replica reduction here
// (models/transformer/training_step.cpp), after the last backward.
#include <array>
#include <vector>

#include "schedules/bidirectional/paired_ranks.hpp"
#include "schedules/builders.hpp"

namespace ppsim {
namespace {

// One pass of a block: which chunk, and which of the block's p/2 micro-batches of that chunk.
struct Pass {
  int chunk;
  int index;
};

// The reference's order of one block's 2p passes (get_microbatch_idx with first = a, b and second =
// c, e): a's first u; then b and a alternating; then b's rest beside e's first; then c beside e's
// rest; then c's last u. The forwards walk it with (own, other, own + 2, other + 2), the backwards
// with the halves swapped.
std::vector<Pass> block_order(int h, int u, std::array<int, 4> chunk) {
  const auto [a, b, c, e] = chunk;
  std::vector<Pass> order;
  order.reserve(static_cast<std::size_t>(4 * h));
  for (int i = 0; i < u; ++i) order.push_back({a, i});
  for (int i = 0; i < h - u; ++i) {
    order.push_back({b, i});
    order.push_back({a, u + i});
  }
  for (int i = 0; i < u; ++i) {
    order.push_back({b, h - u + i});
    order.push_back({e, i});
  }
  for (int i = 0; i < h - u; ++i) {
    order.push_back({c, i});
    order.push_back({e, u + i});
  }
  for (int i = h - u; i < h; ++i) order.push_back({c, i});
  return order;
}

// A walk through one of the two lists, block after block.
class PassWalk {
 public:
  PassWalk(std::vector<Pass> order, std::array<int, 4> stage_of_chunk, int h, Op op)
      : order_(std::move(order)), stage_(stage_of_chunk), h_(h), op_(op) {}
  Action next() {
    const Pass pass = order_[position_];
    const Action action{stage_[static_cast<std::size_t>(pass.chunk)], op_, block_ * h_ + pass.index};
    if (++position_ == order_.size()) {
      position_ = 0;
      ++block_;
    }
    return action;
  }

 private:
  std::vector<Pass> order_;
  std::array<int, 4> stage_;
  int h_;
  Op op_;
  std::size_t position_ = 0;
  int block_ = 0;
};

ActionStream bitpipe_device(ScheduleParams params, int r) {
  const int p = params.p;
  const int h = p / 2;
  const int d = std::min(r, p - 1 - r);
  const int u = h - d;
  const int w = 3 * h + d;
  const int own = r < h ? 0 : 1;
  // Program stages: the down V is pipeline 0 (stages 0..2p-1), the up V pipeline 1 (2p..4p-1).
  const std::array<int, 4> stage_of_chunk{r, 2 * p + (p - 1 - r), 2 * p - 1 - r, 3 * p + r};
  PassWalk forward(block_order(h, u, {own, 1 - own, 2 + own, 3 - own}), stage_of_chunk, h, Op::kForward);
  PassWalk backward(block_order(h, u, {2 + own, 3 - own, own, 1 - own}), stage_of_chunk, h, Op::kBackward);
  for (int i = 0; i < w; ++i) co_yield forward.next();
  for (int block = 1; block < params.m / p; ++block) {
    for (int i = 0; i < u; ++i) {
      co_yield forward.next();
      co_yield backward.next();
    }
    for (int i = 0; i < w - u + 1; ++i) co_yield backward.next();
    for (int i = 0; i < u - 1; ++i) {
      co_yield forward.next();
      co_yield backward.next();
    }
    for (int i = 0; i < w - u + 1; ++i) co_yield forward.next();
  }
  for (int i = 0; i < u; ++i) {
    co_yield forward.next();
    co_yield backward.next();
  }
  for (int i = 0; i < w; ++i) co_yield backward.next();
}

}  // namespace

std::vector<int> bitpipe_stage_mapping(int p) {
  std::vector<int> mapping(4 * static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    mapping[static_cast<std::size_t>(r)] = r;                  // down stage r
    mapping[static_cast<std::size_t>(2 * p - 1 - r)] = r;      // down stage 2p-1-r
    mapping[static_cast<std::size_t>(2 * p + p - 1 - r)] = r;  // up stage p-1-r
    mapping[static_cast<std::size_t>(3 * p + r)] = r;          // up stage p+r
  }
  return mapping;
}

std::optional<std::string> check_bitpipe(const ScheduleParams& params) {
  return check_paired_ranks(params, 2,
                            "BitPipe places two chunks of each direction's V on every device, four in all, as "
                            "bitpipe_schedule.py forces virtual_pipeline_model_parallel_size = 4",
                            "BitPipe pairs rank r with rank p-1-r, its replica",
                            "bitpipe_schedule.py raises for a number of micro-batches not divisible by the pipeline "
                            "size, its blocks holding p each");
}

ScheduleStreams bitpipe_streams(const ScheduleParams& params) {
  return two_pipelines(params, bitpipe_stage_mapping(params.p), bitpipe_device);
}

}  // namespace ppsim
