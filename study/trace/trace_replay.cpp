// SPDX-License-Identifier: Apache-2.0
#include "study/trace/trace_replay.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "study/common/errors.hpp"

namespace ppsim {

const char* idle_cause_name(IdleCause cause) {
  switch (cause) {
    case IdleCause::kBubble:
      return "bubble";
    case IdleCause::kStraggler:
      return "straggler";
    case IdleCause::kMessage:
      return "message";
    case IdleCause::kCollective:
      return "collective";
    case IdleCause::kLaunch:
      return "launch";
  }
  return "?";
}

namespace {

struct Ref {
  int device = -1;
  int index = -1;
};

struct Input {
  Ref producer;
  double delay = 0;  // recorded: arrival - producer's end (0 on one device)
};

struct ItemPlan {
  std::vector<Input> inputs;
  double gap = 0;  // recorded launch gap: start - when it could have started
  double duration = 0;
  double reference = 0;  // the straggler reference of its op(s); 0 for a collective
};

// (stage, micro-batch, forward?) of the op that makes a message.
std::int64_t key(int stage, int microbatch, bool forward) {
  return (static_cast<std::int64_t>(stage) << 33) ^ (static_cast<std::int64_t>(microbatch) << 1) ^ (forward ? 0 : 1);
}

// Per op kind: the median over stages of each stage's median duration (the balanced pipeline's op).
std::array<double, kNumOps> reference_times(const TraceRun& run) {
  std::vector<std::array<std::vector<double>, kNumOps>> by_stage(static_cast<std::size_t>(run.num_stages()));
  for (const auto& items : run.devices) {
    for (const TracedItem& item : items) {
      if (!item.compute() || item.action.fused_with_next) continue;
      by_stage[static_cast<std::size_t>(item.action.stage)][static_cast<std::size_t>(item.action.op)].push_back(
          item.duration);
    }
  }
  std::array<double, kNumOps> reference{};
  for (int op = 0; op < kNumOps; ++op) {
    std::vector<double> medians;
    for (auto& stage : by_stage) {
      if (!stage[static_cast<std::size_t>(op)].empty())
        medians.push_back(median_of(stage[static_cast<std::size_t>(op)]));
    }
    reference[static_cast<std::size_t>(op)] = median_of(medians);
  }
  return reference;
}

class Replayer {
 public:
  Replayer(const TraceRun& run, const ReplayOptions& options) : run_(run), options_(options) {}

  TraceReplay replay(bool attribute) {
    plan();
    run_items();
    if (attribute) attribute_idle();
    return std::move(out_);
  }

 private:
  const TracedItem& item(Ref r) const {
    return run_.devices[static_cast<std::size_t>(r.device)][static_cast<std::size_t>(r.index)];
  }
  ItemPlan& plan_of(Ref r) { return plans_[static_cast<std::size_t>(r.device)][static_cast<std::size_t>(r.index)]; }
  double& start_of(Ref r) { return out_.start[static_cast<std::size_t>(r.device)][static_cast<std::size_t>(r.index)]; }
  double& end_of(Ref r) { return out_.end[static_cast<std::size_t>(r.device)][static_cast<std::size_t>(r.index)]; }

  void plan() {
    const int p = run_.num_devices();
    const PipelineShape shape{run_.num_stages(), run_.num_pipelines};
    out_.step_start = run_.step_start();
    std::unordered_map<std::int64_t, Ref> producers;
    for (int d = 0; d < p; ++d) {
      const auto& items = run_.devices[static_cast<std::size_t>(d)];
      for (int i = 0; i < static_cast<int>(items.size()); ++i) {
        const TracedItem& it = items[static_cast<std::size_t>(i)];
        if (!it.compute()) continue;
        for (const Action* a : {&it.action, &it.partner}) {
          if (a->op != Op::kBackwardWeight) producers[key(a->stage, a->microbatch, a->op == Op::kForward)] = {d, i};
          if (!it.action.fused_with_next) break;
        }
      }
    }
    std::unordered_map<std::int64_t, double> arrivals;
    for (const TracedMessage& message : run_.messages) {
      arrivals[key(message.from.stage, message.from.microbatch, message.from.op == Op::kForward)] = message.arrival;
    }
    const std::array<double, kNumOps> reference = reference_times(run_);
    const bool infer_messages = run_.messages.empty();
    plans_.resize(static_cast<std::size_t>(p));
    out_.start.resize(static_cast<std::size_t>(p));
    out_.end.resize(static_cast<std::size_t>(p));
    for (int d = 0; d < p; ++d) {
      const auto& items = run_.devices[static_cast<std::size_t>(d)];
      auto& plans = plans_[static_cast<std::size_t>(d)];
      plans.resize(items.size());
      out_.start[static_cast<std::size_t>(d)].assign(items.size(), 0);
      out_.end[static_cast<std::size_t>(d)].assign(items.size(), 0);
      double previous_end = out_.step_start;
      for (std::size_t i = 0; i < items.size(); ++i) {
        const TracedItem& it = items[i];
        ItemPlan& plan = plans[i];
        plan.duration = it.duration;
        double ready = previous_end;
        if (it.compute()) {
          plan.reference = reference[static_cast<std::size_t>(it.action.op)];
          for (const Action* a : {&it.action, &it.partner}) {
            if (a != &it.action) plan.reference += reference[static_cast<std::size_t>(a->op)];
            Action needed;
            bool needs = false;
            if (has_stage_input(*a, shape)) {
              needed = stage_input_of(*a);
              needs = true;
            } else if (a->op == Op::kBackwardWeight) {
              needed = Action(a->stage, Op::kBackward, a->microbatch);  // its I
              needs = true;
            }
            if (needs) {
              const auto found = producers.find(key(needed.stage, needed.microbatch, needed.op == Op::kForward));
              if (found == producers.end()) {
                throw InputError(excerpt(run_.files.empty() ? std::string("trace") : run_.files.front()) + ": " +
                                 to_string(*a) + " on device " + std::to_string(d) + " needs " + to_string(needed) +
                                 " (or its I), which the trace does not hold");
              }
              Input input{found->second, 0};
              const TracedItem& producer = item(found->second);
              if (found->second.device != d && infer_messages) {
                // No message records (a trace without RECV ranges): the wait after the producer
                // ended is the message's.
                input.delay = std::max(0.0, it.start - producer.end);
              } else if (found->second.device != d) {
                const auto arrival = arrivals.find(key(needed.stage, needed.microbatch, needed.op == Op::kForward));
                if (arrival != arrivals.end()) input.delay = std::max(0.0, arrival->second - producer.end);
                // A message that arrived after its op started was not waited for that long.
                input.delay = std::min(input.delay, std::max(0.0, it.start - producer.end));
              }
              // A few ulps are the writer's rounding (ts + dur against the next ts), not a clock.
              if (producer.end - it.start > 1e-12 * std::max(std::fabs(it.start), 1.0)) {
                ++out_.inconsistent;
                out_.worst_skew = std::max(out_.worst_skew, producer.end - it.start);
              }
              ready = std::max(ready, producer.end + input.delay);
              plan.inputs.push_back(input);
            }
            if (!it.action.fused_with_next) break;
          }
        }
        plan.gap = std::max(0.0, it.start - ready);
        previous_end = it.end;
      }
    }
  }

  // Each device runs its items in order; a device waits while its next item's producer has not run.
  void run_items() {
    const int p = run_.num_devices();
    std::vector<std::size_t> pc(static_cast<std::size_t>(p), 0);
    std::vector<double> free_at(static_cast<std::size_t>(p), out_.step_start);
    std::size_t remaining = 0;
    for (const auto& items : run_.devices) remaining += items.size();
    bool progress = true;
    while (remaining > 0 && progress) {
      progress = false;
      for (int d = 0; d < p; ++d) {
        auto& at = pc[static_cast<std::size_t>(d)];
        const auto& plans = plans_[static_cast<std::size_t>(d)];
        while (at < plans.size()) {
          const ItemPlan& plan = plans[at];
          double ready = free_at[static_cast<std::size_t>(d)];
          bool blocked = false;
          for (const Input& input : plan.inputs) {
            if (pc[static_cast<std::size_t>(input.producer.device)] <= static_cast<std::size_t>(input.producer.index)) {
              blocked = true;
              break;
            }
            ready = std::max(ready, end_of(input.producer) + (options_.message_delays ? input.delay : 0.0));
          }
          if (blocked) break;
          const double start = ready + (options_.launch_gaps ? plan.gap : 0.0);
          start_of({d, static_cast<int>(at)}) = start;
          end_of({d, static_cast<int>(at)}) = start + plan.duration;
          free_at[static_cast<std::size_t>(d)] = start + plan.duration;
          ++at;
          --remaining;
          progress = true;
        }
      }
    }
    if (remaining > 0) {
      for (int d = 0; d < p; ++d) {
        const auto at = pc[static_cast<std::size_t>(d)];
        if (at < plans_[static_cast<std::size_t>(d)].size()) {
          const TracedItem& stuck = run_.devices[static_cast<std::size_t>(d)][at];
          throw InputError(excerpt(run_.files.empty() ? std::string("trace") : run_.files.front()) +
                           ": the recorded order cannot run: device " + std::to_string(d) + " waits at " +
                           (stuck.compute() ? to_string(stuck.action) : excerpt(stuck.name)) +
                           " for an op that runs after it");
        }
      }
    }
    out_.step_end = out_.step_start;
    for (const auto& ends : out_.end) {
      for (double e : ends) out_.step_end = std::max(out_.step_end, e);
    }
  }

  // What bound an item's start on the replayed times: its device (the item before), an input, or
  // nothing (the step's start). Ties stay on the device, as the engine's critical path does.
  struct Binding {
    double ready = 0;
    const Input* input = nullptr;  // null: the device
  };
  Binding binding(Ref r) {
    Binding b;
    b.ready = r.index > 0 ? end_of({r.device, r.index - 1}) : out_.step_start;
    for (const Input& input : plan_of(r).inputs) {
      const double arrival = end_of(input.producer) + (options_.message_delays ? input.delay : 0.0);
      if (arrival > b.ready) {
        b.ready = arrival;
        b.input = &input;
      }
    }
    return b;
  }

  void add(DeviceIdle& idle, IdleCause cause, double from, double to) {
    if (!(to > from)) return;
    idle.cause[static_cast<std::size_t>(cause)] += to - from;
    // The chain walks back in time: a cause that goes on joins the segment next to it.
    if (!idle.segments.empty() && idle.segments.back().cause == cause && idle.segments.back().start == to) {
      idle.segments.back().start = from;
      return;
    }
    if (!idle.segments.empty() && idle.segments.back().cause == cause && idle.segments.back().end == from) {
      idle.segments.back().end = to;
      return;
    }
    idle.segments.push_back({from, to, cause});
  }

  // [a, b] was spent waiting for item y to end (b <= its end): walk back along what y waited for.
  void chain(DeviceIdle& idle, Ref y, double a, double b) {
    while (b > a) {
      const double s = start_of(y);
      const double from = std::max(a, s);
      if (b > from) {
        const TracedItem& it = item(y);
        if (!it.compute()) {
          add(idle, IdleCause::kCollective, from, b);
        } else {
          const ItemPlan& plan = plan_of(y);
          const double excess = plan.duration > 0 ? std::max(0.0, plan.duration - plan.reference) / plan.duration : 0;
          // The op's own time: the straggler share first (the later part), the rest the bubble proper.
          const double split = b - (b - from) * excess;
          add(idle, IdleCause::kBubble, from, split);
          add(idle, IdleCause::kStraggler, split, b);
        }
      }
      if (s <= a) return;
      b = s;
      const Binding bound = binding(y);
      add(idle, IdleCause::kLaunch, std::max(a, bound.ready), b);
      if (bound.ready <= a) return;
      b = bound.ready;
      if (bound.input == nullptr) {
        if (y.index == 0) return;  // the step's start
        y = {y.device, y.index - 1};
        continue;
      }
      const double produced = end_of(bound.input->producer);
      add(idle, IdleCause::kMessage, std::max(a, produced), b);
      b = std::min(b, produced);
      y = bound.input->producer;
    }
  }

  void attribute_idle() {
    const int p = run_.num_devices();
    out_.idle.resize(static_cast<std::size_t>(p));
    // The item that ends the step: what every device's tail waits for.
    Ref last;
    for (int d = 0; d < p; ++d) {
      const auto& ends = out_.end[static_cast<std::size_t>(d)];
      for (int i = 0; i < static_cast<int>(ends.size()); ++i) {
        if (last.device < 0 || ends[static_cast<std::size_t>(i)] > end_of(last)) last = {d, i};
      }
    }
    for (int d = 0; d < p; ++d) {
      DeviceIdle& idle = out_.idle[static_cast<std::size_t>(d)];
      const auto& items = run_.devices[static_cast<std::size_t>(d)];
      double previous = out_.step_start;
      for (int i = 0; i < static_cast<int>(items.size()); ++i) {
        const Ref x{d, i};
        const double s = start_of(x);
        if (s > previous) {
          // The gap before x: its launch, then what it waited for.
          const Binding bound = binding(x);
          add(idle, IdleCause::kLaunch, std::max(previous, bound.ready), s);
          if (bound.ready > previous && bound.input != nullptr) {
            const double produced = end_of(bound.input->producer);
            add(idle, IdleCause::kMessage, std::max(previous, produced), bound.ready);
            chain(idle, bound.input->producer, previous, std::min(bound.ready, produced));
          }
        }
        if (items[static_cast<std::size_t>(i)].compute()) {
          idle.busy += end_of(x) - s;
        } else {
          add(idle, IdleCause::kCollective, s, end_of(x));
        }
        previous = std::max(previous, end_of(x));
      }
      if (out_.step_end > previous && last.device >= 0) chain(idle, last, previous, out_.step_end);
      std::sort(idle.segments.begin(), idle.segments.end(),
                [](const IdleSegment& a, const IdleSegment& b) { return a.start < b.start; });
      for (double part : idle.cause) idle.idle += part;
    }
  }

  const TraceRun& run_;
  ReplayOptions options_;
  std::vector<std::vector<ItemPlan>> plans_;
  TraceReplay out_;
};

}  // namespace

TraceReplay replay_trace(const TraceRun& run, const ReplayOptions& options, bool attribute_idle) {
  return Replayer(run, options).replay(attribute_idle);
}

}  // namespace ppsim
