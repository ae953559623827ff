// SPDX-License-Identifier: Apache-2.0
#include "sim/report/chrome_trace.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "sim/report/format.hpp"
#include "sim/report/spool_section.hpp"
#include "sim/report/time_axis.hpp"

namespace ppsim {
namespace {

constexpr int kComputeThread = 1;
// Thread of the link from a device to device `dst`: kLinkThreadBase + dst, so they sort after compute.
// After the links of p devices: the data-parallel collectives (kLinkThreadBase + p), then the expert
// all-to-alls (kLinkThreadBase + p + 1), which sort right after compute (their sort index).
constexpr int kLinkThreadBase = 2;

int exchange_thread(int devices) { return kLinkThreadBase + devices + 1; }

std::string exchange_name(const ExchangeSpan& exchange) {
  return std::string(ppsim::exchange_name(exchange.kind)) + " " + to_string(exchange.action) +
         (exchange.recomputed ? " (recomputed)" : "");
}

// Invalid UTF-8 (a path from the command line) becomes U+FFFD, as in the JSON reporter.
std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string op_name(const Span& span) {
  std::string name = to_string(span.action);
  if (span.action.fused_with_next) name += "+" + to_string(span.partner);
  return name;
}

std::string op_args(const Span& span) {
  const Action& a = span.action;
  std::string args = "{\"stage\":" + std::to_string(a.stage) + ",\"microbatch\":" + std::to_string(a.microbatch) +
                     ",\"op\":\"" + (a.fused_with_next ? std::string("F&B") : std::string(1, op_letter(a.op))) + "\"";
  if (a.fused_with_next) {
    const Action& b = span.partner;
    args += ",\"backward_stage\":" + std::to_string(b.stage) +
            ",\"backward_microbatch\":" + std::to_string(b.microbatch) + ",\"backward_op\":\"" +
            std::string(1, op_letter(b.op)) + "\"";
  }
  return args + "}";
}

}  // namespace

double trace_microseconds_per_unit(const Report& report) { return times_in_seconds(report) ? 1e6 : 1; }

// Every event of a run's sections follows its report's metadata, so each starts with the separator.
// Each message becomes the link's busy time on the sender's link thread and a flow arrow from the
// send to the op that receives it. The arrow's end is the receiving op, which the engine records
// after the message (it starts once the message has arrived): a message waits in `pending_`, in
// order, until its receiver's span comes, and the spans that a later message will need (as sender
// on a free link, or, when the records come spans first, as receiver) are kept until it does. So a
// streamed trace holds only what is in flight.
class ChromeTraceWriter::Run final : public TimelineSink {
 public:
  Run(ChromeTraceWriter& writer, const TimelineShape& shape, int base_pid)
      : writer_(writer),
        shape_(shape),
        base_pid_(base_pid),
        us_(shape.seconds ? 1e6 : 1),
        exchange_devices_(static_cast<std::size_t>(std::max(shape.num_devices, 0)), false) {}

  void on_span(const Span& span) override {
    spans_.item("{\"name\":\"" + op_name(span) + "\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":" + pid(span.device) +
                 ",\"tid\":" + std::to_string(kComputeThread) + ",\"ts\":" + ts(span.start) +
                 ",\"dur\":" + ts(span.end - span.start) + ",\"args\":" + op_args(span) + "}");
    note(span, span.action);
    if (span.action.fused_with_next) note(span, span.partner);
  }

  void on_message(const MessageSpan& message) override {
    const bool forward = message.from.op == Op::kForward;
    Pending pending;
    pending.name = to_string(message.from);
    pending.src = message.src;
    const std::string link_tid = std::to_string(kLinkThreadBase + message.dst);
    pending.send = "{\"name\":\"" + pending.name + " to d" + std::to_string(message.dst) +
                   "\",\"cat\":\"send\",\"ph\":\"X\",\"pid\":" + pid(message.src) + ",\"tid\":" + link_tid +
                   ",\"ts\":" + ts(message.depart_start) +
                   ",\"dur\":" + ts(message.depart_end - message.depart_start) +
                   ",\"args\":{\"bytes\":" + std::to_string(message.bytes) + ",\"enqueued\":" + ts(message.enqueued) +
                   ",\"arrival\":" + ts(message.arrival) + "}}";
    // The latency: an async slice from the moment the message has left the link to its arrival,
    // beside the link's busy slices (async, because one link's messages may be in flight together).
    if (message.arrival > message.depart_end) {
      const std::string id = std::to_string(writer_.next_flight_++);
      const std::string head = "{\"name\":\"" + pending.name + " in flight to d" + std::to_string(message.dst) +
                               "\",\"cat\":\"flight\",\"id\":" + id + ",\"pid\":" + pid(message.src) + ",\"tid\":" +
                               link_tid;
      pending.flight = head + ",\"ph\":\"b\",\"ts\":" + ts(message.depart_end) + "}";
      pending.landed = head + ",\"ph\":\"e\",\"ts\":" + ts(message.arrival) + "}";
    }
    // Flows bind to the slice enclosing their time ("bp":"e" for the end), so both ends sit at a
    // slice's midpoint; a send that takes no time (a free link) starts its arrow at the op that
    // produced the data instead.
    const std::optional<Kept> producer = take(key(message.from.stage, message.from.microbatch, forward));
    pending.source_tid = link_tid;
    pending.source_time = (message.depart_start + message.depart_end) / 2;
    if (!(message.depart_end > message.depart_start)) {
      if (producer) {
        pending.source_tid = std::to_string(kComputeThread);
        pending.source_time = (producer->start + producer->end) / 2;
      } else {
        pending.flows = false;
      }
    }
    const std::int64_t consumer = key(message.from.stage + (forward ? 1 : -1), message.from.microbatch, forward);
    if (const std::optional<Kept> receiver = pending.flows ? take(consumer) : std::nullopt) {
      pending.resolve(*receiver);
    } else if (pending.flows) {
      waiting_.emplace(consumer, first_pending_ + pending_.size());
    }
    pending_.push_back(std::move(pending));
    flush_resolved();
  }

  // An MoE layer's dispatch or combine, on the device's all-to-all thread.
  void on_exchange(const ExchangeSpan& exchange) override {
    const Action& a = exchange.action;
    exchanges_.item("{\"name\":\"" + exchange_name(exchange) + "\",\"cat\":\"all-to-all\",\"ph\":\"X\",\"pid\":" +
                    pid(exchange.device) + ",\"tid\":" + std::to_string(exchange_thread(devices())) +
                    ",\"ts\":" + ts(exchange.start) + ",\"dur\":" + ts(exchange.end - exchange.start) +
                    ",\"args\":{\"stage\":" + std::to_string(a.stage) + ",\"microbatch\":" +
                    std::to_string(a.microbatch) + ",\"op\":\"" + std::string(1, op_letter(a.op)) + "\"}}");
    if (exchange.device >= 0 && exchange.device < devices()) {
      exchange_devices_[static_cast<std::size_t>(exchange.device)] = true;
    }
  }
  // The devices whose all-to-all thread has slices, for its name.
  const std::vector<bool>& exchange_devices() const { return exchange_devices_; }

  // Two counter tracks, so that each has its own scale: bytes (GiB) would flatten stash counts.
  void on_memory(const MemorySample& sample) override {
    const std::string where = ",\"ph\":\"C\",\"pid\":" + pid(sample.device) + ",\"tid\":" +
                              std::to_string(kComputeThread) + ",\"ts\":" + ts(sample.time);
    memory_.item("{\"name\":\"memory bytes\"" + where + ",\"args\":{\"bytes\":" + std::to_string(sample.bytes) + "}}");
    memory_.item("{\"name\":\"stashed micro-batches\"" + where +
                  ",\"args\":{\"stashed\":" + format_exact(sample.stashed) + "}}");
  }

  // Messages whose receiver never ran (a run that did not finish) keep their send, without arrow.
  void finish(std::ostream& out) {
    for (Pending& pending : pending_) pending.flows = pending.flows && pending.resolved;
    for (Pending& pending : pending_) pending.resolved = true;
    flush_resolved();
    spans_.copy_to(out);
    exchanges_.copy_to(out);
    messages_.copy_to(out);
    memory_.copy_to(out);
  }

 private:
  // The times of a span that a message still needs.
  struct Kept {
    int device = 0;
    double start = 0;
    double end = 0;
    int uses = 0;
  };
  struct Pending {
    std::string name;
    std::string send;
    std::string flight;  // the in-flight slice's begin and end, when the link has latency
    std::string landed;
    int src = 0;
    std::string source_tid;
    double source_time = 0;
    bool flows = true;
    bool resolved = false;
    int to_device = 0;
    double to_time = 0;
    void resolve(const Kept& receiver) {
      resolved = true;
      to_device = receiver.device;
      to_time = (receiver.start + receiver.end) / 2;
    }
  };

  std::string ts(double t) const { return format_exact(t * us_); }
  std::string pid(int device) const { return std::to_string(base_pid_ + device); }
  int devices() const { return shape_.num_devices; }
  int stages() const { return static_cast<int>(shape_.stage_device.size()); }
  int device_of(int stage) const { return shape_.stage_device[static_cast<std::size_t>(stage)]; }
  // A forward, or the backward half (B or I) that sends a gradient; W sends nothing.
  std::int64_t key(int stage, int microbatch, bool forward) const {
    if (stage < 0 || stage >= stages() || microbatch < 0 || microbatch >= shape_.microbatches) return -1;
    return (static_cast<std::int64_t>(stage) * shape_.microbatches + microbatch) * 2 + (forward ? 0 : 1);
  }

  // What the span of `action` is to the messages around it.
  void note(const Span& span, const Action& action) {
    const bool forward = action.op == Op::kForward;
    if (!forward && !is_backward_input(action.op)) return;
    const std::int64_t k = key(action.stage, action.microbatch, forward);
    if (k < 0) return;
    const int here = device_of(action.stage);
    const int from_stage = action.stage + (forward ? -1 : 1);  // whose output it receives
    const int to_stage = action.stage + (forward ? 1 : -1);    // to whom it sends
    int uses = 0;
    if (from_stage >= 0 && from_stage < stages() && device_of(from_stage) != here) {
      const auto waiting = waiting_.find(k);
      if (waiting != waiting_.end()) {
        pending_[static_cast<std::size_t>(waiting->second - first_pending_)].resolve({span.device, span.start, span.end});
        waiting_.erase(waiting);
      } else {
        ++uses;  // its message is still to come (records given spans first)
      }
    }
    if (to_stage >= 0 && to_stage < stages() && device_of(to_stage) != here) ++uses;
    if (uses > 0) kept_[k] = Kept{span.device, span.start, span.end, uses};
    flush_resolved();
  }

  std::optional<Kept> take(std::int64_t k) {
    const auto found = kept_.find(k);
    if (found == kept_.end()) return std::nullopt;
    const Kept kept = found->second;
    if (--found->second.uses == 0) kept_.erase(found);
    return kept;
  }

  // Writes the messages at the front of the queue whose arrows are known, in the order they came.
  void flush_resolved() {
    while (!pending_.empty() && (pending_.front().resolved || !pending_.front().flows)) {
      const Pending& pending = pending_.front();
      messages_.item(pending.send);
      if (!pending.flight.empty()) {
        messages_.item(pending.flight);
        messages_.item(pending.landed);
      }
      if (pending.flows && pending.resolved) {
        const std::string id = std::to_string(writer_.next_flow_++);
        messages_.item("{\"name\":\"" + pending.name + "\",\"cat\":\"message\",\"ph\":\"s\",\"id\":" + id +
                        ",\"pid\":" + pid(pending.src) + ",\"tid\":" + pending.source_tid +
                        ",\"ts\":" + ts(pending.source_time) + "}");
        messages_.item("{\"name\":\"" + pending.name + "\",\"cat\":\"message\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" +
                        id + ",\"pid\":" + pid(pending.to_device) + ",\"tid\":" + std::to_string(kComputeThread) +
                        ",\"ts\":" + ts(pending.to_time) + "}");
      }
      pending_.pop_front();
      ++first_pending_;
    }
  }

  ChromeTraceWriter& writer_;
  TimelineShape shape_;
  int base_pid_;
  double us_;
  SpoolSection spans_;
  SpoolSection messages_;
  SpoolSection memory_;
  SpoolSection exchanges_;
  std::vector<bool> exchange_devices_;
  std::unordered_map<std::int64_t, Kept> kept_;
  std::deque<Pending> pending_;
  std::int64_t first_pending_ = 0;                      // index of pending_.front() since the run began
  std::unordered_map<std::int64_t, std::int64_t> waiting_;  // receiver's key -> its message's index
};

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out) : out_(out) { out_ << "{\"traceEvents\":[\n"; }

ChromeTraceWriter::~ChromeTraceWriter() = default;

TimelineSink& ChromeTraceWriter::begin(const TimelineShape& shape) {
  run_ = std::make_unique<Run>(*this, shape, next_pid_);
  return *run_;
}

void ChromeTraceWriter::event(const std::string& json) {
  if (!first_) out_ << ",\n";
  out_ << json;
  first_ = false;
}

void ChromeTraceWriter::end(Report& report) { end(static_cast<const Report&>(report)); }

void ChromeTraceWriter::end(const Report& report) {
  const double us = trace_microseconds_per_unit(report);
  seconds_ = seconds_ || times_in_seconds(report);
  auto ts = [&](double t) { return format_exact(t * us); };
  const int p = static_cast<int>(report.result.per_device.size());
  const int base = next_pid_;
  next_pid_ += p;
  auto pid = [&](int device) { return std::to_string(base + device); };
  schedules_.push_back(report.scenario.is_null() ? nlohmann::ordered_json{{"schedule", report.schedule}}
                                                 : report.scenario);

  // Names and order of the processes (devices) and threads (compute, then one per outgoing link).
  for (int d = 0; d < p; ++d) {
    event("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid(d) +
          ",\"tid\":0,\"args\":{\"name\":" + quoted(report.schedule + " d" + std::to_string(d)) + "}}");
    event("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + pid(d) + ",\"tid\":0,\"args\":{\"sort_index\":" +
          pid(d) + "}}");
    event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid(d) + ",\"tid\":" + std::to_string(kComputeThread) +
          ",\"args\":{\"name\":\"compute\"}}");
  }
  for (const LinkFigures& link : report.result.per_link) {
    if (link.messages == 0 || link.src < 0 || link.src >= p) continue;
    const std::string tid = std::to_string(kLinkThreadBase + link.dst);
    event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid(link.src) + ",\"tid\":" + tid +
          ",\"args\":{\"name\":\"send to d" + std::to_string(link.dst) + "\"}}");
    event("{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":" + pid(link.src) + ",\"tid\":" + tid +
          ",\"args\":{\"sort_index\":" + tid + "}}");
  }
  // A transformer study's data-parallel collectives, on a communication thread of each device
  // after its link threads: the gradient buckets' reductions, and the next step's parameter
  // all-gathers when they overlap its forwards (drawn from this step's start, where they run).
  if (report.training) {
    const std::string tid = std::to_string(kLinkThreadBase + p);
    for (std::size_t d = 0; d < report.training->collectives.size() && static_cast<int>(d) < p; ++d) {
      const DeviceCollectives& device = report.training->collectives[d];
      if (device.reduce.empty() && device.gather.empty()) continue;
      const int dev = static_cast<int>(d);
      event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid(dev) + ",\"tid\":" + tid +
            ",\"args\":{\"name\":\"data-parallel\"}}");
      event("{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":" + pid(dev) + ",\"tid\":" + tid +
            ",\"args\":{\"sort_index\":" + tid + "}}");
      auto bucket_event = [&](const BucketCollective& bucket, const std::string& name) {
        event("{\"name\":" + quoted(name + " s" + std::to_string(bucket.stage)) +
              ",\"cat\":\"collective\",\"ph\":\"X\",\"pid\":" + pid(dev) + ",\"tid\":" + tid + ",\"ts\":" +
              ts(bucket.start) + ",\"dur\":" + ts(bucket.end - bucket.start) + ",\"args\":{\"parameters\":" +
              format_exact(bucket.parameters) + ",\"ready\":" + ts(bucket.ready) + "}}");
      };
      for (const BucketCollective& bucket : device.reduce) bucket_event(bucket, "reduce gradients");
      for (const BucketCollective& bucket : device.gather) bucket_event(bucket, "gather parameters (next step)");
    }
  }
  if (run_) {
    const std::vector<bool>& exchanges = run_->exchange_devices();
    const std::string tid = std::to_string(exchange_thread(p));
    for (int d = 0; d < p && static_cast<std::size_t>(d) < exchanges.size(); ++d) {
      if (!exchanges[static_cast<std::size_t>(d)]) continue;
      event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid(d) + ",\"tid\":" + tid +
            ",\"args\":{\"name\":\"expert all-to-all\"}}");
      event("{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":" + pid(d) + ",\"tid\":" + tid +
            ",\"args\":{\"sort_index\":" + std::to_string(kComputeThread) + "}}");
    }
    run_->finish(out_);
    run_.reset();
  }
}

void ChromeTraceWriter::finish() {
  nlohmann::ordered_json other;
  other["generator"] = "ppsim";
  other["time_unit"] = seconds_ ? "seconds, written in microseconds as the format expects"
                                : "abstract time units, written as 1 unit = 1 microsecond";
  other["schedules"] = std::move(schedules_);
  out_ << "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":"
       << other.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n}\n";
}

std::string render_chrome_trace(std::span<const Report> reports) {
  std::ostringstream out;
  ChromeTraceWriter writer(out);
  for (const Report& report : reports) {
    if (report.result.timeline) {
      // Spans first, then messages: every receiver is known when its message comes.
      // The program's micro-batches key its messages: Seq1F1B's are its mk slices.
      const int microbatches = std::max(report.params.m, report.program.num_microbatches);
      TimelineSink& sink = writer.begin({report.program.stage_device, microbatches, times_in_seconds(report),
                                         static_cast<int>(report.result.per_device.size())});
      for (const Span& span : report.result.timeline->spans) sink.on_span(span);
      for (const ExchangeSpan& exchange : report.result.timeline->exchanges) sink.on_exchange(exchange);
      for (const MessageSpan& message : report.result.timeline->messages) sink.on_message(message);
      for (const MemorySample& sample : report.result.timeline->memory) sink.on_memory(sample);
    }
    writer.end(report);
  }
  writer.finish();
  return out.str();
}

}  // namespace ppsim
