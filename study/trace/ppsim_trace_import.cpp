// SPDX-License-Identifier: Apache-2.0
// ppsim's own --trace (sim/report/chrome_trace.cpp) read back: each device's compute spans in the order
// they ran, with their stage, micro-batch and op from args, and each message's link time, latency and
// bytes from its send slice. A trace of several schedules (compare) holds one run per schedule, its
// processes named "<schedule> d<device>".

#include <algorithm>
#include <map>
#include <set>

#include "schedules/registry.hpp"
#include "sim/report/format.hpp"
#include "study/common/errors.hpp"
#include "study/trace/trace_import.hpp"

namespace ppsim {
namespace {

struct Span {
  int pid = 0;
  TracedItem item;
  std::uint64_t order = 0;
};

struct Send {
  int pid = 0;
  int dst = 0;
  TracedMessage message;
};

std::optional<int> integer(const std::string& text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

std::optional<Op> op_of(const std::string* letter) {
  if (letter == nullptr || letter->size() != 1) return std::nullopt;
  switch ((*letter)[0]) {
    case 'F':
      return Op::kForward;
    case 'B':
      return Op::kBackward;
    case 'I':
      return Op::kBackwardInput;
    case 'W':
      return Op::kBackwardWeight;
    default:
      return std::nullopt;
  }
}

class PpsimImporter final : public PpsimTraceCollector {
 public:
  PpsimImporter(std::string file, TraceReadOptions options) : file_(std::move(file)), options_(std::move(options)) {}

  void on_event(const ChromeEvent& event) override {
    if (event.ph == "M" && event.name == "process_name") {
      const std::optional<int> pid = integer(event.pid);
      const std::string* name = event.text("name");
      if (!pid || name == nullptr) return;
      const std::size_t at = name->rfind(" d");
      if (at == std::string::npos) return;
      const std::optional<int> device = integer(name->substr(at + 2));
      if (device) processes_[*pid] = {name->substr(0, at), *device};
      return;
    }
    if (event.ph != "X") return;
    if (event.cat == "compute") {
      compute(event);
    } else if (event.cat == "send") {
      send(event);
    }
  }

  void finish(const ChromeTraceHeader& header, TraceReading& out) override {
    if (spans_.empty()) return;
    const std::string file = excerpt(file_);
    // The run asked for: its processes.
    std::string schedule = options_.schedule;
    if (schedule.empty()) {
      if (processes_.empty()) throw InputError(file + ": ppsim compute slices without process names");
      schedule = processes_.begin()->second.first;  // the first run (lowest pid)
    }
    std::map<int, int> device_of_pid;
    std::set<std::string> names;
    for (const auto& [pid, process] : processes_) {
      names.insert(process.first);
      if (process.first == schedule) device_of_pid[pid] = process.second;
    }
    if (device_of_pid.empty()) {
      std::string known;
      std::size_t listed = 0;
      for (const std::string& name : names) {
        if (++listed > 5) {
          known += ", ...";
          break;
        }
        known += (known.empty() ? "" : ", ") + excerpt(name);
      }
      throw InputError("--schedule: " + file + " holds no run of '" + excerpt(schedule) + "' (it holds " + known + ")");
    }
    int devices = 0;
    for (const auto& [pid, device] : device_of_pid) {
      if (device < 0 || device >= 65536)
        throw InputError(file + ": process " + std::to_string(pid) + ": device out of range");
      devices = std::max(devices, device + 1);
    }
    TraceRun run;
    run.files = {file_};
    run.format = "ppsim --trace";
    run.schedule = schedule;
    run.unit_seconds = header.time_unit.starts_with("seconds") ? 1e-6 : 0;
    run.devices.resize(static_cast<std::size_t>(devices));
    int stages = 0;
    int microbatches = 0;
    std::vector<Span> kept;
    for (Span& span : spans_) {
      const auto device = device_of_pid.find(span.pid);
      if (device == device_of_pid.end()) continue;
      span.pid = device->second;
      for (const Action* a : {&span.item.action, &span.item.partner}) {
        stages = std::max(stages, a->stage + 1);
        microbatches = std::max(microbatches, a->microbatch + 1);
        if (a == &span.item.partner && !span.item.action.fused_with_next) break;
      }
      kept.push_back(std::move(span));
    }
    spans_.clear();
    // Spans are written in the order the engine recorded them (time order); a stable sort by start
    // keeps that order between ops of no duration.
    std::stable_sort(kept.begin(), kept.end(),
                     [](const Span& a, const Span& b) { return a.item.start < b.item.start; });
    run.stage_device.assign(static_cast<std::size_t>(stages), -1);
    for (Span& span : kept) {
      for (const Action* a : {&span.item.action, &span.item.partner}) {
        int& owner = run.stage_device[static_cast<std::size_t>(a->stage)];
        if (owner >= 0 && owner != span.pid) {
          throw InputError(file + ": stage " + std::to_string(a->stage) + " runs on devices " + std::to_string(owner) +
                           " and " + std::to_string(span.pid));
        }
        owner = span.pid;
        if (!span.item.action.fused_with_next) break;
      }
      run.devices[static_cast<std::size_t>(span.pid)].push_back(std::move(span.item));
    }
    for (int s = 0; s < stages; ++s) {
      if (run.stage_device[static_cast<std::size_t>(s)] < 0) {
        throw InputError(file + ": stage " + std::to_string(s) + " has no op, yet stage " + std::to_string(stages - 1) +
                         " has");
      }
    }
    run.num_microbatches = microbatches;
    // The pipelines of a program (DualPipe's two directions) are not in the spans; the schedule's
    // registry entry knows them.
    for (const ChromeTraceHeader::Run& given : header.runs) {
      if (given.schedule == schedule && (given.schedule == "seq1f1b" || given.sequence_splits.value_or(1) > 1)) {
        // Its ops are sequence slices of 1/k of a micro-batch; a calibration of them is not one of micro-batches.
        throw InputError(file + ": a " + given.schedule + " trace's ops are sequence slices, which ppsim trace does "
                         "not read yet; trace the same run with -s 1f1b to calibrate its costs");
      }
      const ScheduleInfo* info = find_schedule(given.schedule);
      if (given.schedule != schedule || info == nullptr || !info->generated() || !given.p || !given.m) continue;

      const double v = given.v.value_or(info->default_v);
      if (!(*given.p >= 1 && *given.p <= 65536 && *given.m >= 1 && *given.m <= 1e7 && v >= 1 && v <= 64 &&
            *given.p * v <= stages)) {
        continue;  // not the run the spans hold
      }
      ScheduleParams params;
      params.p = static_cast<int>(*given.p);
      params.m = static_cast<int>(*given.m);
      params.v = given.v ? static_cast<int>(*given.v) : info->default_v;
      try {
        const ScheduleStreams streams = info->streams(params);
        if (static_cast<int>(streams.stage_device.size()) == stages) run.num_pipelines = streams.num_pipelines;
      } catch (const std::exception&) {
        // The scenario does not build here (another version of ppsim): one pipeline, as read.
      }
      break;
    }
    if (stages % run.num_pipelines != 0) run.num_pipelines = 1;
    for (Send& send : sends_) {
      const auto src = device_of_pid.find(send.pid);
      if (src == device_of_pid.end()) continue;
      send.message.src = src->second;
      send.message.dst = send.dst;
      run.messages.push_back(send.message);
    }
    sends_.clear();
    check_trace_shape(run, file_);
    out.format = run.format;
    out.run = std::move(run);
  }

 private:
  void compute(const ChromeEvent& event) {
    const std::optional<int> pid = integer(event.pid);
    const std::optional<double> stage = event.number("stage");
    const std::optional<double> microbatch = event.number("microbatch");
    const std::string* op = event.text("op");
    auto refuse = [&](const std::string& why) {
      throw InputError(excerpt(file_) + ": byte " + std::to_string(event.position) + ": compute slice '" +
                       excerpt(event.name) + "': " + why);
    };
    if (!pid || !event.ts || !event.dur) refuse("needs pid, ts and dur");
    if (!stage || !microbatch || op == nullptr) refuse("needs args stage, microbatch and op");
    auto index = [&](double value, const char* what) {
      // Stages and devices are at most 65536: what a cluster holds, and what the replay sizes tables by.
      const double limit = std::string_view(what).find("stage") != std::string_view::npos ? 65536 : 1e7;
      if (!(value >= 0 && value < limit && value == static_cast<double>(static_cast<int>(value)))) {
        refuse(std::string(what) + " must be a count below " + (limit < 1e6 ? "65536" : "10000000") + ", got " +
               format_exact(value));
      }
      return static_cast<int>(value);
    };
    if (!(*event.dur >= 0)) refuse("dur must not be negative");
    Span span;
    span.pid = *pid;
    span.order = spans_.size();
    span.item.start = *event.ts;
    span.item.end = *event.ts + *event.dur;
    span.item.duration = *event.dur;
    if (*op == "F&B") {
      const std::optional<double> bstage = event.number("backward_stage");
      const std::optional<double> bmicro = event.number("backward_microbatch");
      const std::optional<Op> bop = op_of(event.text("backward_op"));
      if (!bstage || !bmicro || !bop) refuse("an F&B slice needs backward_stage, backward_microbatch and backward_op");
      span.item.action = Action(index(*stage, "stage"), Op::kForward, index(*microbatch, "microbatch"), true);
      span.item.partner = Action(index(*bstage, "backward_stage"), *bop, index(*bmicro, "backward_microbatch"));
    } else {
      const std::optional<Op> kind = op_of(op);
      if (!kind) refuse("op must be F, B, I, W or F&B, got '" + excerpt(*op) + "'");
      span.item.action = Action(index(*stage, "stage"), *kind, index(*microbatch, "microbatch"));
    }
    if (spans_.size() >= kMaxSpans) refuse("more than 50 M compute slices");
    spans_.push_back(std::move(span));
  }

  // "0F3 to d1": the message of 0F3 to device 1; times from ts, dur and args.arrival.
  void send(const ChromeEvent& event) {
    const std::optional<int> pid = integer(event.pid);
    const std::size_t to = event.name.rfind(" to d");
    if (!pid || !event.ts || !event.dur || to == std::string::npos) return;
    const std::optional<int> dst = integer(event.name.substr(to + 5));
    const ActionParse from = parse_action(std::string_view(event.name).substr(0, to));
    if (!dst || !from.ok) return;
    Send send;
    send.pid = *pid;
    send.dst = *dst;
    send.message.from = from.action;
    send.message.depart_start = *event.ts;
    send.message.depart_end = *event.ts + *event.dur;
    send.message.arrival = event.number("arrival").value_or(send.message.depart_end);
    if (const std::optional<double> bytes = event.number("bytes"); bytes && *bytes >= 0 && *bytes < 1e18) {
      send.message.bytes = static_cast<std::int64_t>(*bytes);
    }
    sends_.push_back(send);
  }

  static constexpr std::size_t kMaxSpans = 50'000'000;
  std::string file_;
  TraceReadOptions options_;
  std::map<int, std::pair<std::string, int>> processes_;  // pid -> (schedule, device)
  std::vector<Span> spans_;
  std::vector<Send> sends_;
};

}  // namespace

std::unique_ptr<PpsimTraceCollector> ppsim_trace_collector(const std::string& file, const TraceReadOptions& options) {
  return std::make_unique<PpsimImporter>(file, options);
}

}  // namespace ppsim
