// SPDX-License-Identifier: Apache-2.0
#pragma once
// An expert all-to-all inside a compute op (an MoE layer's token dispatch or combine under expert
// parallelism), as a cost model places it for the trace's and the picture's communication lane.
// It costs nothing by itself here: its time is already part of the op's (CostModel::compute_time or
// overlap_time); this only says where in the op it runs.

#include <cstdint>

namespace ppsim {

// Which of an MoE layer's two exchanges: the dispatch sends each token's copies to the ranks holding
// its experts, the combine brings the experts' outputs back. In a backward op they are the
// gradients of these, combine's first (megatron/core/transformer/moe/token_dispatcher.py).
enum class ExchangeKind : std::uint8_t { kDispatch, kCombine };

inline const char* exchange_name(ExchangeKind kind) { return kind == ExchangeKind::kDispatch ? "dispatch" : "combine"; }

struct Exchange {
  double from = 0;  // fractions of the op's time from its start
  double to = 0;
  ExchangeKind kind = ExchangeKind::kDispatch;
  bool of_partner = false;  // an overlapped pair's: the backward half moves it (else the forward)
  bool recomputed = false;  // a backward's re-run of its layer's forward (full recomputation)
};

}  // namespace ppsim
