// SPDX-License-Identifier: Apache-2.0
#pragma once
// torch.distributed.pipelining's communication and FSDP actions: what its lowering passes
// (_add_unshard_reshard, _add_reduce_grad, _add_send_recv in schedules.py) add between a rank's
// compute actions, and what _dump_csv writes by default (format "compute_comms"):
//   0SEND_F1   stage 0 hands micro-batch 1's activation to the link to stage 1's device
//   1RECV_F1   stage 1's device waits for that activation
//   1SEND_B1   stage 1 hands micro-batch 1's input gradient to the link to stage 0's device
//   0RECV_B1   stage 0's device waits for that gradient
//   0UNSHARD, 0RESHARD, 0REDUCE_GRAD   FSDP's all-gather, release and gradient reduction of stage 0
// A program holds them beside its compute actions (Program::comms), each at the position of the
// compute action it precedes.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim {

enum class CommOp : std::uint8_t { kSendF, kRecvF, kSendB, kRecvB, kUnshard, kReshard, kReduceGrad };

struct CommAction {
  std::size_t before = 0;  // position in its device's compute list of the action it precedes
  CommOp op = CommOp::kSendF;
  std::int32_t stage = 0;
  std::int32_t microbatch = -1;  // -1 for UNSHARD, RESHARD and REDUCE_GRAD, which take none

  friend bool operator==(const CommAction&, const CommAction&) = default;
};

// SEND_F and SEND_B, RECV_F and RECV_B: the actions that move a message.
inline bool is_send(CommOp op) { return op == CommOp::kSendF || op == CommOp::kSendB; }
inline bool is_recv(CommOp op) { return op == CommOp::kRecvF || op == CommOp::kRecvB; }

// "0SEND_F1", "0UNSHARD": the exact inverse of parse_comm_action.
std::string to_string(const CommAction& action);

struct CommParse {
  bool recognized = false;  // the text names a communication or FSDP action, well formed or not
  bool ok = false;
  CommAction action;  // `before` is left 0 for the reader to set
  std::string error;
};

// As torch's _Action.from_str reads them, but exactly: no signs, blanks or leading zeros; a micro-batch
// after SEND_/RECV_ and none after UNSHARD, RESHARD and REDUCE_GRAD.
CommParse parse_comm_action(std::string_view text);

}  // namespace ppsim
