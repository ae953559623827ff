// SPDX-License-Identifier: Apache-2.0
#pragma once
// One op on one stage for one micro-batch, in torch.distributed.pipelining's `0F1` notation.

#include <cstdint>
#include <string>
#include <string_view>

namespace ppsim {

// F: forward; B: full backward (I and W fused); I: input-gradient backward; W: weight-gradient backward.
enum class Op : std::uint8_t { kForward, kBackward, kBackwardInput, kBackwardWeight };

inline constexpr int kNumOps = 4;

char op_letter(Op op);
// B or I: the ops that send a gradient to the previous stage.
inline bool is_backward_input(Op op) { return op == Op::kBackward || op == Op::kBackwardInput; }

struct Action {
  std::int32_t stage = 0;
  Op op = Op::kForward;
  // This F and the next action of the device's list, a B or I of another stage, run as one
  // overlapped op: torch.distributed.pipelining's OVERLAP_F_B, as DualPipe uses it. It sits beside
  // `op` so an action stays 12 bytes; the constructor keeps {stage, op, microbatch} working.
  bool fused_with_next = false;
  std::int32_t microbatch = 0;

  constexpr Action() = default;
  constexpr Action(std::int32_t stage_index, Op kind, std::int32_t microbatch_index, bool fused = false)
      : stage(stage_index), op(kind), fused_with_next(fused), microbatch(microbatch_index) {}

  friend bool operator==(const Action&, const Action&) = default;
};
static_assert(sizeof(Action) == 12, "programs hold millions of actions");

// "2F0", "0B3", "1W7": stage, op letter, micro-batch; the exact inverse of parse_action.
std::string to_string(const Action& action);

struct ActionParse {
  bool ok = false;
  Action action;
  std::string error;  // why the text is not an action, when !ok
};

// Accepts exactly what to_string prints: no signs, spaces or leading zeros, so that the
// round trip text -> Action -> text is the identity.
ActionParse parse_action(std::string_view text);

// A schedule cell: one action, or an overlapped pair as torch prints it, "(0F3;3B1)OVERLAP_F_B".
// `second` is meaningful only for a pair; then first.fused_with_next is set.
struct CellParse {
  bool ok = false;
  bool pair = false;
  Action first;
  Action second;
  std::string error;
};
CellParse parse_cell(std::string_view text);

// The cell text of `action`, or of the pair it starts when it is fused with `next`.
std::string cell_text(const Action& action, const Action* next = nullptr);

}  // namespace ppsim
