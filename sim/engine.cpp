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

  // What a stage contributes to each of its ops; read from the cost model once per stage.
  struct StageInfo {
    std::array<double, kNumOps> time{};
    int device = 0;
    int forward_link = -1;  // towards stage + 1; -1 when it is on the same device
    int backward_link = -1;  // towards stage - 1
    std::int64_t forward_bytes = 0;
    std::int64_t backward_bytes = 0;
    double forward_send_time = 0;
    double backward_send_time = 0;
  };
  std::vector<StageInfo> info(index(stages));
  stage_activation_bytes_.resize(index(stages));
  stage_weight_bytes_.resize(index(stages));
  for (int s = 0; s < stages; ++s) {
    StageInfo& stage = info[index(s)];
    for (Op op : {Op::kForward, Op::kBackward, Op::kBackwardInput, Op::kBackwardWeight}) {
      stage.time[op_index(op)] = costs.compute_time(op, s);
    }
    stage_activation_bytes_[index(s)] = costs.activation_bytes(s);
    stage_weight_bytes_[index(s)] = costs.weight_stash_bytes(s);
    stage.device = program.stage_device[index(s)];
    if (s + 1 < stages && program.stage_device[index(s + 1)] != stage.device) {
      stage.forward_link = link_index(stage.device, program.stage_device[index(s + 1)]);
      stage.forward_bytes = costs.message_bytes(s, s + 1);
      stage.forward_send_time = transfer_time(stage.forward_bytes, bandwidth[index(stage.forward_link)]);
    }
    if (s > 0 && program.stage_device[index(s - 1)] != stage.device) {
      stage.backward_link = link_index(stage.device, program.stage_device[index(s - 1)]);
      stage.backward_bytes = costs.message_bytes(s, s - 1);
      stage.backward_send_time = transfer_time(stage.backward_bytes, bandwidth[index(stage.backward_link)]);
    }
  }

  slots_per_region_ = index(stages) * index(m_);
  times_.assign(kFirstRegionSlot + 4 * slots_per_region_, kUnknown);
  times_[kReady] = 0.0;
  times_[kScratch] = 0.0;

  plan_.resize(program.num_ops());
  devices_.assign(index(p), DeviceState{});
  figures_.assign(index(p), DeviceFigures{});
  memory_.resize(index(p));
  std::size_t next = 0;
  for (int d = 0; d < p; ++d) {
    const auto& list = program.actions[index(d)];
    DeviceState& state = devices_[index(d)];
    DeviceFigures& figures = figures_[index(d)];
    state.begin = next;
    state.size = list.size();

    // Warmup: ops before the first backward; cooldown: ops after the last forward.
    std::size_t first_backward = list.size();
    std::size_t last_forward = 0;
    bool any_forward = false;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (is_backward_input(list[i].op) && first_backward == list.size()) first_backward = i;
      if (list[i].op == Op::kForward) {
        last_forward = i;
        any_forward = true;
      }
    }
    const std::size_t cooldown_first = any_forward ? last_forward + 1 : 0;
    state.phase_first = {0, first_backward, std::max(cooldown_first, first_backward)};
    state.phase_last = {first_backward, cooldown_first, list.size()};  // exclusive ends for now

    for (std::size_t i = 0; i < list.size(); ++i) {
      const Action& action = list[i];
      const StageInfo& stage = info[index(action.stage)];
      PlannedOp& op = plan_[next++];
      op.cost = stage.time[op_index(action.op)];
      op.send_time = 0;
      op.message_bytes = 0;
      op.wait_first = kReady;
      op.wait_second = kReady;
      op.done = kScratch;
      op.deliver = kScratch;
      op.link = -1;
      op.consumer = -1;
      op.stage = action.stage;
      op.op = action.op;
      const int s = action.stage;
      const int j = action.microbatch;
      switch (action.op) {
        case Op::kForward:
          if (s > 0) op.wait_first = slot(kForwardInput, s, j);
          op.done = slot(kForwardDone, s, j);
          if (s + 1 < stages) {
            op.deliver = slot(kForwardInput, s + 1, j);
            op.consumer = info[index(s + 1)].device;
            op.link = stage.forward_link;
            op.message_bytes = stage.forward_bytes;
            op.send_time = stage.forward_send_time;
          }
          break;
        case Op::kBackward:
        case Op::kBackwardInput:
          if (s + 1 < stages) op.wait_first = slot(kBackwardInput, s, j);
          op.wait_second = slot(kForwardDone, s, j);
          if (action.op == Op::kBackwardInput) op.done = slot(kInputGradDone, s, j);
          if (s > 0) {
            op.deliver = slot(kBackwardInput, s - 1, j);
            op.consumer = info[index(s - 1)].device;
            op.link = stage.backward_link;
            op.message_bytes = stage.backward_bytes;
            op.send_time = stage.backward_send_time;
          }
          break;
        case Op::kBackwardWeight:
          op.wait_first = slot(kInputGradDone, s, j);
          break;
      }
      // Busy time and op counts do not depend on timing, so they are summed here, off the hot path.
      figures.busy += op.cost;
      ++figures.ops;
      PhaseFigures& phase = figures.phases[i < first_backward ? 0 : (i < cooldown_first ? 1 : 2)];
      phase.busy += op.cost;
      ++phase.ops;
    }

    // The positions whose start or end the summary needs, sorted and unique.
    for (std::size_t k = 0; k < 3; ++k) {
      if (state.phase_first[k] >= state.phase_last[k]) {
        state.phase_first[k] = list.size() + 1;  // empty phase: never noted
        state.phase_last[k] = list.size() + 1;
      } else {
        --state.phase_last[k];  // now inclusive
      }
    }
    std::array<std::size_t, 8> marks{0, list.size() - 1, state.phase_first[0], state.phase_last[0],
                                     state.phase_first[1], state.phase_last[1], state.phase_first[2],
                                     state.phase_last[2]};
    std::sort(marks.begin(), marks.end());
    state.mark_count = static_cast<std::size_t>(std::unique(marks.begin(), marks.end()) - marks.begin());
    state.marks = marks;

    memory_[index(d)].reset(costs.static_bytes(d), costs.weight_stash_fraction());
    figures.static_bytes = costs.static_bytes(d);
  }
  events_.reset(index(p));

  timeline_ = Timeline{};
  if (options_.record_timeline) {
    timeline_.spans.reserve(program.num_ops());
    timeline_.memory.reserve(2 * program.num_ops() + index(p));
    for (int d = 0; d < p; ++d) timeline_.memory.push_back({d, 0.0, memory_[index(d)].memory_bytes(), 0.0});
  }
}

void Engine::note_marks(int device, double start, double end) {
  DeviceState& state = devices_[index(device)];
  DeviceFigures& figures = figures_[index(device)];
  if (state.pc == 0) figures.start = start;
  if (state.pc + 1 == state.size) figures.end = end;
  for (std::size_t k = 0; k < 3; ++k) {
    if (state.phase_first[k] == state.pc) figures.phases[k].start = start;
    if (state.phase_last[k] == state.pc) figures.phases[k].end = end;
  }
  while (state.next_mark < state.mark_count && state.marks[state.next_mark] <= state.pc) ++state.next_mark;
}

void Engine::try_start(int device) {
  DeviceState& state = devices_[index(device)];
  if (state.running || state.pc >= state.size) return;
  const PlannedOp& op = plan_[state.begin + state.pc];
  const double ready = std::max(times_[op.wait_first], times_[op.wait_second]);
  if (ready == kUnknown) return;  // the op that delivers it wakes this device

  const double start = std::max(state.free_at, ready);
  const double end = start + op.cost;
  if (state.next_mark < state.mark_count && state.marks[state.next_mark] == state.pc) note_marks(device, start, end);
  if (op.op == Op::kForward) {
    MemoryTracker& memory = memory_[index(device)];
    memory.on_forward(stage_activation_bytes_[index(op.stage)]);
    if (options_.record_timeline) timeline_.memory.push_back({device, start, memory.memory_bytes(), memory.stashed()});
  }
  if (options_.record_timeline) {
    timeline_.spans.push_back({device, program_->actions[index(device)][state.pc], start, end});
  }
  state.running = true;
  events_.push(end, static_cast<std::uint32_t>(device));
}

void Engine::finish_op(double time, int device) {
  DeviceState& state = devices_[index(device)];
  const PlannedOp& op = plan_[state.begin + state.pc];
  MemoryTracker& memory = memory_[index(device)];
  times_[op.done] = time;
  switch (op.op) {
    case Op::kForward: break;
    case Op::kBackward: memory.on_backward(stage_activation_bytes_[index(op.stage)]); break;
    case Op::kBackwardInput:
      memory.on_input_grad(stage_activation_bytes_[index(op.stage)], stage_weight_bytes_[index(op.stage)]);
      break;
    case Op::kBackwardWeight: memory.on_weight_grad(stage_weight_bytes_[index(op.stage)]); break;
  }
  if (options_.record_timeline && op.op != Op::kForward) {
    timeline_.memory.push_back({device, time, memory.memory_bytes(), memory.stashed()});
  }

  double released = time;  // when the stream is free again in blocking mode
  double arrival = time;
  if (op.link >= 0) {
    Link& link = links_[index(op.link)];
    const Link::Departure departure = link.send(time, op.message_bytes, op.send_time);
    released = departure.end;
    arrival = departure.end + link.latency;
    if (options_.record_timeline) {
      timeline_.messages.push_back({link.src, link.dst, program_->actions[index(device)][state.pc], time,
                                    departure.start, departure.end, arrival, op.message_bytes});
    }
  }
  times_[op.deliver] = arrival;

  const int consumer = op.consumer;
  ++state.pc;
  state.running = false;
  state.free_at = options_.comm == CommMode::kBlocking ? released : time;
  if (consumer >= 0 && consumer != device) try_start(consumer);
  try_start(device);
}

SimulationOutcome Engine::run(const Program& program, const CostModel& costs, const EngineOptions& options) {
  prepare(program, costs, options);
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
    std::string waits;
    switch (next.op) {
      case Op::kForward: {
        const Action producer{next.stage - 1, Op::kForward, next.microbatch};
        waits = to_string(producer) + from(producer, d);
        break;
      }
      case Op::kBackward:
      case Op::kBackwardInput:
        if (times_[slot(kForwardDone, next.stage, next.microbatch)] == kUnknown) {
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
