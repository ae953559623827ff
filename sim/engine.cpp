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

Phase phase_at(std::size_t pc, std::size_t first_backward, std::size_t last_forward) {
  if (pc < first_backward) return Phase::kWarmup;
  if (pc > last_forward) return Phase::kCooldown;
  return Phase::kSteady;
}

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

void Engine::prepare(const Program& program, const CostModel& costs, const EngineOptions& options) {
  if (program.num_devices < 1 || program.actions.size() != index(program.num_devices) ||
      program.stage_device.empty() || program.num_microbatches < 1) {
    throw std::invalid_argument("Engine::run: the program's shape is invalid; run validate_program first");
  }
  program_ = &program;
  options_ = options;
  m_ = program.num_microbatches;
  const int stages = program.num_stages();
  const int p = program.num_devices;

  // Links exist between the devices of adjacent stages, in both directions.
  std::vector<std::pair<int, int>> pairs;
  for (int s = 0; s + 1 < stages; ++s) {
    const int a = program.stage_device[index(s)];
    const int b = program.stage_device[index(s + 1)];
    if (a != b) {
      pairs.emplace_back(a, b);
      pairs.emplace_back(b, a);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  links_.assign(pairs.size(), Link{});
  std::vector<double> bandwidth(pairs.size());
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

  stages_.assign(index(stages), StageInfo{});
  for (int s = 0; s < stages; ++s) {
    StageInfo& info = stages_[index(s)];
    for (Op op : {Op::kForward, Op::kBackward, Op::kBackwardInput, Op::kBackwardWeight}) {
      info.time[op_index(op)] = costs.compute_time(op, s);
    }
    info.activation_bytes = costs.activation_bytes(s);
    info.weight_bytes = costs.weight_stash_bytes(s);
    info.device = program.stage_device[index(s)];
    if (s + 1 < stages && program.stage_device[index(s + 1)] != info.device) {
      info.forward_link = link_index(info.device, program.stage_device[index(s + 1)]);
      info.forward_bytes = costs.message_bytes(s, s + 1);
      info.forward_send_time = transfer_time(info.forward_bytes, bandwidth[index(info.forward_link)]);
    }
    if (s > 0 && program.stage_device[index(s - 1)] != info.device) {
      info.backward_link = link_index(info.device, program.stage_device[index(s - 1)]);
      info.backward_bytes = costs.message_bytes(s, s - 1);
      info.backward_send_time = transfer_time(info.backward_bytes, bandwidth[index(info.backward_link)]);
    }
  }

  devices_.assign(index(p), DeviceState{});
  figures_.assign(index(p), DeviceFigures{});
  memory_.resize(index(p));
  for (int d = 0; d < p; ++d) {
    const auto& list = program.actions[index(d)];
    DeviceState& state = devices_[index(d)];
    state.first_backward = list.size();
    state.last_forward = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (is_backward_input(list[i].op) && state.first_backward == list.size()) state.first_backward = i;
      if (list[i].op == Op::kForward) state.last_forward = i;
    }
    memory_[index(d)].reset(costs.static_bytes(d), costs.weight_stash_fraction());
    figures_[index(d)].static_bytes = costs.static_bytes(d);
  }

  const std::size_t slots = index(stages) * index(m_);
  forward_input_.assign(slots, kUnknown);
  backward_input_.assign(slots, kUnknown);
  forward_done_.assign(slots, kUnknown);
  input_grad_done_.assign(slots, kUnknown);
  std::fill_n(forward_input_.begin(), index(m_), 0.0);                  // stage 0 reads the batch
  std::fill_n(backward_input_.end() - m_, index(m_), 0.0);              // the last stage owns the loss
  events_.reset(index(p));

  timeline_ = Timeline{};
  if (options_.record_timeline) {
    timeline_.spans.reserve(program.num_ops());
    timeline_.memory.reserve(2 * program.num_ops() + index(p));
    for (int d = 0; d < p; ++d) timeline_.memory.push_back({d, 0.0, memory_[index(d)].memory_bytes(), 0.0});
  }
}

double Engine::ready_time(const Action& action) const {
  const std::size_t k = slot(action);
  switch (action.op) {
    case Op::kForward: return forward_input_[k];
    case Op::kBackward:
    case Op::kBackwardInput: return std::max(backward_input_[k], forward_done_[k]);
    case Op::kBackwardWeight: return input_grad_done_[k];
  }
  return kUnknown;
}

void Engine::try_start(int device) {
  DeviceState& state = devices_[index(device)];
  const auto& list = program_->actions[index(device)];
  if (state.running || state.pc >= list.size()) return;
  const Action& action = list[state.pc];
  const double ready = ready_time(action);
  if (ready == kUnknown) return;  // a later finish wakes this device

  const StageInfo& stage = stages_[index(action.stage)];
  const double cost = stage.time[op_index(action.op)];
  const double start = std::max(state.free_at, ready);
  const double end = start + cost;

  DeviceFigures& figures = figures_[index(device)];
  if (figures.ops++ == 0) figures.start = start;
  figures.end = end;
  figures.busy += cost;
  PhaseFigures& phase =
      figures.phases[static_cast<std::size_t>(phase_at(state.pc, state.first_backward, state.last_forward))];
  if (phase.ops++ == 0) phase.start = start;
  phase.end = end;
  phase.busy += cost;

  if (action.op == Op::kForward) {
    MemoryTracker& memory = memory_[index(device)];
    memory.on_forward(stage.activation_bytes);
    if (options_.record_timeline) timeline_.memory.push_back({device, start, memory.memory_bytes(), memory.stashed()});
  }
  if (options_.record_timeline) timeline_.spans.push_back({device, action, start, end});

  state.running = true;
  events_.push(end, device);
}

double Engine::send(int link, double time, std::int64_t bytes, double send_time, const Action& from) {
  Link& target = links_[index(link)];
  const Link::Departure departure = target.send(time, bytes, send_time);
  const double arrival = departure.end + target.latency;
  if (options_.record_timeline) {
    timeline_.messages.push_back(
        {target.src, target.dst, from, time, departure.start, departure.end, arrival, bytes});
  }
  return departure.end;
}

void Engine::finish_op(double time, int device) {
  DeviceState& state = devices_[index(device)];
  const Action action = program_->actions[index(device)][state.pc];
  const StageInfo& stage = stages_[index(action.stage)];
  const std::size_t k = slot(action);
  MemoryTracker& memory = memory_[index(device)];

  // The output goes to the next stage (forward) or the previous one (backward), if any.
  int consumer_device = -1;
  double* consumer_slot = nullptr;
  double departed = time;  // when this device's stream is released in blocking mode
  double arrival = time;
  auto deliver = [&](int consumer_stage, std::size_t consumer_k, std::vector<double>& slots, int link,
                     std::int64_t bytes, double send_time) {
    consumer_device = stages_[index(consumer_stage)].device;
    consumer_slot = &slots[consumer_k];
    if (link >= 0) {
      departed = send(link, time, bytes, send_time, action);
      arrival = departed + links_[index(link)].latency;
    }
  };

  switch (action.op) {
    case Op::kForward:
      forward_done_[k] = time;
      if (action.stage + 1 < static_cast<int>(stages_.size())) {
        deliver(action.stage + 1, k + index(m_), forward_input_, stage.forward_link, stage.forward_bytes,
                stage.forward_send_time);
      }
      break;
    case Op::kBackward:
    case Op::kBackwardInput:
      if (action.op == Op::kBackward) {
        memory.on_backward(stage.activation_bytes);
      } else {
        memory.on_input_grad(stage.activation_bytes, stage.weight_bytes);
        input_grad_done_[k] = time;
      }
      if (action.stage > 0) {
        deliver(action.stage - 1, k - index(m_), backward_input_, stage.backward_link, stage.backward_bytes,
                stage.backward_send_time);
      }
      break;
    case Op::kBackwardWeight:
      memory.on_weight_grad(stage.weight_bytes);
      break;
  }
  if (options_.record_timeline && action.op != Op::kForward) {
    timeline_.memory.push_back({device, time, memory.memory_bytes(), memory.stashed()});
  }

  ++state.pc;
  state.running = false;
  state.free_at = options_.comm == CommMode::kBlocking ? departed : time;
  if (consumer_slot != nullptr) {
    *consumer_slot = arrival;
    if (consumer_device != device) try_start(consumer_device);
  }
  try_start(device);
}

SimulationOutcome Engine::run(const Program& program, const CostModel& costs, const EngineOptions& options) {
  prepare(program, costs, options);
  for (int d = 0; d < program.num_devices; ++d) try_start(d);
  while (!events_.empty()) {
    const auto event = events_.pop();
    finish_op(event.time, event.payload);
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
  const Program& program = *program_;
  Result result;
  result.p = program.num_devices;
  result.m = program.num_microbatches;
  result.stages = program.num_stages();

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
  result.bubble_ratio = capacity > 0 ? 1.0 - result.total_busy / capacity : 0.0;
  result.bubble_overhead = result.total_busy > 0 ? (capacity - result.total_busy) / result.total_busy : 0.0;

  result.per_device = figures_;
  for (std::size_t d = 0; d < result.per_device.size(); ++d) {
    DeviceFigures& figures = result.per_device[d];
    figures.idle = result.makespan - figures.busy;
    figures.bubble_ratio = result.makespan > 0 ? figures.idle / result.makespan : 0.0;
    figures.peak_stashed = memory_[d].peak_stashed();
    figures.peak_activation_bytes = memory_[d].peak_activation_bytes();
    figures.peak_memory_bytes = memory_[d].static_bytes() + memory_[d].peak_activation_bytes();
  }

  double link_busy = 0;
  result.per_link.reserve(links_.size());
  for (const Link& link : links_) {
    result.per_link.push_back({link.src, link.dst, link.messages, link.bytes, link.busy});
    link_busy += link.busy;
    result.messages += link.messages;
  }
  result.comm_ratio = result.total_busy > 0 ? link_busy / result.total_busy : 0.0;
  if (options_.record_timeline) result.timeline = std::move(timeline_);
  return result;
}

Deadlock Engine::describe_deadlock() const {
  const Program& program = *program_;
  Deadlock deadlock;
  auto from = [&](const Action& producer, int consumer_device) {
    const int producer_device = program.stage_device[index(producer.stage)];
    return producer_device == consumer_device ? std::string(" on this device")
                                              : " from device " + std::to_string(producer_device);
  };
  for (int d = 0; d < program.num_devices; ++d) {
    const DeviceState& state = devices_[index(d)];
    const auto& list = program.actions[index(d)];
    if (state.pc >= list.size()) continue;
    const Action& next = list[state.pc];
    const std::size_t k = slot(next);
    std::string waits;
    switch (next.op) {
      case Op::kForward: {
        const Action producer{next.stage - 1, Op::kForward, next.microbatch};
        waits = to_string(producer) + from(producer, d);
        break;
      }
      case Op::kBackward:
      case Op::kBackwardInput:
        if (forward_done_[k] == kUnknown) {
          waits = "its forward " + to_string({next.stage, Op::kForward, next.microbatch});
        } else {
          const Action producer{next.stage + 1, Op::kBackward, next.microbatch};
          waits = "the gradient of " + to_string(producer) + " or " +
                  to_string({next.stage + 1, Op::kBackwardInput, next.microbatch}) + from(producer, d);
        }
        break;
      case Op::kBackwardWeight:
        waits = "its input-gradient backward " + to_string({next.stage, Op::kBackwardInput, next.microbatch});
        break;
    }
    deadlock.devices.push_back({d, state.pc, next, std::move(waits)});
  }
  return deadlock;
}

}  // namespace ppsim
