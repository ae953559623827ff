// SPDX-License-Identifier: Apache-2.0
#include "sim/critical_path.hpp"

#include <cstdint>
#include <limits>

namespace ppsim {
namespace {

constexpr std::int32_t kNone = -1;

}  // namespace

std::vector<double> critical_time_by_device(const Program& program, const Timeline& timeline) {
  const auto& spans = timeline.spans;
  std::vector<double> by_device(static_cast<std::size_t>(program.num_devices), 0.0);
  if (spans.empty()) return by_device;
  const auto stages = static_cast<std::size_t>(program.num_stages());
  const auto m = static_cast<std::size_t>(program.num_microbatches);
  const PipelineShape shape = program.pipeline_shape();
  const auto slot = [&](const Action& a) { return static_cast<std::size_t>(a.stage) * m + static_cast<std::size_t>(a.microbatch); };

  // Which span ran each op (both halves of an overlapped one), and each span's predecessor on its device.
  std::vector<std::int32_t> forward(stages * m, kNone);
  std::vector<std::int32_t> backward(stages * m, kNone);  // B or I
  std::vector<std::int32_t> previous(spans.size(), kNone);
  std::vector<std::int32_t> last_on(by_device.size(), kNone);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const Span& span = spans[i];
    for (const Action* a : {&span.action, span.action.fused_with_next ? &span.partner : nullptr}) {
      if (a == nullptr) continue;
      if (a->op == Op::kForward) forward[slot(*a)] = static_cast<std::int32_t>(i);
      if (is_backward_input(a->op)) backward[slot(*a)] = static_cast<std::int32_t>(i);
    }
    auto& last = last_on[static_cast<std::size_t>(span.device)];
    previous[i] = last;
    last = static_cast<std::int32_t>(i);
  }
  // When each message arrived, by its producer.
  std::vector<double> forward_arrival(stages * m, -1);
  std::vector<double> backward_arrival(stages * m, -1);
  for (const MessageSpan& message : timeline.messages) {
    (message.from.op == Op::kForward ? forward_arrival : backward_arrival)[slot(message.from)] = message.arrival;
  }

  std::size_t current = 0;
  for (std::size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].end > spans[current].end) current = i;
  }
  // A DAG walked backwards: at most one visit per span.
  for (std::size_t steps = 0; steps <= spans.size(); ++steps) {
    const Span& span = spans[current];
    by_device[static_cast<std::size_t>(span.device)] += span.end - span.start;
    std::int32_t next = previous[current];
    double ready = next == kNone ? -std::numeric_limits<double>::infinity() : spans[static_cast<std::size_t>(next)].end;
    const auto consider = [&](std::int32_t producer, double arrival) {
      if (producer == kNone || producer == static_cast<std::int32_t>(current)) return;
      const double at = arrival >= 0 ? arrival : spans[static_cast<std::size_t>(producer)].end;
      if (at > ready) {  // ties stay on the device
        ready = at;
        next = producer;
      }
    };
    for (const Action* a : {&span.action, span.action.fused_with_next ? &span.partner : nullptr}) {
      if (a == nullptr) continue;
      const std::size_t k = slot(*a);
      if (a->op == Op::kForward && !shape.first(a->stage)) {
        consider(forward[k - m], forward_arrival[k - m]);
      } else if (is_backward_input(a->op) && !shape.last(a->stage)) {
        consider(backward[k + m], backward_arrival[k + m]);
      } else if (a->op == Op::kBackwardWeight) {
        consider(backward[k], -1);
      }
    }
    if (next == kNone) break;
    current = static_cast<std::size_t>(next);
  }
  return by_device;
}

}  // namespace ppsim
