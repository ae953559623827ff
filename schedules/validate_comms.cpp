// validate_comm_actions (validate.hpp): the rules torch's runtime enforces when it replays a lowered
// schedule (_PipelineScheduleRuntime._step_microbatches: "Computing ... before receiving input",
// "Recv twice ..."), checked before the run so that a broken file is exit 3 with the grid, never a hang.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "schedules/validate.hpp"

namespace ppsim {
namespace {

constexpr std::int64_t kAbsent = -1;

// Per (stage, micro-batch): positions of the F and of the B or I on their device, and of each
// kind of send and receive (kAbsent when there is none).
struct Positions {
  std::size_t m = 0;
  std::vector<std::int64_t> forward, backward;
  std::vector<std::int64_t> send_f, recv_f, send_b, recv_b;
  std::vector<int> send_f_device, recv_f_device, send_b_device, recv_b_device;

  std::size_t key(std::int32_t stage, std::int32_t microbatch) const {
    return static_cast<std::size_t>(stage) * m + static_cast<std::size_t>(microbatch);
  }
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
  Positions at;
  at.m = static_cast<std::size_t>(m);
  const std::size_t slots = static_cast<std::size_t>(stages) * at.m;
  for (auto* list : {&at.forward, &at.backward, &at.send_f, &at.recv_f, &at.send_b, &at.recv_b}) {
    list->assign(slots, kAbsent);
  }
  for (auto* list : {&at.send_f_device, &at.recv_f_device, &at.send_b_device, &at.recv_b_device}) list->assign(slots, -1);
  for (std::size_t d = 0; d < program.actions.size(); ++d) {
    const auto& list = program.actions[d];
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Action& a = list[i];
      if (a.op == Op::kForward) at.forward[at.key(a.stage, a.microbatch)] = static_cast<std::int64_t>(i);
      if (is_backward_input(a.op)) at.backward[at.key(a.stage, a.microbatch)] = static_cast<std::int64_t>(i);
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
      if (peer < 0 || peer >= stages) {
        return problem(device, c.before,
                       name + ": stage " + std::to_string(c.stage) + " " + (is_send(c.op) ? "sends" : "receives") +
                           " no " + (forward ? "activation" : "gradient") + " there, having no stage " +
                           std::to_string(peer));
      }
      if (device_of(peer) == device) {
        return problem(device, c.before,
                       name + " moves nothing: stage " + std::to_string(peer) + " is on the same device, which " +
                           "hands it over without a message (torch's lowering adds none)");
      }
      const std::size_t k = at.key(c.stage, c.microbatch);
      std::vector<std::int64_t>& seen = c.op == CommOp::kSendF   ? at.send_f
                                        : c.op == CommOp::kRecvF ? at.recv_f
                                        : c.op == CommOp::kSendB ? at.send_b
                                                                 : at.recv_b;
      if (seen[k] != kAbsent) return problem(device, c.before, name + " appears twice");
      seen[k] = static_cast<std::int64_t>(c.before);
      (c.op == CommOp::kSendF   ? at.send_f_device
       : c.op == CommOp::kRecvF ? at.recv_f_device
       : c.op == CommOp::kSendB ? at.send_b_device
                                : at.recv_b_device)[k] = device;
      // The compute action that makes (send) or uses (receive) the message, on this device.
      const std::int64_t compute = (forward ? at.forward : at.backward)[k];
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
      const std::size_t k = at.key(s, j);
      if (s + 1 < stages && device_of(s + 1) != device_of(s)) {
        const std::size_t to = at.key(s + 1, j);
        const CommAction send{0, CommOp::kSendF, s, j};
        const CommAction recv{0, CommOp::kRecvF, s + 1, j};
        if (at.send_f[k] == kAbsent) {
          const int d = at.recv_f_device[to] >= 0 ? at.recv_f_device[to] : device_of(s);
          const std::size_t step = static_cast<std::size_t>(at.recv_f_device[to] >= 0 ? at.recv_f[to]
                                                                                       : std::max<std::int64_t>(at.forward[k], 0));
          return problem(d, step,
                         "no " + to_string(send) + " on " + on_device(device_of(s)) + " hands " +
                             to_string(Action{s, Op::kForward, j}) + "'s activation to the link" +
                             (at.recv_f_device[to] >= 0 ? " that " + to_string(recv) + " waits on" : "") +
                             " (a lowered schedule names every send and receive)");
        }
        if (at.recv_f[to] == kAbsent) {
          return problem(at.send_f_device[k], static_cast<std::size_t>(at.send_f[k]),
                         to_string(send) + " has no " + to_string(recv) + " on " + on_device(device_of(s + 1)));
        }
      }
      if (s > 0 && device_of(s - 1) != device_of(s)) {
        const std::size_t to = at.key(s - 1, j);
        const CommAction send{0, CommOp::kSendB, s, j};
        const CommAction recv{0, CommOp::kRecvB, s - 1, j};
        if (at.send_b[k] == kAbsent) {
          const int d = at.recv_b_device[to] >= 0 ? at.recv_b_device[to] : device_of(s);
          const std::size_t step = static_cast<std::size_t>(at.recv_b_device[to] >= 0 ? at.recv_b[to]
                                                                                       : std::max<std::int64_t>(at.backward[k], 0));
          return problem(d, step,
                         "no " + to_string(send) + " on " + on_device(device_of(s)) + " hands stage " +
                             std::to_string(s) + "'s gradient of micro-batch " + std::to_string(j) + " to the link" +
                             (at.recv_b_device[to] >= 0 ? " that " + to_string(recv) + " waits on" : "") +
                             " (a lowered schedule names every send and receive)");
        }
        if (at.recv_b[to] == kAbsent) {
          return problem(at.send_b_device[k], static_cast<std::size_t>(at.send_b[k]),
                         to_string(send) + " has no " + to_string(recv) + " on " + on_device(device_of(s - 1)));
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace ppsim
