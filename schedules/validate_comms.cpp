// SPDX-License-Identifier: Apache-2.0
// validate_comm_actions (validate.hpp): the rules torch's runtime enforces when it replays a lowered
// schedule (_PipelineScheduleRuntime._step_microbatches: "Computing ... before receiving input",
// "Recv twice ..."), checked before the run so that a broken file is exit 3 with the grid, never a hang.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "schedules/validate.hpp"

namespace ppsim {
namespace {

constexpr std::int64_t kAbsent = -1;

// One direction's messages (activations forward, gradients backward), per (stage, micro-batch) of
// the stage that sends (send, compute) or receives (recv): positions in their devices' lists
// (kAbsent when there is none) and the devices of the send and the receive.
struct Messages {
  std::vector<std::int64_t> compute;  // the F, or the B or I, that makes (and on its peer uses) one
  std::vector<std::int64_t> send, recv;
  std::vector<int> send_device, recv_device;

  explicit Messages(std::size_t slots)
      : compute(slots, kAbsent), send(slots, kAbsent), recv(slots, kAbsent), send_device(slots, -1),
        recv_device(slots, -1) {}
};

ScheduleProblem problem(int device, std::size_t step, std::string message) {
  return ScheduleProblem{std::move(message), GridMark{device, step}};
}

std::string on_device(int device) { return "device " + std::to_string(device); }

}  // namespace

std::optional<ScheduleProblem> validate_comm_actions(const Program& program) {
  if (program.comms.empty()) return std::nullopt;
  const int stages = program.num_stages();
  const int m = program.num_microbatches;
  const PipelineShape shape = program.pipeline_shape();
  const std::size_t slots = static_cast<std::size_t>(stages) * static_cast<std::size_t>(m);
  auto key = [&](std::int32_t stage, std::int32_t microbatch) {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(m) + static_cast<std::size_t>(microbatch);
  };
  std::array<Messages, 2> directions{Messages(slots), Messages(slots)};  // [0] forward, [1] backward
  for (std::size_t d = 0; d < program.actions.size(); ++d) {
    const auto& list = program.actions[d];
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Action& a = list[i];
      if (a.op == Op::kForward) directions[0].compute[key(a.stage, a.microbatch)] = static_cast<std::int64_t>(i);
      if (is_backward_input(a.op)) directions[1].compute[key(a.stage, a.microbatch)] = static_cast<std::int64_t>(i);
    }
  }
  auto device_of = [&](std::int32_t stage) { return program.stage_device[static_cast<std::size_t>(stage)]; };

  for (std::size_t d = 0; d < program.comms.size(); ++d) {
    const int device = static_cast<int>(d);
    for (const CommAction& c : program.comms[d]) {
      const std::string name = to_string(c);
      if (c.stage >= stages) {
        return problem(device, c.before,
                       name + " names stage " + std::to_string(c.stage) + ", but the schedule has stages 0.." +
                           std::to_string(stages - 1));
      }
      if (device_of(c.stage) != device) {
        return problem(device, c.before,
                       name + " is on " + on_device(device) + ", but stage " + std::to_string(c.stage) + " is on " +
                           on_device(device_of(c.stage)));
      }
      if (!is_send(c.op) && !is_recv(c.op)) continue;  // UNSHARD, RESHARD, REDUCE_GRAD: any position
      if (c.microbatch >= m) {
        return problem(device, c.before,
                       name + " names micro-batch " + std::to_string(c.microbatch) + ", but the schedule has " +
                           std::to_string(m));
      }
      const bool forward = c.op == CommOp::kSendF || c.op == CommOp::kRecvF;
      // The stage at the other end: a forward message goes from s to s + 1, a gradient from s to s - 1.
      const std::int32_t peer = is_send(c.op) ? (forward ? c.stage + 1 : c.stage - 1)
                                              : (forward ? c.stage - 1 : c.stage + 1);
      const bool crosses = forward == is_send(c.op) ? shape.last(c.stage) : shape.first(c.stage);
      if (peer < 0 || peer >= stages || crosses) {
        return problem(device, c.before,
                       name + ": stage " + std::to_string(c.stage) + " " + (is_send(c.op) ? "sends" : "receives") +
                           " no " + (forward ? "activation" : "gradient") + " there, " +
                           (peer < 0 || peer >= stages ? "having no stage " + std::to_string(peer)
                                                       : "stage " + std::to_string(peer) + " being in another pipeline"));
      }
      if (device_of(peer) == device) {
        return problem(device, c.before,
                       name + " moves nothing: stage " + std::to_string(peer) + " is on the same device, which " +
                           "hands it over without a message (torch's lowering adds none)");
      }
      const std::size_t k = key(c.stage, c.microbatch);
      Messages& messages = directions[forward ? 0 : 1];
      std::vector<std::int64_t>& seen = is_send(c.op) ? messages.send : messages.recv;
      if (seen[k] != kAbsent) return problem(device, c.before, name + " appears twice");
      seen[k] = static_cast<std::int64_t>(c.before);
      (is_send(c.op) ? messages.send_device : messages.recv_device)[k] = device;
      // The compute action that makes (send) or uses (receive) the message, on this device.
      const std::int64_t compute = messages.compute[k];
      const std::string op_name =
          forward ? to_string(Action{c.stage, Op::kForward, c.microbatch})
                  : to_string(Action{c.stage, Op::kBackward, c.microbatch}) + " (or " +
                        to_string(Action{c.stage, Op::kBackwardInput, c.microbatch}) + ")";
      if (is_send(c.op) && compute >= static_cast<std::int64_t>(c.before)) {
        return problem(device, c.before, name + " comes before " + op_name + ", which makes what it sends");
      }
      if (is_recv(c.op) && compute < static_cast<std::int64_t>(c.before)) {
        return problem(device, c.before, name + " comes after " + op_name + ", which needs what it receives");
      }
    }
  }

  // Every message between devices has its send and its receive; each send or receive its partner.
  for (std::int32_t s = 0; s < stages; ++s) {
    for (std::int32_t j = 0; j < m; ++j) {
      for (const bool forward : {true, false}) {
        const std::int32_t peer = forward ? s + 1 : s - 1;
        if ((forward ? shape.last(s) : shape.first(s)) || device_of(peer) == device_of(s)) continue;
        const Messages& messages = directions[forward ? 0 : 1];
        const std::size_t k = key(s, j);
        const std::size_t to = key(peer, j);
        const CommAction send{0, forward ? CommOp::kSendF : CommOp::kSendB, s, j};
        const CommAction recv{0, forward ? CommOp::kRecvF : CommOp::kRecvB, peer, j};
        if (messages.send[k] == kAbsent) {
          const bool received = messages.recv_device[to] >= 0;
          const std::string what = forward ? to_string(Action{s, Op::kForward, j}) + "'s activation"
                                           : "stage " + std::to_string(s) + "'s gradient of micro-batch " +
                                                 std::to_string(j);
          return problem(received ? messages.recv_device[to] : device_of(s),
                         static_cast<std::size_t>(received ? messages.recv[to]
                                                           : std::max<std::int64_t>(messages.compute[k], 0)),
                         "no " + to_string(send) + " on " + on_device(device_of(s)) + " hands " + what +
                             " to the link" + (received ? " that " + to_string(recv) + " waits on" : "") +
                             " (a lowered schedule names every send and receive)");
        }
        if (messages.recv[to] == kAbsent) {
          return problem(messages.send_device[k], static_cast<std::size_t>(messages.send[k]),
                         to_string(send) + " has no " + to_string(recv) + " on " + on_device(device_of(peer)));
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace ppsim
