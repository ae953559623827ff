// SPDX-License-Identifier: Apache-2.0
#include "sim/engine.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace ppsim {
namespace {

constexpr double kUnknown = std::numeric_limits<double>::infinity();

std::size_t index(int i) { return static_cast<std::size_t>(i); }

std::size_t op_index(Op op) { return static_cast<std::size_t>(op); }

double transfer_time(std::int64_t bytes, double bandwidth) {
  return bytes == 0 ? 0.0 : static_cast<double>(bytes) / bandwidth;
}

}  // namespace

std::string Deadlock::summary() const {
  std::string line = "deadlock:";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const StuckDevice& stuck = devices[i];
    line += (i == 0 ? " device " : "; device ") + std::to_string(stuck.device) + " at step " +
            std::to_string(stuck.step) + " (" + to_string(stuck.next) + ") waits for " + stuck.waits_for;
  }
  return line;
}

void Engine::prepare_links(const std::vector<int>& stage_device, const CostModel& costs,
                           std::vector<double>& bandwidth) {
  // Links exist between the devices of adjacent stages, in both directions.
  std::vector<std::pair<int, int>> pairs;
  const int stages = static_cast<int>(stage_device.size());
  for (int s = 0; s + 1 < stages; ++s) {
    if (stages_[index(s)].last) continue;  // no message crosses into another pipeline
    const int a = stage_device[index(s)];
    const int b = stage_device[index(s + 1)];
    if (a != b) {
      pairs.emplace_back(a, b);
      pairs.emplace_back(b, a);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  links_.assign(pairs.size(), Link{});
  bandwidth.assign(pairs.size(), 0.0);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const LinkParams params = costs.link(pairs[i].first, pairs[i].second);
    links_[i].src = pairs[i].first;
    links_[i].dst = pairs[i].second;
    links_[i].latency = params.latency;
    bandwidth[i] = params.bandwidth;
  }
  auto link_index = [&](int src, int dst) {
    auto it = std::lower_bound(pairs.begin(), pairs.end(), std::make_pair(src, dst));
    return static_cast<int>(it - pairs.begin());
  };
  for (int s = 0; s < stages; ++s) {
    StageInfo& info = stages_[index(s)];
    if (!info.last && stage_device[index(s + 1)] != info.device) {
      info.forward.link = link_index(info.device, stage_device[index(s + 1)]);
      info.forward.bytes = costs.message_bytes(s, s + 1);
      info.forward.send_time = transfer_time(info.forward.bytes, bandwidth[index(info.forward.link)]);
    }
    if (!info.first && stage_device[index(s - 1)] != info.device) {
      info.backward.link = link_index(info.device, stage_device[index(s - 1)]);
      info.backward.bytes = costs.message_bytes(s, s - 1);
      info.backward.send_time = transfer_time(info.backward.bytes, bandwidth[index(info.backward.link)]);
    }
  }
}

void Engine::prepare_common(int p, int m, const std::vector<int>& stage_device, int pipelines,
                            const CostModel& costs, const EngineOptions& options) {
  costs_ = &costs;
  options_ = options;
  record_exchanges_ = options.record_timeline && costs.has_exchanges();
  if (options_.noise != nullptr && !options_.noise->any()) options_.noise = nullptr;  // none: no draws
  if (options_.noise != nullptr) {
    for (std::size_t k = 0; k < kNumOps; ++k) op_draws_[k] = NoiseDraw(options_.noise->distribution, options_.noise->op_cv[k]);
    link_draw_ = NoiseDraw(options_.noise->distribution, options_.noise->link_cv);
  }
  m_ = m;
  const int stages = static_cast<int>(stage_device.size());
  const PipelineShape shape{stages, pipelines};
  stages_.assign(index(stages), StageInfo{});
  for (int s = 0; s < stages; ++s) {
    StageInfo& info = stages_[index(s)];
    for (Op op : {Op::kForward, Op::kBackward, Op::kBackwardInput, Op::kBackwardWeight}) {
      info.time[op_index(op)] = costs.compute_time(op, s);
    }
    info.activation_bytes = costs.activation_bytes(s);
    info.weight_bytes = costs.weight_stash_bytes(s);
    info.device = stage_device[index(s)];
    info.first = shape.first(s);
    info.last = shape.last(s);
    if (!info.last) info.forward.consumer = stage_device[index(s + 1)];
    if (!info.first) info.backward.consumer = stage_device[index(s - 1)];
  }
  std::vector<double> bandwidth;
  prepare_links(stage_device, costs, bandwidth);
  // A link is timed when any of its messages takes time: an instant message queues behind a timed one.
  std::vector<bool> timed(links_.size(), false);
  for (std::size_t l = 0; l < links_.size(); ++l) timed[l] = links_[l].latency != 0;
  for (const StageInfo& info : stages_) {
    for (const StageOutput* output : {&info.forward, &info.backward}) {
      if (output->link >= 0 && output->send_time != 0) timed[index(output->link)] = true;
    }
  }
  for (int s = 0; s < stages; ++s) {
    StageInfo& info = stages_[index(s)];
    const auto kind = [&](const StageOutput& output) {
      // A stage on the same device (no link) reads the message as soon as it is sent.
      return output.link >= 0 && timed[index(output.link)] ? kTimedMessage : kInstantMessage;
    };
    const bool first = info.first;
    const std::uint8_t gradient = first ? kNoMessage : kind(info.backward);
    info.code[op_index(Op::kForward)] = trusted_code(Op::kForward, !first, info.last ? kNoMessage : kind(info.forward));
    info.code[op_index(Op::kBackward)] = trusted_code(Op::kBackward, !info.last, gradient);
    info.code[op_index(Op::kBackwardInput)] = trusted_code(Op::kBackwardInput, !info.last, gradient);
    info.code[op_index(Op::kBackwardWeight)] = trusted_code(Op::kBackwardWeight, false, kNoMessage);
  }
  figures_.assign(index(p), DeviceFigures{});
  const std::size_t timed_stages = options.record_stage_times ? index(stages) : 0;
  stage_figures_.assign(timed_stages, StageFigures{});
  memory_.resize(index(p));
  for (int d = 0; d < p; ++d) {
    memory_[index(d)].reset(costs.static_bytes(d), costs.weight_stash_fraction());
    figures_[index(d)].static_bytes = costs.static_bytes(d);
  }
  // A lowered program's gates, deferred sends and FSDP state belong to the run that set them up:
  // one engine runs a lowered program, then a sweep, and the summary must not read the first's.
  gates_.clear();
  deferred_sends_.clear();
  sharding_.clear();
  unsharded_at_.clear();
  gradients_held_.clear();
  gathered_.clear();
  prefetched_.clear();
}

void Engine::prepare(const Program& program, const CostModel& costs, const EngineOptions& options) {
  program_ = &program;
  layerwise_pairs_ = program.layerwise_pairs;
  units_per_microbatch_ = program.units_per_microbatch;
  prepare_common(program.num_devices, program.num_microbatches, program.stage_device, program.num_pipelines, costs,
                 options);
  const int stages = program.num_stages();
  const int p = program.num_devices;

  const std::size_t slots = index(stages) * index(m_);
  forward_input_.assign(slots, kUnknown);
  backward_input_.assign(slots, kUnknown);
  done_.assign(slots, 0);
  for (int s = 0; s < stages; ++s) {
    const auto first_slot = static_cast<std::ptrdiff_t>(index(s) * index(m_));
    // A pipeline's first stage reads the batch; its last stage owns the loss.
    if (stages_[index(s)].first) std::fill_n(forward_input_.begin() + first_slot, index(m_), 0.0);
    if (stages_[index(s)].last) std::fill_n(backward_input_.begin() + first_slot, index(m_), 0.0);
  }
  const bool paired = options.comm == CommMode::kPaired;
  forward_posted_.assign(paired ? slots : 0, kUnknown);
  backward_posted_.assign(paired ? slots : 0, kUnknown);
  forward_waiting_.assign(paired ? slots : 0, -1);
  backward_waiting_.assign(paired ? slots : 0, -1);
  waiting_since_.assign(paired ? 2 * slots : 0, 0.0);

  devices_.assign(index(p), DeviceState{});
  const std::size_t timed_stages = options.record_stage_times ? index(stages) : 0;
  first_forward_at_.assign(timed_stages, kNoMark);
  last_gradient_at_.assign(timed_stages, kNoMark);
  for (int d = 0; d < p; ++d) prepare_device(d, costs);
  if (!program.comms.empty()) prepare_comms(program, costs);
  // Nothing to wait at or defer (receives as torch runs them, sends right after their ops): the
  // loop then skips both tests.
  if (std::all_of(gates_.begin(), gates_.end(), [](const auto& gates) { return gates.empty(); })) gates_.clear();
  if (std::all_of(deferred_sends_.begin(), deferred_sends_.end(), [](const auto& sends) { return sends.empty(); })) {
    deferred_sends_.clear();
  }
  events_.reset(index(p));

  timeline_ = Timeline{};
  if (options_.record_timeline) {
    if (options_.timeline_sink == nullptr) {
      timeline_.spans.reserve(program.num_ops());
      timeline_.memory.reserve(2 * program.num_ops() + index(p));
    }
    for (int d = 0; d < p; ++d) record_memory(d, 0.0);
  }
}

// Out of line: a virtual call in prepare_device's loop would slow the common case.
[[gnu::noinline]] static double overlap_cost(const CostModel& costs, const std::vector<Action>& list, std::size_t i) {
  return i + 1 < list.size() ? costs.overlap_time(list[i].stage, list[i + 1].op, list[i + 1].stage) : 0.0;
}

void Engine::prepare_device(int device, const CostModel& costs) {
  const auto& list = program_->actions[index(device)];
  DeviceState& state = devices_[index(device)];
  DeviceFigures& figures = figures_[index(device)];
  state.actions = list.data();
  state.size = list.size();

  // Warmup: ops before the first backward; cooldown: ops after the last forward. Busy time does
  // not depend on timing, so it is summed here in one pass, off the event loop: `busy_before_*`
  // are the busy time before the first backward and up to and including the last forward.
  std::size_t first_backward = list.size();
  std::size_t cooldown_first = 0;
  double busy = 0;
  double busy_before_first_backward = 0;
  double busy_through_last_forward = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Action& action = list[i];
    if (is_backward_input(action.op) && first_backward == list.size()) {
      first_backward = i;
      busy_before_first_backward = busy;
    }
    if (!action.fused_with_next && (i == 0 || !list[i - 1].fused_with_next)) [[likely]] {
      busy += stages_[index(action.stage)].time[op_index(action.op)];
    } else if (action.fused_with_next) {  // the pair costs its own time, charged to its forward
      busy += overlap_cost(costs, list, i);
    }
    if (action.op == Op::kForward) {
      cooldown_first = i + 1;
      busy_through_last_forward = busy;
    }
  }
  // Each stage's first F and last B or W, when asked for, in a loop of its own so the one above
  // stays tight. Raw pointers: the compiler cannot tell that push_back leaves the members' buffers.
  std::vector<int> stages_here;  // this device's stages, by their first forward
  std::size_t* const first_forward = first_forward_at_.data();
  std::size_t* const last_gradient = last_gradient_at_.data();
  const Action* const actions = list.data();
  for (std::size_t i = 0, n = options_.record_stage_times ? list.size() : 0; i < n; ++i) {
    const auto stage = static_cast<std::size_t>(actions[i].stage);
    const Op op = actions[i].op;
    if (op == Op::kForward) {
      if (first_forward[stage] == kNoMark) [[unlikely]] {
        first_forward[stage] = i;
        stages_here.push_back(actions[i].stage);
      }
    } else if (op != Op::kBackwardInput) {
      last_gradient[stage] = i;
    }
  }
  if (first_backward == list.size()) busy_before_first_backward = busy;
  const std::size_t cooldown_start = std::max(cooldown_first, first_backward);
  const double busy_before_cooldown =
      cooldown_first >= first_backward ? busy_through_last_forward : busy_before_first_backward;
  const std::array<std::size_t, 4> bounds{0, first_backward, cooldown_start, list.size()};
  const std::array<double, 3> phase_busy{busy_before_first_backward, busy_before_cooldown - busy_before_first_backward,
                                         busy - busy_before_cooldown};
  figures.busy = busy;
  for (std::size_t k = 0; k < 3; ++k) {
    PhaseFigures& phase = figures.phases[k];
    phase.busy = phase_busy[k];
    phase.ops = static_cast<std::int64_t>(bounds[k + 1] - bounds[k]);
    const bool empty = bounds[k] == bounds[k + 1];
    state.phase_first[k] = empty ? list.size() + 1 : bounds[k];
    state.phase_last[k] = empty ? list.size() + 1 : bounds[k + 1] - 1;
  }
  figures.ops = static_cast<std::int64_t>(list.size());

  // The positions whose start or end the summary needs, sorted and unique.
  if (list.empty()) return;
  std::vector<std::size_t>& marks = state.marks;
  marks = {0,
           list.size() - 1,
           state.phase_first[0],
           state.phase_last[0],
           state.phase_first[1],
           state.phase_last[1],
           state.phase_first[2],
           state.phase_last[2]};
  for (const int stage : stages_here) {
    marks.push_back(first_forward_at_[index(stage)]);
    if (last_gradient_at_[index(stage)] != kNoMark) marks.push_back(last_gradient_at_[index(stage)]);
  }
  std::sort(marks.begin(), marks.end());
  marks.erase(std::unique(marks.begin(), marks.end()), marks.end());
  marks.push_back(kNoMark);
  state.next_mark = 0;
  state.next_mark_pc = marks[0];
}

void Engine::note_marks(int device, std::size_t position, double start, double end) {
  DeviceState& state = devices_[index(device)];
  DeviceFigures& figures = figures_[index(device)];
  if (position == 0) figures.start = start;
  if (position + 1 == state.size) figures.end = end;
  for (std::size_t k = 0; k < 3; ++k) {
    if (state.phase_first[k] == position) figures.phases[k].start = start;
    if (state.phase_last[k] == position) figures.phases[k].end = end;
  }
  if (options_.record_stage_times && position < state.size) {
    const auto stage = index(state.actions[position].stage);
    StageFigures& times = stage_figures_[stage];
    if (first_forward_at_[stage] == position) times.first_forward = start;
    if (last_gradient_at_[stage] == position) {
      times.gradient_start = start;
      times.gradient_end = end;
    }
  }
  state.next_mark_pc = state.marks[++state.next_mark];
}

void Engine::prepare_comms(const Program& program, const CostModel& costs) {
  const std::size_t p = index(program.num_devices);
  gates_.assign(p, {});
  deferred_sends_.assign(p, {});
  std::vector<ShardingCosts> sharding(index(program.num_stages()));
  bool sharded = false;
  for (std::size_t s = 0; s < sharding.size(); ++s) {
    sharding[s] = costs.sharding(static_cast<int>(s));
    sharded = sharded || sharding[s].any();
  }
  if (sharded) {
    sharding_ = std::move(sharding);
    unsharded_at_.assign(sharding_.size(), 0.0);
    gradients_held_.assign(sharding_.size(), 0);
    gathered_.assign(sharding_.size(), 0);
    prefetched_.assign(sharding_.size(), 0);
  }
  // Where each (stage, micro-batch)'s F and B or I stands in its device's list: a SEND right after
  // its op sends as the op ends, which the engine does anyway; only a later one defers the message.
  std::vector<std::size_t> forward_at(done_.size(), kNoMark);
  std::vector<std::size_t> backward_at(done_.size(), kNoMark);
  for (std::size_t d = 0; d < p; ++d) {
    const auto& list = program.actions[d];
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (list[i].op == Op::kForward) forward_at[slot(list[i])] = i;
      if (is_backward_input(list[i].op)) backward_at[slot(list[i])] = i;
    }
  }
  for (std::size_t d = 0; d < p && d < program.comms.size(); ++d) {
    for (const CommAction& c : program.comms[d]) {
      const bool forward = c.op == CommOp::kSendF || c.op == CommOp::kRecvF;
      const std::size_t k = slot(Action{c.stage, Op::kForward, c.microbatch});
      if (is_recv(c.op)) {
        if (!options_.wait_at_receives) continue;
        gates_[d].push_back(Gate{c.before, forward ? &forward_input_[k] : &backward_input_[k], c});
      } else if (is_send(c.op)) {
        const std::size_t made = (forward ? forward_at : backward_at)[k];
        if (made + 1 == c.before) continue;
        done_[k] |= forward ? kForwardSendDeferred : kBackwardSendDeferred;
        const Action producer = program.actions[d][made];
        deferred_sends_[d].push_back(DeferredSend{c.before, producer});
      } else if (!sharding_.empty() && sharding_[index(c.stage)].any()) {
        gates_[d].push_back(Gate{c.before, nullptr, c});
      }
      // UNSHARD, RESHARD and REDUCE_GRAD of a stage that is not sharded cost nothing, as in torch.
    }
    std::stable_sort(deferred_sends_[d].begin(), deferred_sends_[d].end(),
                     [](const DeferredSend& a, const DeferredSend& b) { return a.before < b.before; });
  }
}

bool Engine::pass_gates(int device) {
  DeviceState& state = devices_[index(device)];
  const std::vector<Gate>& gates = gates_[index(device)];
  while (state.next_gate < gates.size() && gates[state.next_gate].before <= state.pc) {
    const Gate& gate = gates[state.next_gate];
    if (gate.arrival == nullptr) {
      run_sharding_action(device, gate.action);
    } else {
      const double arrival = *gate.arrival;
      if (arrival == kUnknown) return false;  // its arrival wakes this device, the receiving stage's
      state.gate_time = std::max(state.gate_time, arrival);
    }
    ++state.next_gate;
  }
  return true;
}

void Engine::run_sharding_action(int device, const CommAction& action) {
  DeviceState& state = devices_[index(device)];
  const std::size_t stage = index(action.stage);
  const ShardingCosts& costs = sharding_[stage];
  MemoryTracker& memory = memory_[index(device)];
  // The device reaches the action when its stream is free and past every earlier gate.
  const double reached = std::max(state.free_at, state.gate_time);
  // A step that begins with an all-gather begins there, not at its first op.
  if (action.before == 0) state.first_reached = std::min(state.first_reached, reached);
  double sampled = reached;
  switch (action.op) {
    case CommOp::kUnshard:
      state.collective_free = std::max(reached, state.collective_free) + costs.gather_time;
      unsharded_at_[stage] = state.collective_free;
      prefetched_[stage] = 1;  // per block, only the first unit: the ops gather the rest
      memory.hold(costs.parameter_bytes);  // the all-gather's output is allocated as it is issued
      break;
    case CommOp::kReshard:
      gathered_[stage] = 0;
      memory.release(costs.parameter_bytes);
      break;
    case CommOp::kReduceGrad:
      state.collective_free = std::max(reached, state.collective_free) + costs.reduce_time;
      state.gate_time = state.collective_free;
      sampled = state.collective_free;
      if (gradients_held_[stage] != 0) memory.release(costs.gradient_bytes);
      gradients_held_[stage] = 0;
      break;
    default:
      return;
  }
  if (options_.record_timeline) record_memory(device, sampled);
}

double Engine::parameters_ready(const Action& action, const Action* partner) const {
  const double ready = unsharded_at_[index(action.stage)];
  return partner == nullptr ? ready : std::max(ready, unsharded_at_[index(partner->stage)]);
}

double Engine::unit_by_unit_extra(const Action& action) {
  const std::size_t stage = index(action.stage);
  const ShardingCosts& costs = sharding_[stage];
  if (!costs.per_block) return 0;
  const std::size_t k = op_index(action.op);
  double extra = 0;
  if (costs.gathers_in(action.op, gathered_[stage])) {
    // A backward's first unit is the forward's last, which FSDP keeps (torchtitan does not reshard
    // the last block after its forward, FSDP prefetches it anyway); a forward's first unit is there
    // only when UNSHARD gathered it.
    const bool cold = action.op == Op::kForward && prefetched_[stage] == 0;
    extra += cold ? costs.cold_forward_extra : costs.gather_extra[k];
    if (action.op == Op::kForward) prefetched_[stage] = 0;
  }
  if (costs.reduces_in(action.op)) extra += costs.reduce_extra[k];
  return extra;
}

void Engine::hold_gradients(int device, const Action& action, const Action* partner) {
  MemoryTracker& memory = memory_[index(device)];
  for (const Action* a : {&action, partner}) {
    if (a == nullptr || a->op == Op::kForward || a->op == Op::kBackwardInput) continue;
    if (gradients_held_[index(a->stage)] != 0) continue;
    gradients_held_[index(a->stage)] = 1;
    memory.hold(sharding_[index(a->stage)].gradient_bytes);
  }
  memory.note_held_peak();  // a forward's stash counts beside what is held
}

void Engine::pass_trailing_gates(int device) {
  pass_gates(device);  // only FSDP actions can stand after the last op: a RECV comes before its use
  DeviceFigures& figures = figures_[index(device)];
  figures.end = std::max(figures.end, devices_[index(device)].gate_time);
}

void Engine::send_deferred(int device, double time, double& released) {
  DeviceState& state = devices_[index(device)];
  const std::vector<DeferredSend>& sends = deferred_sends_[index(device)];
  while (state.next_send < sends.size() && sends[state.next_send].before <= state.pc) {
    const Action& producer = sends[state.next_send++].producer;
    const StageInfo& stage = stages_[index(producer.stage)];
    const bool forward = producer.op == Op::kForward;
    const StageOutput& output = forward ? stage.forward : stage.backward;
    const std::size_t k = slot(producer);
    const Transmission sent = transmit(output, producer, time, time);  // every SEND crosses devices (validated)
    released = std::max(released, sent.left);
    (forward ? forward_input_[k + index(m_)] : backward_input_[k - index(m_)]) = sent.arrival;
    try_start(output.consumer);
  }
}

double Engine::ready_time(const Action& action) const {
  const std::size_t k = slot(action);
  // Dependencies on the same device (F before B/I, I before W) ended before free_at, so a flag is
  // enough for them; only arrivals from other stages carry a time.
  switch (action.op) {
    case Op::kForward:
      return forward_input_[k];
    case Op::kBackward:
    case Op::kBackwardInput:
      return (done_[k] & kForwardDone) ? backward_input_[k] : kUnknown;
    case Op::kBackwardWeight:
      return (done_[k] & kInputGradDone) ? 0.0 : kUnknown;
  }
  return kUnknown;
}

void Engine::start_if_ready(int device) {
  if (!gates_.empty() && !pass_gates(device)) [[unlikely]] return;  // a RECV whose message is on its way
  DeviceState& state = devices_[index(device)];
  const Action& action = state.actions[state.pc];
  double ready = ready_time(action);
  if (ready == kUnknown) return;  // the op that delivers it wakes this device

  const StageInfo& stage = stages_[index(action.stage)];
  double cost = stage.time[op_index(action.op)];
  std::size_t last = state.pc;
  const Action* partner = nullptr;
  if (action.fused_with_next) [[unlikely]] {
    // An overlapped pair starts when both halves could, and runs as one op.
    partner = &state.actions[state.pc + 1];
    const double partner_ready = ready_time(*partner);
    if (partner_ready == kUnknown) return;
    ready = std::max(ready, partner_ready);
    cost = costs_->overlap_time(action.stage, partner->op, partner->stage);
    last = state.pc + 1;
  }
  // An overlapped pair draws once, with its backward's variation.
  if (options_.noise != nullptr) [[unlikely]] cost = noisy_op_time(device, state.pc, partner ? partner->op : action.op, cost);
  double start = std::max(std::max(state.free_at, ready), state.gate_time);
  if (!sharding_.empty()) [[unlikely]] {
    start = std::max(start, parameters_ready(action, partner));
    cost += unit_by_unit_extra(action) + (partner != nullptr ? unit_by_unit_extra(*partner) : 0.0);
  }
  const double end = start + cost;
  while (state.next_mark_pc <= last) note_marks(device, state.next_mark_pc, start, end);
  // A layer-by-layer pair adds its forward's stash once its backward's is freed (finish_op).
  if (action.op == Op::kForward && !(partner != nullptr && layerwise_pairs_)) {
    memory_[index(device)].on_forward(stage.activation_bytes);
  }
  if (!sharding_.empty()) [[unlikely]] hold_gradients(device, action, partner);
  if (options_.record_timeline && (action.op == Op::kForward || !sharding_.empty())) record_memory(device, start);
  if (options_.record_timeline) record_span(device, action, partner, start, end);
  state.running = true;
  events_.push(end, static_cast<std::uint32_t>(device));
}

double Engine::noisy_op_time(int device, std::size_t position, Op op, double cost) {
  const NoiseModel& noise = *options_.noise;
  const NoiseDraw& draw = op_draws_[op_index(op)];
  if (!draw.any()) return cost;
  SplitMix64 stream = noise_stream(noise.seed, noise.sample, static_cast<std::uint64_t>(device), position, 0);
  const double noisy = cost * draw(stream);
  // Busy time was summed from the plain costs before the run: move it, and its phase's, by the draw.
  DeviceFigures& figures = figures_[index(device)];
  const DeviceState& state = devices_[index(device)];
  figures.busy += noisy - cost;
  for (std::size_t k = 0; k < 3; ++k) {
    if (state.phase_first[k] <= position && position <= state.phase_last[k]) figures.phases[k].busy += noisy - cost;
  }
  return noisy;
}

double Engine::noise_factor_of_message(const Action& from) const {
  const NoiseModel& noise = *options_.noise;
  // Keyed by the message's producer (stage, op, micro-batch), which sends it once.
  SplitMix64 stream = noise_stream(noise.seed, noise.sample, static_cast<std::uint64_t>(from.stage) | (1ULL << 62),
                                   static_cast<std::uint64_t>(from.microbatch), static_cast<std::uint64_t>(from.op));
  return link_draw_(stream);
}

double Engine::drawn_cost(int device, std::size_t position, Op op, double cost) const {
  const NoiseDraw& draw = op_draws_[op_index(op)];
  if (!draw.any()) return cost;
  SplitMix64 stream =
      noise_stream(options_.noise->seed, options_.noise->sample, static_cast<std::uint64_t>(device), position, 0);
  return cost * draw(stream);
}

void Engine::record_span(int device, const Action& action, const Action* partner, double start, double end) {
  const Span span{device, action, start, end, partner != nullptr ? *partner : Action{}};
  if (options_.timeline_sink != nullptr) {
    options_.timeline_sink->on_span(span);
  } else {
    timeline_.spans.push_back(span);
  }
  if (record_exchanges_) record_exchanges(span, partner);
}

// The cost model places the op's all-to-alls in its modelled time; a noisy op stretches them with it.
void Engine::record_exchanges(const Span& span, const Action* partner) {
  exchange_buffer_.clear();
  costs_->exchanges(span.action, partner, exchange_buffer_);
  const double length = span.end - span.start;
  for (const Exchange& exchange : exchange_buffer_) {
    Action half = exchange.of_partner && partner != nullptr ? *partner : span.action;
    half.fused_with_next = false;
    const ExchangeSpan record{span.device,
                              half,
                              exchange.kind,
                              exchange.recomputed,
                              span.start + exchange.from * length,
                              span.start + exchange.to * length};
    if (options_.timeline_sink != nullptr) {
      options_.timeline_sink->on_exchange(record);
    } else {
      timeline_.exchanges.push_back(record);
    }
  }
}

void Engine::record_memory(int device, double time) {
  const MemoryTracker& memory = memory_[index(device)];
  const MemorySample sample{device, time, memory.memory_bytes(), memory.stashed() / units_per_microbatch_};
  if (options_.timeline_sink != nullptr) return options_.timeline_sink->on_memory(sample);
  timeline_.memory.push_back(sample);
}

void Engine::record_message(const Link& link, const Action& from, double enqueued, double start, double end,
                            double arrival, std::int64_t bytes) {
  const MessageSpan message{link.src, link.dst, from, enqueued, start, end, arrival, bytes};
  if (options_.timeline_sink != nullptr) return options_.timeline_sink->on_message(message);
  timeline_.messages.push_back(message);
}

inline Engine::Transmission Engine::transmit(const StageOutput& output, const Action& from, double time,
                                             double enqueued) {
  Link& target = links_[index(output.link)];
  const Sent sent = send_message(target, output, from, time);
  if (options_.record_timeline) {
    record_message(target, from, enqueued, sent.departure.start, sent.departure.end, sent.arrival, output.bytes);
  }
  return {sent.departure.end, sent.arrival};
}

inline int Engine::complete(const Action& action, double time, int device, double& released, int& deferred) {
  const StageInfo& stage = stages_[index(action.stage)];
  const std::size_t k = slot(action);
  MemoryTracker& memory = memory_[index(device)];

  // Where the output goes: the next stage's forward input, or the previous stage's gradient input.
  const StageOutput* output = nullptr;
  double* consumer_slot = nullptr;
  switch (action.op) {
    case Op::kForward:
      done_[k] |= kForwardDone;
      if (!stage.last) {
        output = &stage.forward;
        consumer_slot = &forward_input_[k + index(m_)];
      }
      break;
    case Op::kBackward:
    case Op::kBackwardInput:
      memory.on_backward_end(action.op, stage.activation_bytes, stage.weight_bytes);
      if (action.op == Op::kBackwardInput) done_[k] |= kInputGradDone;
      if (!stage.first) {
        output = &stage.backward;
        consumer_slot = &backward_input_[k - index(m_)];
      }
      break;
    case Op::kBackwardWeight:
      memory.on_backward_end(action.op, stage.activation_bytes, stage.weight_bytes);
      break;
  }
  const int link = output != nullptr ? output->link : -1;
  const int consumer = output != nullptr ? output->consumer : -1;
  if (options_.record_timeline && action.op != Op::kForward) record_memory(device, time);
  // A lowered program's SEND further on sends this message (send_deferred).
  if (!deferred_sends_.empty() &&
      (done_[k] & (action.op == Op::kForward ? kForwardSendDeferred : kBackwardSendDeferred))) [[unlikely]] {
    return -1;
  }

  double arrival = time;
  if (link >= 0 && options_.comm == CommMode::kPaired) [[unlikely]] {
    const bool forward = action.op == Op::kForward;
    const std::size_t to = forward ? k + index(m_) : k - index(m_);
    if ((forward ? forward_posted_ : backward_posted_)[to] == kUnknown) {
      // The receiver has not reached the op that consumes this yet: the send waits for it.
      // The sender and its op, for the message record: device * 4 + op.
      (forward ? forward_waiting_ : backward_waiting_)[to] = device * 4 + static_cast<std::int32_t>(op_index(action.op));
      waiting_since_[forward ? to : forward_posted_.size() + to] = time;
      ++deferred;
      return -1;
    }
  }
  if (link >= 0) {
    const Transmission sent = transmit(*output, action, time, time);
    arrival = sent.arrival;
    // Blocking holds the stream until the message has left; paired until it has arrived.
    released = std::max(released, options_.comm == CommMode::kPaired ? arrival : sent.left);
  }
  if (consumer_slot != nullptr) *consumer_slot = arrival;
  return consumer;
}

inline void Engine::finish_op(double time, int device) {
  DeviceState& state = devices_[index(device)];
  const Action& action = state.actions[state.pc];
  double released = time;  // when the stream is free again in blocking and paired modes
  int deferred = 0;
  const int consumer = complete(action, time, device, released, deferred);
  int partner_consumer = -1;
  std::size_t advance = 1;
  if (action.fused_with_next) [[unlikely]] {
    partner_consumer = complete(state.actions[state.pc + 1], time, device, released, deferred);
    advance = 2;
    if (layerwise_pairs_ && action.op == Op::kForward) {
      memory_[index(device)].on_forward(stages_[index(action.stage)].activation_bytes);
      if (options_.record_timeline) record_memory(device, time);
    }
  }
  state.pc += advance;
  state.running = false;
  if (!deferred_sends_.empty()) [[unlikely]] send_deferred(device, time, released);
  state.free_at = options_.comm == CommMode::kOverlap ? time : released;
  if (!gates_.empty() && state.pc == state.size) [[unlikely]] pass_trailing_gates(device);
  if (options_.comm == CommMode::kPaired) [[unlikely]] {
    state.held = deferred;
    state.running = deferred > 0;  // held in its send until the receivers post
    if (state.pc < state.size) post_receives(device, time);
  }
  if (consumer >= 0 && consumer != device) try_start(consumer);
  if (partner_consumer >= 0 && partner_consumer != device) try_start(partner_consumer);
  try_start(device);
}

void Engine::launch_waiting(std::vector<double>& posted, std::vector<std::int32_t>& waiting, std::size_t k,
                            double time, bool forward) {
  if (posted[k] != kUnknown) return;  // posted before, by a look-ahead
  posted[k] = time;
  if (waiting[k] < 0) return;
  const int sender = waiting[k] / 4;
  const auto sender_op = static_cast<Op>(waiting[k] % 4);
  waiting[k] = -1;
  // The producer of this input: F of the stage before, or the backward of the stage after.
  const std::size_t from = forward ? k - index(m_) : k + index(m_);
  const StageInfo& stage = stages_[from / index(m_)];
  const StageOutput& output = forward ? stage.forward : stage.backward;
  const Action producer{static_cast<int>(from / index(m_)), sender_op, static_cast<int>(from % index(m_))};
  const double arrival = transmit(output, producer, time, waiting_since_[forward ? k : posted.size() + k]).arrival;
  (forward ? forward_input_ : backward_input_)[k] = arrival;
  DeviceState& held = devices_[index(sender)];
  held.free_at = std::max(held.free_at, arrival);
  if (--held.held == 0) {
    held.running = false;
    try_start(sender);
  }
}

void Engine::post_receives(int device, double time) {
  const DeviceState& state = devices_[index(device)];
  auto post = [&](std::size_t i) {
    const Action& action = state.actions[i];
    const std::size_t k = slot(action);
    const StageInfo& stage = stages_[index(action.stage)];
    if (action.op == Op::kForward) {
      if (!stage.first) launch_waiting(forward_posted_, forward_waiting_, k, time, true);
    } else if (action.op != Op::kBackwardWeight) {
      if (!stage.last) launch_waiting(backward_posted_, backward_waiting_, k, time, false);
    }
  };
  std::size_t last = state.pc;
  post(last);
  if (state.actions[last].fused_with_next) post(++last);
  if (program_->num_stages() > program_->num_devices) {
    // Interleaved: Megatron's combined send_forward_backward_recv_forward_backward (schedules.py,
    // forward_backward_pipelining_with_interleaving without overlap_p2p_comm) posts the receives of
    // the next forward and the next backward together: look ahead to the next op of the other kind.
    const bool forward = state.actions[state.pc].op == Op::kForward;
    std::size_t other = last + 1;
    while (other < state.size && (state.actions[other].op == Op::kForward) == forward) ++other;
    if (other < state.size) post(other);
  }
}

bool Engine::uses_sweep(const EngineOptions& options) const {
  const bool possible = !options.record_timeline;
  if ((options.algorithm == EngineAlgorithm::kSweep || options.record_critical_path) && !possible) {
    throw std::invalid_argument("Engine::run: the in-order sweep records no timeline");
  }
  if (options.record_critical_path && options.comm == CommMode::kPaired) {
    throw std::invalid_argument("Engine::run: the sweep finds no critical path with paired sends");
  }
  if (options.record_critical_path && options.algorithm == EngineAlgorithm::kEventQueue) {
    throw std::invalid_argument("Engine::run: the critical path is found by the in-order sweep");
  }
  return possible && options.algorithm != EngineAlgorithm::kEventQueue;
}

SimulationOutcome Engine::run(const Program& program, const CostModel& costs, const EngineOptions& options) {
  if (program.num_devices < 1 || program.actions.size() != index(program.num_devices) || program.stage_device.empty() ||
      program.num_microbatches < 1) {
    throw std::invalid_argument("Engine::run: the program's shape is invalid; run validate_program first");
  }
  for (const auto& list : program.actions) {
    // An overlapped pair needs its second half (validate_program refuses the rest).
    if (!list.empty() && list.back().fused_with_next) {
      throw std::invalid_argument("Engine::run: a list ends in an overlapped pair's first half; run validate_program first");
    }
  }
  // A lowered program's receives and sends are ordering points only the event queue keeps.
  if (options.record_critical_path && !program.comms.empty()) {
    throw std::invalid_argument("Engine::run: a lowered program runs on the event queue, which finds no critical path");
  }
  if (uses_sweep(options) && program.comms.empty()) {
    SimulationOutcome outcome = run_sweep(program, costs, options);
    // A paired program that cannot finish: the event queue, whose report names the sends held.
    if (!(outcome.deadlock && options.comm == CommMode::kPaired)) return outcome;
  }
  prepare(program, costs, options);
  if (options.comm == CommMode::kPaired) {
    for (int d = 0; d < program.num_devices; ++d) {
      if (devices_[index(d)].size > 0) post_receives(d, 0.0);
    }
  }
  for (int d = 0; d < program.num_devices; ++d) try_start(d);
  while (!events_.empty()) {
    const auto event = events_.pop();
    finish_op(event.time, static_cast<int>(event.payload()));
  }
  SimulationOutcome outcome;
  for (int d = 0; d < program.num_devices; ++d) {
    if (devices_[index(d)].pc < program.actions[index(d)].size()) {
      outcome.deadlock = describe_deadlock();
      return outcome;
    }
  }
  outcome.result = summarize();
  return outcome;
}

Result Engine::summarize() {
  if (!sharding_.empty()) {
    for (std::size_t d = 0; d < figures_.size(); ++d) {
      figures_[d].start = std::min(figures_[d].start, devices_[d].first_reached);
    }
  }
  Result result;
  result.p = static_cast<int>(figures_.size());
  result.m = m_;
  result.stages = static_cast<int>(stages_.size());

  double first_start = kUnknown;
  double last_end = 0;
  for (const DeviceFigures& figures : figures_) {
    if (figures.ops == 0) continue;
    first_start = std::min(first_start, figures.start);
    last_end = std::max(last_end, figures.end);
    result.total_busy += figures.busy;
    result.compute_ops += figures.ops;
  }
  result.makespan = first_start == kUnknown ? 0.0 : last_end - first_start;
  const double capacity = result.p * result.makespan;
  // Busy time is summed per device before the run and the makespan during it, in different orders,
  // so a pipeline without bubble can come out a rounding error below zero; idle time never is.
  const double idle = std::max(0.0, capacity - result.total_busy);
  result.bubble_ratio = capacity > 0 ? idle / capacity : 0.0;
  result.bubble_overhead = result.total_busy > 0 ? idle / result.total_busy : 0.0;

  result.per_device = figures_;
  if (options_.record_stage_times) result.per_stage = stage_figures_;
  for (std::size_t d = 0; d < result.per_device.size(); ++d) {
    DeviceFigures& figures = result.per_device[d];
    figures.idle = std::max(0.0, result.makespan - figures.busy);
    figures.bubble_ratio = result.makespan > 0 ? figures.idle / result.makespan : 0.0;
    // Seq1F1B's slices each stash 1/k of a micro-batch: the figure stays in micro-batches.
    figures.peak_stashed = memory_[d].peak_stashed() / units_per_microbatch_;
    figures.peak_activation_bytes = memory_[d].peak_activation_bytes();
    figures.peak_memory_bytes = memory_[d].static_bytes() + memory_[d].peak_transient_bytes();
  }

  double link_busy = 0;
  result.per_link.reserve(links_.size());
  for (const Link& link : links_) {
    result.per_link.push_back({link.src, link.dst, link.messages, link.bytes, link.busy});
    link_busy += link.busy;
    result.messages += link.messages;
  }
  result.comm_ratio = result.total_busy > 0 ? link_busy / result.total_busy : 0.0;
  if (options_.record_timeline && options_.timeline_sink == nullptr) result.timeline = std::move(timeline_);
  return result;
}

Deadlock Engine::describe_deadlock() const {
  const Program& program = *program_;
  Deadlock deadlock;
  for (int d = 0; d < program.num_devices; ++d) {
    const DeviceState& state = devices_[index(d)];
    const auto& list = program.actions[index(d)];
    if (state.held > 0) {
      // Paired communication: held in a send whose receiver has not reached the op that takes it.
      std::string waits;
      for (std::size_t k = 0; k < forward_waiting_.size(); ++k) {
        for (const bool forward : {true, false}) {
          const std::int32_t sender = (forward ? forward_waiting_ : backward_waiting_)[k];
          if (sender < 0 || sender / 4 != d) continue;
          const int stage = static_cast<int>(k / index(m_));
          const int microbatch = static_cast<int>(k % index(m_));
          const std::string what = forward ? to_string({stage, Op::kForward, microbatch}) + "'s input"
                                           : "the gradient from stage " + std::to_string(stage + 1) + " to stage " +
                                                 std::to_string(stage) + ", micro-batch " + std::to_string(microbatch);
          waits += (waits.empty() ? "" : " and ") + std::string("device ") +
                   std::to_string(program.stage_device[index(stage)]) + " to post the receive of " + what +
                   " (paired sends block)";
        }
      }
      // The op whose send holds the device: the one before pc, or the pair before it.
      std::size_t step = state.pc - 1;
      if (step > 0 && list[step - 1].fused_with_next) --step;
      deadlock.devices.push_back({d, step, list[step], std::move(waits)});
      continue;
    }
    if (state.pc >= list.size()) continue;
    if (!gates_.empty()) {
      const std::vector<Gate>& gates = gates_[index(d)];
      if (state.next_gate < gates.size() && gates[state.next_gate].before <= state.pc) {
        deadlock.devices.push_back({d, state.pc, list[state.pc],
                                    "the message of " + to_string(gates[state.next_gate].action) +
                                        " (a receive blocks until its message arrives)"});
        continue;
      }
    }
    std::size_t step = state.pc;
    // Of an overlapped pair, name the half that is still waiting.
    if (list[step].fused_with_next && step + 1 < list.size() && ready_time(list[step]) != kUnknown) ++step;
    const Action& next = list[step];
    deadlock.devices.push_back(describe_wait(d, step, next, (done_[slot(next)] & kForwardDone) != 0));
  }
  return deadlock;
}

StuckDevice Engine::describe_wait(int device, std::size_t step, const Action& next, bool forward_done) const {
  auto from = [&](const Action& producer) {
    const int producer_device = stages_[index(producer.stage)].device;
    return producer_device == device ? std::string(" on this device")
                                     : " from device " + std::to_string(producer_device);
  };
  std::string waits;
  switch (next.op) {
    case Op::kForward: {
      const Action producer{next.stage - 1, Op::kForward, next.microbatch};
      waits = stages_[index(next.stage)].first ? std::string("nothing (a bug)") : to_string(producer) + from(producer);
      break;
    }
    case Op::kBackward:
    case Op::kBackwardInput:
      if (!forward_done) {
        waits = "its forward " + to_string({next.stage, Op::kForward, next.microbatch});
      } else {
        const Action producer{next.stage + 1, Op::kBackward, next.microbatch};
        waits = "the gradient of " + to_string(producer) + " or " +
                to_string({next.stage + 1, Op::kBackwardInput, next.microbatch}) + from(producer);
      }
      break;
    case Op::kBackwardWeight:
      waits = "its input-gradient backward " + to_string({next.stage, Op::kBackwardInput, next.microbatch});
      break;
  }
  return StuckDevice{device, step, next, std::move(waits)};
}

}  // namespace ppsim
