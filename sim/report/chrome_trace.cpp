#include "sim/report/chrome_trace.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/report/format.hpp"
#include "sim/report/time_axis.hpp"

namespace ppsim {
namespace {

constexpr int kComputeThread = 1;
// Thread of the link from a device to device `dst`: kLinkThreadBase + dst, so they sort after compute.
constexpr int kLinkThreadBase = 2;

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

// Finds the span that ran an action, by (stage, micro-batch, direction): a forward, or the backward
// half (B or I) that sends a gradient. W sends nothing and is not indexed.
class SpanIndex {
 public:
  SpanIndex(const Timeline& timeline, int stages, int microbatches)
      : stages_(stages), microbatches_(microbatches), slots_(2 * static_cast<std::size_t>(stages) * microbatches, -1) {
    for (std::size_t i = 0; i < timeline.spans.size(); ++i) {
      const Span& span = timeline.spans[i];
      add(span.action, static_cast<std::int64_t>(i));
      if (span.action.fused_with_next) add(span.partner, static_cast<std::int64_t>(i));
    }
  }

  // The span of (stage, microbatch) forward or backward, or -1.
  std::int64_t find(int stage, int microbatch, bool forward) const {
    if (stage < 0 || stage >= stages_ || microbatch < 0 || microbatch >= microbatches_) return -1;
    return slots_[slot(stage, microbatch, forward)];
  }

 private:
  std::size_t slot(int stage, int microbatch, bool forward) const {
    return (static_cast<std::size_t>(stage) * static_cast<std::size_t>(microbatches_) +
            static_cast<std::size_t>(microbatch)) *
               2 +
           (forward ? 0 : 1);
  }
  void add(const Action& action, std::int64_t span) {
    const bool forward = action.op == Op::kForward;
    if (!forward && !is_backward_input(action.op)) return;
    if (action.stage < 0 || action.stage >= stages_ || action.microbatch < 0 || action.microbatch >= microbatches_) {
      return;
    }
    slots_[slot(action.stage, action.microbatch, forward)] = span;
  }

  int stages_;
  int microbatches_;
  std::vector<std::int64_t> slots_;
};

}  // namespace

double trace_microseconds_per_unit(const Report& report) { return times_in_seconds(report) ? 1e6 : 1; }

std::string render_chrome_trace(std::span<const Report> reports) {
  std::string out = "{\"traceEvents\":[\n";
  bool first = true;
  auto event = [&](const std::string& json) {
    if (!first) out += ",\n";
    out += json;
    first = false;
  };
  nlohmann::ordered_json schedules = nlohmann::ordered_json::array();
  int next_pid = 1;
  std::int64_t next_flow = 1;
  bool seconds = false;

  for (const Report& report : reports) {
    const double us = trace_microseconds_per_unit(report);
    seconds = seconds || times_in_seconds(report);
    auto ts = [&](double t) { return format_exact(t * us); };
    const int p = static_cast<int>(report.result.per_device.size());
    const int base = next_pid;
    next_pid += p;
    auto pid = [&](int device) { return std::to_string(base + device); };
    schedules.push_back(report.scenario.is_null() ? nlohmann::ordered_json{{"schedule", report.schedule}}
                                                  : report.scenario);

    // Names and order of the processes (devices) and threads (compute, then one per outgoing link).
    for (int d = 0; d < p; ++d) {
      event("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid(d) +
            ",\"tid\":0,\"args\":{\"name\":" + quoted(report.schedule + " d" + std::to_string(d)) + "}}");
      event("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + pid(d) +
            ",\"tid\":0,\"args\":{\"sort_index\":" + pid(d) + "}}");
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
                ",\"cat\":\"collective\",\"ph\":\"X\",\"pid\":" + pid(dev) + ",\"tid\":" + tid +
                ",\"ts\":" + ts(bucket.start) + ",\"dur\":" + ts(bucket.end - bucket.start) +
                ",\"args\":{\"parameters\":" + format_exact(bucket.parameters) + ",\"ready\":" + ts(bucket.ready) +
                "}}");
        };
        for (const BucketCollective& bucket : device.reduce) bucket_event(bucket, "reduce gradients");
        for (const BucketCollective& bucket : device.gather) bucket_event(bucket, "gather parameters (next step)");
      }
    }

    if (!report.result.timeline) continue;
    const Timeline& timeline = *report.result.timeline;

    // One complete event per op.
    for (const Span& span : timeline.spans) {
      event("{\"name\":\"" + op_name(span) + "\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":" + pid(span.device) +
            ",\"tid\":" + std::to_string(kComputeThread) + ",\"ts\":" + ts(span.start) +
            ",\"dur\":" + ts(span.end - span.start) + ",\"args\":" + op_args(span) + "}");
    }

    // Each message: the link's busy time on the sender's link thread, and a flow from the send to
    // the op that receives it. Flows bind to the slice enclosing their time ("bp":"e" for the end),
    // so both ends sit at a slice's midpoint; a send that takes no time (a free link) starts its
    // arrow at the op that produced the data instead.
    const SpanIndex index(timeline, report.program.num_stages(), report.params.m);
    for (const MessageSpan& message : timeline.messages) {
      const bool forward = message.from.op == Op::kForward;
      const std::string name = to_string(message.from);
      const std::string link_tid = std::to_string(kLinkThreadBase + message.dst);
      event("{\"name\":\"" + name + " to d" + std::to_string(message.dst) +
            "\",\"cat\":\"send\",\"ph\":\"X\",\"pid\":" + pid(message.src) + ",\"tid\":" + link_tid +
            ",\"ts\":" + ts(message.depart_start) + ",\"dur\":" + ts(message.depart_end - message.depart_start) +
            ",\"args\":{\"bytes\":" + std::to_string(message.bytes) + ",\"enqueued\":" + ts(message.enqueued) +
            ",\"arrival\":" + ts(message.arrival) + "}}");
      const std::int64_t consumer =
          index.find(message.from.stage + (forward ? 1 : -1), message.from.microbatch, forward);
      const std::int64_t producer = index.find(message.from.stage, message.from.microbatch, forward);
      if (consumer < 0) continue;
      const Span& to = timeline.spans[static_cast<std::size_t>(consumer)];
      std::string source_tid = link_tid;
      double source_time = (message.depart_start + message.depart_end) / 2;
      if (!(message.depart_end > message.depart_start)) {
        if (producer < 0) continue;
        const Span& from = timeline.spans[static_cast<std::size_t>(producer)];
        source_tid = std::to_string(kComputeThread);
        source_time = (from.start + from.end) / 2;
      }
      const std::string id = std::to_string(next_flow++);
      event("{\"name\":\"" + name + "\",\"cat\":\"message\",\"ph\":\"s\",\"id\":" + id +
            ",\"pid\":" + pid(message.src) + ",\"tid\":" + source_tid + ",\"ts\":" + ts(source_time) + "}");
      event("{\"name\":\"" + name + "\",\"cat\":\"message\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" + id +
            ",\"pid\":" + pid(to.device) + ",\"tid\":" + std::to_string(kComputeThread) +
            ",\"ts\":" + ts((to.start + to.end) / 2) + "}");
    }

    // Memory per device as a counter track: bytes (static + activations) and stashed micro-batches.
    for (const MemorySample& sample : timeline.memory) {
      event("{\"name\":\"memory\",\"ph\":\"C\",\"pid\":" + pid(sample.device) +
            ",\"tid\":" + std::to_string(kComputeThread) + ",\"ts\":" + ts(sample.time) + ",\"args\":{\"bytes\":" +
            std::to_string(sample.bytes) + ",\"stashed\":" + format_exact(sample.stashed) + "}}");
    }
  }

  nlohmann::ordered_json other;
  other["generator"] = "ppsim";
  other["time_unit"] = seconds ? "seconds, written in microseconds as the format expects"
                               : "abstract time units, written as 1 unit = 1 microsecond";
  other["schedules"] = std::move(schedules);
  out += "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":" +
         other.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n}\n";
  return out;
}

}  // namespace ppsim
