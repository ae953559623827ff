// SPDX-License-Identifier: Apache-2.0
#include "support/invariants.hpp"

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ppsim {
namespace {

std::size_t index(int i) { return static_cast<std::size_t>(i); }

// Collects the violations of one family of properties; a whole family becomes one assertion so that
// sweeps over thousands of ops stay fast, while a failure still names its first offenders.
class Violations {
 public:
  explicit Violations(std::string family) : family_(std::move(family)) {}

  template <typename... Parts>
  void add(const Parts&... parts) {
    if (count_++ >= kShown) return;
    std::ostringstream line;
    line.precision(17);
    (line << ... << parts);
    shown_ += "\n  " + line.str();
  }

  void report() const {
    INFO(family_ << ": " << count_ << " violation(s)" << shown_);
    CHECK(count_ == 0);
  }

 private:
  static constexpr std::size_t kShown = 8;
  std::string family_;
  std::size_t count_ = 0;
  std::string shown_;
};

// Time comparisons allow for rounding in sums of op costs; `scale` is the largest time of the run.
struct Tolerance {
  double absolute;
  bool equal(double a, double b) const { return std::fabs(a - b) <= absolute; }
  bool at_least(double a, double b) const { return a >= b - absolute; }
};

double transfer_time(std::int64_t bytes, double bandwidth) {
  return bytes == 0 ? 0.0 : static_cast<double>(bytes) / bandwidth;
}

// Where each action's span is, by (stage, op, micro-batch).
class SpanIndex {
 public:
  SpanIndex(int stages, int m) : m_(m), where_(index(stages) * index(kNumOps) * index(m), -1) {}

  bool in_range(const Action& a, int stages) const {
    return a.stage >= 0 && a.stage < stages && a.microbatch >= 0 && a.microbatch < m_;
  }
  std::ptrdiff_t& at(const Action& a) {
    return where_[(index(a.stage) * index(kNumOps) + static_cast<std::size_t>(a.op)) * index(m_) + index(a.microbatch)];
  }
  std::ptrdiff_t find(int stage, Op op, int mb) const {
    return where_[(index(stage) * index(kNumOps) + static_cast<std::size_t>(op)) * index(m_) + index(mb)];
  }

 private:
  int m_;
  std::vector<std::ptrdiff_t> where_;
};

// The consumer of a message: (stage, is_gradient, micro-batch) packed into one key.
std::int64_t input_key(int stage, bool gradient, int mb, int m) {
  return (static_cast<std::int64_t>(stage) * 2 + (gradient ? 1 : 0)) * m + mb;
}

}  // namespace

namespace {

// The cost the engine charges for the action at step k of a device's list: an overlapped pair's
// time on its forward, nothing on its backward half, else the op's own time.
double action_cost(const CostModel& costs, const std::vector<Action>& list, std::size_t k) {
  if (list[k].fused_with_next && k + 1 < list.size()) {
    return costs.overlap_time(list[k].stage, list[k + 1].op, list[k + 1].stage);
  }
  if (k > 0 && list[k - 1].fused_with_next) return 0;
  return costs.compute_time(list[k].op, list[k].stage);
}

}  // namespace

void check_invariants(const Program& program, const CostModel& costs, const Result& result, CommMode comm) {
  REQUIRE(result.timeline.has_value());
  // An overlapped pair is one span in the timeline; the checks below see it as two spans with the
  // same start and end, one per action.
  Timeline expanded = *result.timeline;
  expanded.spans.clear();
  for (const Span& span : result.timeline->spans) {
    expanded.spans.push_back(span);
    if (span.action.fused_with_next) expanded.spans.push_back({span.device, span.partner, span.start, span.end});
  }
  const Timeline& timeline = expanded;
  const int p = program.num_devices;
  const int m = program.num_microbatches;
  const int stages = program.num_stages();
  const auto device_of = [&](int stage) { return program.stage_device[index(stage)]; };
  // Independent pipelines (DualPipe's directions): no message crosses from one to the next.
  const int length = stages / program.num_pipelines;
  const auto starts_pipeline = [&](int stage) { return stage % length == 0; };
  const auto ends_pipeline = [&](int stage) { return (stage + 1) % length == 0; };

  REQUIRE(result.p == p);
  REQUIRE(result.m == m);
  REQUIRE(result.stages == stages);
  REQUIRE(result.per_device.size() == index(p));
  REQUIRE(timeline.spans.size() == program.num_ops());

  double scale = 1;
  for (const Span& span : timeline.spans) scale = std::max(scale, std::fabs(span.end));
  for (const MessageSpan& message : timeline.messages) scale = std::max(scale, std::fabs(message.arrival));
  const Tolerance tol{1e-9 * scale};

  // --- compute spans: one per action, in device order, not overlapping, lasting the op's cost.
  Violations span_problems("compute spans");
  SpanIndex span_of(stages, m);
  std::vector<std::vector<std::ptrdiff_t>> device_spans(index(p));
  for (std::size_t i = 0; i < timeline.spans.size(); ++i) {
    const Span& span = timeline.spans[i];
    if (span.device < 0 || span.device >= p || !span_of.in_range(span.action, stages)) {
      span_problems.add("span ", i, " (", to_string(span.action), ") is outside the program");
      continue;
    }
    std::ptrdiff_t& slot = span_of.at(span.action);
    if (slot >= 0) span_problems.add(to_string(span.action), " has two spans");
    slot = static_cast<std::ptrdiff_t>(i);
    device_spans[index(span.device)].push_back(slot);
    if (device_of(span.action.stage) != span.device) {
      span_problems.add(to_string(span.action), " ran on device ", span.device, ", not its stage's device");
    }
    double cost = costs.compute_time(span.action.op, span.action.stage);
    if (span.action.fused_with_next) cost = costs.overlap_time(span.action.stage, span.partner.op, span.partner.stage);
    if (i > 0 && timeline.spans[i - 1].action.fused_with_next) {
      const Span& pair = timeline.spans[i - 1];
      cost = costs.overlap_time(pair.action.stage, span.action.op, span.action.stage);
    }
    if (!tol.equal(span.end - span.start, cost)) {
      span_problems.add(to_string(span.action), " lasted ", span.end - span.start, " instead of ", cost);
    }
    if (span.start < 0) span_problems.add(to_string(span.action), " starts before 0");
  }
  for (int d = 0; d < p; ++d) {
    const auto& list = program.actions[index(d)];
    const auto& spans = device_spans[index(d)];
    if (spans.size() != list.size()) {
      span_problems.add("device ", d, " has ", spans.size(), " spans for ", list.size(), " actions");
      continue;
    }
    for (std::size_t k = 0; k < list.size(); ++k) {
      const Span& span = timeline.spans[static_cast<std::size_t>(spans[k])];
      if (!(span.action == list[k])) {
        span_problems.add("device ", d, " step ", k, " ran ", to_string(span.action), " instead of ",
                          to_string(list[k]));
      }
      if (k > 0) {
        const Span& before = timeline.spans[static_cast<std::size_t>(spans[k - 1])];
        if (before.action.fused_with_next) {
          if (!tol.equal(span.start, before.start) || !tol.equal(span.end, before.end)) {
            span_problems.add("device ", d, ": ", to_string(span.action), " does not run with its overlapped ",
                              to_string(before.action));
          }
        } else if (!tol.at_least(span.start, before.end)) {
          span_problems.add("device ", d, ": ", to_string(span.action), " starts at ", span.start, " before ",
                            to_string(before.action), " ends at ", before.end);
        }
      }
    }
  }
  span_problems.report();

  const auto span_at = [&](int stage, Op op, int mb) -> const Span* {
    if (stage < 0 || stage >= stages || mb < 0 || mb >= m) return nullptr;
    const std::ptrdiff_t i = span_of.find(stage, op, mb);
    return i < 0 ? nullptr : &timeline.spans[static_cast<std::size_t>(i)];
  };
  const auto backward_span = [&](int stage, int mb) -> const Span* {
    if (const Span* b = span_at(stage, Op::kBackward, mb)) return b;
    return span_at(stage, Op::kBackwardInput, mb);
  };
  // Link parameters and message bytes, as the cost model states them.
  struct Hop {
    bool cross = false;
    double latency = 0;
    double transfer = 0;
    std::int64_t bytes = 0;
  };
  const auto hop = [&](int from_stage, int to_stage) {
    Hop h;
    const int src = device_of(from_stage);
    const int dst = device_of(to_stage);
    if (src == dst) return h;
    const LinkParams link = costs.link(src, dst);
    h.cross = true;
    h.latency = link.latency;
    h.bytes = costs.message_bytes(from_stage, to_stage);
    h.transfer = transfer_time(h.bytes, link.bandwidth);
    return h;
  };

  // --- messages: one per cross-device dependency, with consistent departure and arrival.
  Violations message_problems("messages");
  std::map<std::int64_t, const MessageSpan*> message_for_input;
  std::map<std::pair<int, int>, std::vector<const MessageSpan*>> by_link;
  for (const MessageSpan& message : timeline.messages) {
    const Action& from = message.from;
    const std::string name = "message of " + to_string(from);
    if (!span_of.in_range(from, stages) || from.op == Op::kBackwardWeight) {
      message_problems.add(name, " has no consumer");
      continue;
    }
    const bool gradient = from.op != Op::kForward;
    const int consumer = gradient ? from.stage - 1 : from.stage + 1;
    if (gradient ? starts_pipeline(from.stage) : ends_pipeline(from.stage)) {
      message_problems.add(name, " goes past the ends of the pipeline");
      continue;
    }
    const Hop h = hop(from.stage, consumer);
    if (!h.cross) message_problems.add(name, " was sent between stages on one device");
    if (message.src != device_of(from.stage) || message.dst != device_of(consumer)) {
      message_problems.add(name, " went ", message.src, "->", message.dst);
    }
    const bool fresh = message_for_input.emplace(input_key(consumer, gradient, from.microbatch, m), &message).second;
    if (!fresh) message_problems.add(name, " was sent twice");
    by_link[{message.src, message.dst}].push_back(&message);
    const Span* producer = span_at(from.stage, from.op, from.microbatch);
    if (producer == nullptr) {
      message_problems.add(name, " has no producing op");
    } else if (!tol.equal(message.enqueued, producer->end)) {
      message_problems.add(name, " enqueued at ", message.enqueued, ", its op ended at ", producer->end);
    }
    if (message.bytes != h.bytes) message_problems.add(name, " carries ", message.bytes, " bytes, not ", h.bytes);
    if (!tol.at_least(message.depart_start, message.enqueued)) {
      message_problems.add(name, " left at ", message.depart_start, " before it was enqueued at ", message.enqueued);
    }
    if (!tol.equal(message.depart_end - message.depart_start, h.transfer)) {
      message_problems.add(name, " occupied the link ", message.depart_end - message.depart_start,
                           " instead of bytes/bandwidth = ", h.transfer);
    }
    if (!tol.equal(message.arrival, message.depart_end + h.latency)) {
      message_problems.add(name, " arrived at ", message.arrival,
                           ", not left + latency = ", message.depart_end + h.latency);
    }
  }
  // When a message may leave: once sent, and in paired mode once its receiver has posted the
  // receive, at the end of its op before the consumer (before an overlapped pair, the op before it).
  std::map<std::pair<int, std::size_t>, double> posted_at;  // (device, position) -> end of the op before
  if (comm == CommMode::kPaired) {
    for (int d = 0; d < p; ++d) {
      const auto& list = program.actions[index(d)];
      for (std::size_t k = 0; k < list.size(); ++k) {
        std::size_t before = k;
        while (before > 0 && list[before - 1].fused_with_next) --before;  // the pair's first half
        if (before == 0) {
          posted_at[{d, k}] = 0;
        } else if (const Span* previous = span_at(list[before - 1].stage, list[before - 1].op, list[before - 1].microbatch)) {
          posted_at[{d, k}] = previous->end;
        }
      }
    }
  }
  const auto may_leave = [&](const MessageSpan& message) {
    if (comm != CommMode::kPaired) return message.enqueued;
    const bool gradient = message.from.op != Op::kForward;
    const int stage = message.from.stage + (gradient ? -1 : 1);
    const auto& list = program.actions[index(message.dst)];
    for (std::size_t k = 0; k < list.size(); ++k) {
      const Action& a = list[k];
      if (a.stage == stage && a.microbatch == message.from.microbatch && (a.op == Op::kForward) != gradient &&
          a.op != Op::kBackwardWeight) {
        return std::max(message.enqueued, posted_at[{message.dst, k}]);
      }
    }
    return message.enqueued;
  };
  // Each direction of a link serves first come first served and never idles while a message waits.
  for (auto& [link, messages] : by_link) {
    std::stable_sort(messages.begin(), messages.end(), [&](const MessageSpan* a, const MessageSpan* b) {
      return may_leave(*a) < may_leave(*b);
    });
    double free_at = 0;
    for (const MessageSpan* message : messages) {
      const double expected = std::max(may_leave(*message), free_at);
      if (!tol.equal(message->depart_start, expected)) {
        message_problems.add("link ", link.first, "->", link.second, ": message of ", to_string(message->from),
                             " left at ", message->depart_start, ", first come first served says ", expected);
      }
      free_at = message->depart_end;
    }
  }
  // The message a consumer waits for, or nullptr when its producer is on the same device.
  const auto message_into = [&](int consumer, bool gradient, int mb) -> const MessageSpan* {
    auto it = message_for_input.find(input_key(consumer, gradient, mb, m));
    return it == message_for_input.end() ? nullptr : it->second;
  };

  // --- dependencies and start times.
  Violations dependency_problems("dependencies");
  Violations asap_problems("start as soon as possible");
  std::size_t expected_messages = 0;
  for (int d = 0; d < p; ++d) {
    const auto& spans = device_spans[index(d)];
    double device_free = 0;
    double pair_ready = 0;  // the forward half's readiness, while its backward half is checked
    double pair_released = 0;
    for (std::size_t k = 0; k < spans.size(); ++k) {
      const Span& span = timeline.spans[static_cast<std::size_t>(spans[k])];
      const Action& a = span.action;
      const std::string name = to_string(a);
      const bool second_half = k > 0 && timeline.spans[static_cast<std::size_t>(spans[k - 1])].action.fused_with_next;
      double ready = second_half ? pair_ready : 0;
      // One input: the producer's span, the hop it crosses and the message (if any) that carried it.
      const auto needs = [&](const Span* producer, int producer_stage, bool gradient, const std::string& what) {
        if (producer == nullptr) {
          dependency_problems.add(name, " ran without ", what);
          return;
        }
        const Hop h = hop(producer_stage, a.stage);
        double arrival = producer->end;
        if (h.cross) {
          arrival += h.transfer + h.latency;
          const MessageSpan* message = message_into(a.stage, gradient, a.microbatch);
          if (message == nullptr) {
            dependency_problems.add(name, " got ", what, " from another device without a message");
          } else {
            if (!tol.at_least(message->arrival, arrival)) {
              dependency_problems.add(name, ": ", what, " arrived at ", message->arrival, " before its end + transfer ",
                                      arrival);
            }
            arrival = message->arrival;
          }
        }
        if (!tol.at_least(span.start, arrival)) {
          dependency_problems.add(name, " started at ", span.start, " before ", what, " arrived at ", arrival);
        }
        ready = std::max(ready, arrival);
      };
      switch (a.op) {
        case Op::kForward:
          if (!starts_pipeline(a.stage)) needs(span_at(a.stage - 1, Op::kForward, a.microbatch), a.stage - 1, false, "its input");
          if (!ends_pipeline(a.stage) && device_of(a.stage + 1) != d) ++expected_messages;
          break;
        case Op::kBackward:
        case Op::kBackwardInput:
          needs(span_at(a.stage, Op::kForward, a.microbatch), a.stage, false, "its forward");
          if (!ends_pipeline(a.stage)) needs(backward_span(a.stage + 1, a.microbatch), a.stage + 1, true, "its gradient");
          if (!starts_pipeline(a.stage) && device_of(a.stage - 1) != d) ++expected_messages;
          break;
        case Op::kBackwardWeight:
          needs(span_at(a.stage, Op::kBackwardInput, a.microbatch), a.stage, false, "its input-gradient backward");
          break;
      }
      // The stream is free when the op ends, in blocking mode when its message has left the link, in
      // paired mode when it has arrived.
      double released = span.end;
      if (comm != CommMode::kOverlap) {
        const bool sends_forward = a.op == Op::kForward && !ends_pipeline(a.stage);
        const bool sends_gradient = is_backward_input(a.op) && !starts_pipeline(a.stage);
        const MessageSpan* message = sends_forward    ? message_into(a.stage + 1, false, a.microbatch)
                                     : sends_gradient ? message_into(a.stage - 1, true, a.microbatch)
                                                      : nullptr;
        if (message != nullptr) {
          released = std::max(released, comm == CommMode::kPaired ? message->arrival : message->depart_end);
        }
      }
      if (a.fused_with_next) {  // an overlapped pair starts when both halves can: check at the second
        pair_ready = ready;
        pair_released = released;
        continue;
      }
      if (second_half) released = std::max(released, pair_released);
      const double expected_start = std::max(device_free, ready);
      if (!tol.equal(span.start, expected_start)) {
        asap_problems.add(name, " started at ", span.start, "; device free at ", device_free, ", inputs at ", ready);
      }
      device_free = released;
    }
  }
  if (timeline.messages.size() != expected_messages) {
    message_problems.add(timeline.messages.size(), " messages for ", expected_messages, " cross-device dependencies");
  }
  message_problems.report();
  dependency_problems.report();
  asap_problems.report();

  // --- per-link figures and comm_ratio.
  Violations link_problems("per_link and comm_ratio");
  std::set<std::pair<int, int>> expected_links;
  for (int s = 0; s + 1 < stages; ++s) {
    if (!ends_pipeline(s) && device_of(s) != device_of(s + 1)) {
      expected_links.insert({device_of(s), device_of(s + 1)});
      expected_links.insert({device_of(s + 1), device_of(s)});
    }
  }
  if (result.per_link.size() != expected_links.size()) {
    link_problems.add(result.per_link.size(), " links listed, ", expected_links.size(), " expected");
  }
  double link_busy = 0;
  std::int64_t link_messages = 0;
  for (const LinkFigures& link : result.per_link) {
    if (!expected_links.contains({link.src, link.dst})) {
      link_problems.add("link ", link.src, "->", link.dst, " joins no adjacent stages");
    }
    std::int64_t messages = 0;
    std::int64_t bytes = 0;
    double busy = 0;
    if (auto it = by_link.find({link.src, link.dst}); it != by_link.end()) {
      for (const MessageSpan* message : it->second) {
        ++messages;
        bytes += message->bytes;
        busy += message->depart_end - message->depart_start;
      }
    }
    if (link.messages != messages || link.bytes != bytes || !tol.equal(link.busy, busy)) {
      link_problems.add("link ", link.src, "->", link.dst, " reports ", link.messages, " messages, ", link.bytes,
                        " bytes, busy ", link.busy, "; the timeline has ", messages, ", ", bytes, ", ", busy);
    }
    link_busy += link.busy;
    link_messages += link.messages;
  }
  if (result.messages != link_messages || result.messages != static_cast<std::int64_t>(timeline.messages.size())) {
    link_problems.add("messages = ", result.messages, ", per_link sum ", link_messages, ", timeline ",
                      timeline.messages.size());
  }
  if (result.total_busy > 0 && !tol.equal(result.comm_ratio * result.total_busy, link_busy)) {
    link_problems.add("comm_ratio ", result.comm_ratio, " != link busy ", link_busy, " / compute busy ",
                      result.total_busy);
  }
  link_problems.report();

  // --- memory, recomputed from the spans with DESIGN.md's rules.
  Violations memory_problems("memory");
  const double fraction = costs.weight_stash_fraction();
  std::vector<std::vector<const MemorySample*>> samples(index(p));
  for (const MemorySample& sample : timeline.memory) {
    if (sample.device < 0 || sample.device >= p) {
      memory_problems.add("memory sample for device ", sample.device);
      continue;
    }
    samples[index(sample.device)].push_back(&sample);
  }
  for (int d = 0; d < p; ++d) {
    const DeviceFigures& figures = result.per_device[index(d)];
    const std::int64_t static_bytes = costs.static_bytes(d);
    if (figures.static_bytes != static_bytes) {
      memory_problems.add("device ", d, " static bytes ", figures.static_bytes, ", cost model says ", static_bytes);
    }
    // Replay: F allocates when it starts (in a layer-by-layer pair, when the pair ends, once its
    // backward has freed); B, I and W free when they end; at one instant frees go first.
    struct Change {
      double time;
      bool allocation;
      std::int64_t bytes;
      double stashes;
    };
    std::vector<Change> changes;
    for (std::ptrdiff_t i : device_spans[index(d)]) {
      const Span& span = timeline.spans[static_cast<std::size_t>(i)];
      const std::int64_t whole = costs.activation_bytes(span.action.stage);
      const std::int64_t kept = costs.weight_stash_bytes(span.action.stage);
      switch (span.action.op) {
        case Op::kForward:
          changes.push_back({span.action.fused_with_next && program.layerwise_pairs ? span.end : span.start, true,
                             whole, 1.0});
          break;
        case Op::kBackward:
          changes.push_back({span.end, false, -whole, -1.0});
          break;
        case Op::kBackwardInput:
          changes.push_back({span.end, false, -(whole - kept), fraction - 1.0});
          break;
        case Op::kBackwardWeight:
          changes.push_back({span.end, false, -kept, -fraction});
          break;
      }
    }
    std::stable_sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
      return a.time != b.time ? a.time < b.time : (!a.allocation && b.allocation);
    });
    std::int64_t bytes = 0;
    std::int64_t peak_bytes = 0;
    double stashes = 0;
    double peak_stashes = 0;
    for (const Change& change : changes) {
      bytes += change.bytes;
      stashes += change.stashes / program.units_per_microbatch;  // Seq1F1B: a slice is 1/k of a stash
      peak_bytes = std::max(peak_bytes, bytes);
      peak_stashes = std::max(peak_stashes, stashes);
      if (bytes < 0) memory_problems.add("device ", d, " frees more than it stashed at ", change.time);
    }
    if (bytes != 0 || std::fabs(stashes) > 1e-9) {
      memory_problems.add("device ", d, " ends with ", bytes, " activation bytes, ", stashes, " stashes");
    }
    if (figures.peak_activation_bytes != peak_bytes) {
      memory_problems.add("device ", d, " peak_activation_bytes ", figures.peak_activation_bytes, ", replay says ",
                          peak_bytes);
    }
    if (std::fabs(figures.peak_stashed - peak_stashes) > 1e-9) {
      memory_problems.add("device ", d, " peak_stashed ", figures.peak_stashed, ", replay says ", peak_stashes);
    }
    if (figures.peak_memory_bytes != static_bytes + peak_bytes) {
      memory_problems.add("device ", d, " peak_memory_bytes ", figures.peak_memory_bytes, " != static + peak");
    }
    // The engine's own samples: in time order, back to the static bytes, peaking at the reported peak.
    const auto& own = samples[index(d)];
    if (own.empty()) {
      memory_problems.add("device ", d, " has no memory samples");
      continue;
    }
    std::int64_t max_sample = own.front()->bytes;
    double max_stashed = own.front()->stashed;
    for (std::size_t i = 1; i < own.size(); ++i) {
      if (own[i]->time < own[i - 1]->time) memory_problems.add("device ", d, " memory samples go back in time");
      max_sample = std::max(max_sample, own[i]->bytes);
      max_stashed = std::max(max_stashed, own[i]->stashed);
    }
    if (own.back()->bytes != static_bytes || std::fabs(own.back()->stashed) > 1e-9) {
      memory_problems.add("device ", d, " last sample ", own.back()->bytes, " bytes, ", own.back()->stashed,
                          " stashes; static bytes are ", static_bytes);
    }
    if (max_sample != figures.peak_memory_bytes) {
      memory_problems.add("device ", d, " max sample ", max_sample, " != peak_memory_bytes ",
                          figures.peak_memory_bytes);
    }
    if (std::fabs(max_stashed - figures.peak_stashed) > 1e-9) {
      memory_problems.add("device ", d, " max stashed sample ", max_stashed, " != peak_stashed ", figures.peak_stashed);
    }
  }
  memory_problems.report();

  // --- summary figures.
  Violations figure_problems("figures");
  double first_start = 0;
  double last_end = 0;
  bool any = false;
  double total_busy = 0;
  std::int64_t total_ops = 0;
  for (int d = 0; d < p; ++d) {
    const auto& list = program.actions[index(d)];
    double busy = 0;
    for (std::size_t k = 0; k < list.size(); ++k) busy += action_cost(costs, list, k);
    total_busy += busy;
    total_ops += static_cast<std::int64_t>(list.size());
    const DeviceFigures& figures = result.per_device[index(d)];
    if (figures.ops != static_cast<std::int64_t>(list.size())) {
      figure_problems.add("device ", d, " ops ", figures.ops, " for ", list.size(), " actions");
    }
    if (!tol.equal(figures.busy, busy)) {
      figure_problems.add("device ", d, " busy ", figures.busy, ", op costs sum to ", busy);
    }
    const auto& spans = device_spans[index(d)];
    if (spans.empty() || spans.size() != list.size()) continue;  // already reported with the spans
    const Span& first = timeline.spans[static_cast<std::size_t>(spans.front())];
    const Span& last = timeline.spans[static_cast<std::size_t>(spans.back())];
    if (!tol.equal(figures.start, first.start) || !tol.equal(figures.end, last.end)) {
      figure_problems.add("device ", d, " start/end ", figures.start, "/", figures.end, ", spans say ", first.start,
                          "/", last.end);
    }
    first_start = any ? std::min(first_start, first.start) : first.start;
    last_end = any ? std::max(last_end, last.end) : last.end;
    any = true;

    // Phases: warmup before the first B or I, cooldown after the last F, steady in between.
    std::size_t first_backward = list.size();
    std::size_t last_forward = 0;
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (is_backward_input(list[k].op) && first_backward == list.size()) first_backward = k;
      if (list[k].op == Op::kForward) last_forward = k;
    }
    std::array<std::int64_t, 3> phase_ops{};
    std::array<double, 3> phase_busy{};
    std::array<double, 3> phase_start{};
    std::array<double, 3> phase_end{};
    for (std::size_t k = 0; k < list.size(); ++k) {
      const std::size_t phase = k < first_backward ? 0 : (k > last_forward ? 2 : 1);
      const Span& span = timeline.spans[static_cast<std::size_t>(spans[k])];
      if (phase_ops[phase]++ == 0) phase_start[phase] = span.start;
      phase_end[phase] = span.end;
      phase_busy[phase] += action_cost(costs, list, k);
    }
    for (std::size_t phase = 0; phase < 3; ++phase) {
      const PhaseFigures& reported = figures.phases[phase];
      if (reported.ops != phase_ops[phase] || !tol.equal(reported.busy, phase_busy[phase])) {
        figure_problems.add("device ", d, " phase ", kPhaseNames[phase], ": ", reported.ops, " ops busy ",
                            reported.busy, ", expected ", phase_ops[phase], " ops busy ", phase_busy[phase]);
      }
      if (phase_ops[phase] > 0 &&
          (!tol.equal(reported.start, phase_start[phase]) || !tol.equal(reported.end, phase_end[phase]))) {
        figure_problems.add("device ", d, " phase ", kPhaseNames[phase], " runs ", reported.start, "..", reported.end,
                            ", its spans ", phase_start[phase], "..", phase_end[phase]);
      }
    }
  }
  const double makespan = any ? last_end - first_start : 0.0;
  if (result.compute_ops != total_ops) figure_problems.add("compute_ops ", result.compute_ops, " != ", total_ops);
  if (!tol.equal(result.total_busy, total_busy)) {
    figure_problems.add("total_busy ", result.total_busy, ", op costs sum to ", total_busy);
  }
  if (!tol.equal(result.makespan, makespan)) {
    figure_problems.add("makespan ", result.makespan, ", last end - first start = ", makespan);
  }
  if (makespan > 0) {
    const double capacity = p * makespan;
    const double bubble = 1.0 - total_busy / capacity;
    if (std::fabs(result.bubble_ratio - bubble) > 1e-9) {
      figure_problems.add("bubble_ratio ", result.bubble_ratio, ", 1 - busy/(p makespan) = ", bubble);
    }
    if (std::fabs(result.bubble_overhead - (capacity - total_busy) / total_busy) > 1e-9 * (1 + p)) {
      figure_problems.add("bubble_overhead ", result.bubble_overhead, " != (p makespan - busy)/busy");
    }
    for (int d = 0; d < p; ++d) {
      const DeviceFigures& figures = result.per_device[index(d)];
      if (!tol.equal(figures.idle, result.makespan - figures.busy) ||
          std::fabs(figures.bubble_ratio - figures.idle / result.makespan) > 1e-9) {
        figure_problems.add("device ", d, " idle ", figures.idle, " bubble_ratio ", figures.bubble_ratio);
      }
    }
  }
  figure_problems.report();
}

UniformCostModel unit_chunk_costs(double weight_stash_fraction) {
  UniformCosts costs;
  costs.forward = Duration{1};
  costs.backward = Duration{2};
  costs.weight = Duration{1};
  costs.weight_stash_fraction = weight_stash_fraction;
  costs.activation_bytes = ByteCount{1 << 20};
  return UniformCostModel(costs);
}

double most_stashed(const Result& result) {
  double peak = 0;
  for (const auto& device : result.per_device) peak = std::max(peak, device.peak_stashed);
  return peak;
}

UniformCosts slow_link_costs() {
  UniformCosts costs;
  costs.activation_bytes = ByteCount{1000};
  costs.static_bytes = ByteCount{7};
  costs.message_bytes = ByteCount{50};
  costs.bandwidth = Bandwidth{100};
  costs.latency = Duration{0.25};
  return costs;
}

Result run_checked(const Program& program, const CostModel& costs, CommMode comm) {
  Engine engine;
  EngineOptions options;
  options.comm = comm;
  options.record_timeline = true;
  SimulationOutcome outcome = engine.run(program, costs, options);
  INFO((outcome.deadlock ? outcome.deadlock->summary() : std::string("no deadlock")));
  REQUIRE(outcome.result.has_value());
  REQUIRE_FALSE(outcome.deadlock.has_value());
  check_invariants(program, costs, *outcome.result, comm);
  return std::move(*outcome.result);
}

}  // namespace ppsim
