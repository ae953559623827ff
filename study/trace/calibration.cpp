// SPDX-License-Identifier: Apache-2.0
#include "study/trace/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "schedules/registry.hpp"
#include "study/common/errors.hpp"

namespace ppsim {
namespace {

// 1.4826 x the median absolute deviation of x / median - 1: the coefficient of variation of a
// normal sample, unmoved by a few outliers (one slow op in a hundred).
double robust_spread(const std::vector<double>& values, double median) {
  if (values.size() < 2 || !(median > 0)) return 0;
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double x : values) deviations.push_back(std::fabs(x / median - 1));
  return 1.4826 * median_of(std::move(deviations));
}

OpMeasure measure(const std::vector<double>& values) {
  OpMeasure m;
  m.median = median_of(values);
  m.spread = robust_spread(values, m.median);
  m.count = static_cast<std::int64_t>(values.size());
  return m;
}

const char* const kOpKeys[kNumOps] = {"F", "B", "I", "W"};

// Each stage's value of `op`, or where a stage lacks it, the median of the stages that have it.
std::vector<double> per_stage(const Calibration& c, Op op) {
  std::vector<double> values;
  std::vector<double> known;
  for (const auto& stage : c.stages) {
    if (stage[static_cast<std::size_t>(op)]) known.push_back(stage[static_cast<std::size_t>(op)]->median);
  }
  const double fallback = median_of(known);
  for (const auto& stage : c.stages) {
    values.push_back(stage[static_cast<std::size_t>(op)] ? stage[static_cast<std::size_t>(op)]->median : fallback);
  }
  return values;
}

bool has(const Calibration& c, Op op) {
  return std::any_of(c.stages.begin(), c.stages.end(),
                     [&](const auto& s) { return s[static_cast<std::size_t>(op)].has_value(); });
}

}  // namespace

std::vector<double> Calibration::forward() const { return per_stage(*this, Op::kForward); }

std::vector<double> Calibration::backward() const {
  std::vector<double> whole = per_stage(*this, Op::kBackward);
  const bool split = has(*this, Op::kBackwardInput) && has(*this, Op::kBackwardWeight);
  const std::vector<double> input = per_stage(*this, Op::kBackwardInput);
  const std::vector<double> weight = per_stage(*this, Op::kBackwardWeight);
  for (std::size_t s = 0; s < stages.size(); ++s) {
    // A stage that ran B whole gives B; one that ran it split, I + W.
    if (!stages[s][static_cast<std::size_t>(Op::kBackward)] && split) whole[s] = input[s] + weight[s];
  }
  return whole;
}

std::vector<double> Calibration::weight() const {
  if (!has(*this, Op::kBackwardWeight)) return {};
  return per_stage(*this, Op::kBackwardWeight);
}

std::string Calibration::source() const {
  std::string text = "measured from ";
  for (std::size_t i = 0; i < files.size() && i < 4; ++i) text += (i == 0 ? "" : ", ") + files[i];
  if (files.size() > 4) text += " and " + std::to_string(files.size() - 4) + " more";
  return text + " (" + format + ")";
}

Calibration calibrate_trace(const TraceRun& run) {
  Calibration c;
  c.files = run.files;
  c.format = run.format;
  c.seconds = run.unit_seconds > 0;
  const double unit = c.seconds ? run.unit_seconds : 1.0;
  c.schedule = run.schedule;
  c.p = run.num_devices();
  c.m = run.num_microbatches;
  const int per_pipeline = run.num_stages() / std::max(1, run.num_pipelines);
  c.v = std::max(1, per_pipeline / std::max(1, c.p));
  const PipelineShape shape{run.num_stages(), run.num_pipelines};
  std::vector<std::array<std::vector<double>, kNumOps>> samples(static_cast<std::size_t>(per_pipeline));
  std::vector<double> pairs;
  for (const auto& items : run.devices) {
    for (const TracedItem& item : items) {
      if (!item.compute()) continue;
      if (item.action.fused_with_next) {
        pairs.push_back(item.duration * unit);
        continue;
      }
      samples[static_cast<std::size_t>(shape.logical(item.action.stage))][static_cast<std::size_t>(item.action.op)]
          .push_back(item.duration * unit);
    }
  }
  c.stages.resize(samples.size());
  std::array<std::vector<double>, kNumOps> relative;
  for (std::size_t s = 0; s < samples.size(); ++s) {
    for (int op = 0; op < kNumOps; ++op) {
      const auto& values = samples[s][static_cast<std::size_t>(op)];
      if (values.empty()) continue;
      c.stages[s][static_cast<std::size_t>(op)] = measure(values);
      const double median = c.stages[s][static_cast<std::size_t>(op)]->median;
      if (median > 0) {
        for (double x : values) relative[static_cast<std::size_t>(op)].push_back(std::fabs(x / median - 1));
      }
    }
    if (!c.stages[s][static_cast<std::size_t>(Op::kForward)]) {
      c.notes.push_back("stage " + std::to_string(s) + " ran no forward alone: its F is the other stages' median");
    }
  }
  for (int op = 0; op < kNumOps; ++op) {
    if (relative[static_cast<std::size_t>(op)].size() > 1) {
      c.jitter[static_cast<std::size_t>(op)] = 1.4826 * median_of(relative[static_cast<std::size_t>(op)]);
    }
  }
  if (!pairs.empty()) c.overlap = measure(pairs);
  if (!has(c, Op::kForward) ||
      !(has(c, Op::kBackward) || (has(c, Op::kBackwardInput) && has(c, Op::kBackwardWeight)))) {
    throw InputError(excerpt(run.files.empty() ? std::string("trace") : run.files.front()) +
                     ": no forward, or no backward, ran alone on any stage: nothing to measure its time from");
  }
  if (has(c, Op::kBackward) && !has(c, Op::kBackwardWeight)) {
    c.notes.push_back(
        "the run did not split B into I and W: W is B/2 where a schedule needs it (the zero-bubble "
        "paper's T_W ~ T_B/2)");
  }
  // Links: ppsim's own trace says how long each message held its link and when it arrived; a
  // profiler trace only when it left (SEND) and arrived (RECV).
  const bool link_times = run.format == "ppsim --trace";
  std::vector<double> latency;
  std::vector<double> bandwidth;
  std::vector<double> bytes;
  for (const TracedMessage& message : run.messages) {
    const double link = message.depart_end - message.depart_start;
    const double after = message.arrival - (link_times ? message.depart_end : message.depart_start);
    latency.push_back(std::max(0.0, after) * unit);
    if (message.bytes >= 0) bytes.push_back(static_cast<double>(message.bytes));
    if (link_times && message.bytes > 0 && link > 0)
      bandwidth.push_back(static_cast<double>(message.bytes) / (link * unit));
  }
  if (!latency.empty()) c.latency = measure(latency);
  if (!bandwidth.empty()) c.bandwidth = median_of(bandwidth);
  if (!bytes.empty()) c.message_bytes = static_cast<std::int64_t>(std::llround(median_of(bytes)));
  if (run.messages.empty() && run.num_devices() > 1) {
    c.notes.push_back("no messages recorded: links cost nothing in predictions");
  } else if (!link_times && !run.messages.empty()) {
    c.notes.push_back(
        "a message's time from its SEND to its RECV's end is taken as its latency (a profiler trace "
        "records no link time)");
  }
  c.measured_step = (run.step_end() - run.step_start()) * unit;
  return c;
}

namespace {

const TimerValue* timer(const TimerBlock& block, const char* name) {
  const auto found = block.timers.find(name);
  return found == block.timers.end() ? nullptr : &found->second;
}

[[noreturn]] void refuse(const std::string& flag, const std::string& why) { throw InputError(flag + ": " + why); }

// Device d's stages in order (its chunks), for the schedule that ran: V-shaped schedules hold stages d
// and 2p-1-d, the rest d, d+p, ...
std::vector<std::vector<int>> chunks_of(const TimerHints& hints, int p, int v) {
  std::vector<std::vector<int>> chunks(static_cast<std::size_t>(p));
  const ScheduleInfo* info = hints.schedule.empty() ? nullptr : resolve_schedule(hints.schedule);
  std::vector<int> placement;
  if (info != nullptr && info->generated()) {
    try {
      ScheduleParams params{p, std::max(hints.m, 2 * p), v};
      placement = info->streams(params).stage_device;
    } catch (const std::exception&) {
      placement.clear();
    }
  }
  if (static_cast<int>(placement.size()) != p * v) placement = loop_stage_mapping(p, v);
  for (int s = 0; s < p * v; ++s) chunks[static_cast<std::size_t>(placement[static_cast<std::size_t>(s)])].push_back(s);
  return chunks;
}

}  // namespace

Calibration calibrate_timers(const TimerLog& log, const TimerHints& hints) {
  if (hints.p < 0 || hints.p > 65536) refuse("-p", "must be from 1 to 65536, got " + std::to_string(hints.p));
  if (hints.m < 0 || hints.m > 10'000'000) refuse("-m", "must be from 1 to 10000000, got " + std::to_string(hints.m));
  if (hints.v < 0 || hints.v > 64) refuse("-v", "must be from 1 to 64, got " + std::to_string(hints.v));
  if (static_cast<std::int64_t>(std::max(hints.p, 1)) * std::max(hints.v, 1) > 65536)
    refuse("-v", "p * v must be at most 65536 stages");
  Calibration c;
  c.files = {log.file};
  c.seconds = true;
  c.schedule = hints.schedule;
  c.m = hints.m;
  if (!log.zero_bubble.empty()) {
    c.format = "zero-bubble profiling conclusion";
    std::vector<ZeroBubbleProfile> ranks = log.zero_bubble;
    std::sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    const int count = static_cast<int>(ranks.size());
    const int p = hints.p > 0 ? hints.p : count;
    if (count % p != 0)
      refuse("-p", std::to_string(count) + " ranks printed a profile, not a multiple of p=" + std::to_string(p));
    const int v = static_cast<int>(ranks.front().forward.size());
    if (v > 64 || count > 65536) refuse(excerpt(log.file), "more than 64 chunks or 65536 ranks in the profile");
    for (const ZeroBubbleProfile& r : ranks) {
      if (static_cast<int>(r.forward.size()) != v)
        refuse(excerpt(log.file), "ranks profile different numbers of chunks");
    }
    if (hints.v > 0 && hints.v != v)
      refuse("-v", "the profile has " + std::to_string(v) + " chunks per rank, not " + std::to_string(hints.v));
    c.p = p;
    c.v = v;
    c.stages.resize(static_cast<std::size_t>(p * v));
    const auto chunks = chunks_of(hints, p, v);
    const int group = count / p;
    std::vector<double> comm;
    for (int d = 0; d < p; ++d) {
      for (int k = 0; k < v; ++k) {
        std::array<std::vector<double>, kNumOps> values;
        for (int g = 0; g < group; ++g) {
          const ZeroBubbleProfile& r = ranks[static_cast<std::size_t>(d * group + g)];
          values[static_cast<std::size_t>(Op::kForward)].push_back(r.forward[static_cast<std::size_t>(k)] * 1e-6);
          values[static_cast<std::size_t>(Op::kBackwardInput)].push_back(r.backward[static_cast<std::size_t>(k)] *
                                                                         1e-6);
          values[static_cast<std::size_t>(Op::kBackwardWeight)].push_back(r.weight[static_cast<std::size_t>(k)] * 1e-6);
        }
        auto& stage =
            c.stages[static_cast<std::size_t>(chunks[static_cast<std::size_t>(d)][static_cast<std::size_t>(k)])];
        for (Op op : {Op::kForward, Op::kBackwardInput, Op::kBackwardWeight})
          stage[static_cast<std::size_t>(op)] = measure(values[static_cast<std::size_t>(op)]);
      }
      comm.push_back(ranks[static_cast<std::size_t>(d * group)].communication * 1e-6);
    }
    c.latency = measure(comm);
    c.notes.push_back(
        "the zero-bubble runtime's averages per chunk (its B is the input gradient, ppsim's I); its "
        "communication time is taken as each message's latency");
    if (group > 1)
      c.notes.push_back(std::to_string(group) + " ranks per stage, averaged (rank r on stage r / " +
                        std::to_string(group) + ")");
    return c;
  }

  c.format = "Megatron-LM timer log";
  std::vector<const TimerBlock*> usable;
  for (const TimerBlock& block : log.blocks) {
    if (timer(block, "forward-compute") != nullptr && timer(block, "backward-compute") != nullptr)
      usable.push_back(&block);
  }
  if (usable.empty()) {
    throw InputError(excerpt(log.file) +
                     ": no timer block with forward-compute and backward-compute: run with "
                     "--timing-log-level 2");
  }
  if (hints.step >= static_cast<int>(usable.size())) {
    refuse("--step", std::to_string(hints.step) + " is beyond the " + std::to_string(usable.size()) +
                         " timer blocks (counted from 0)");
  }
  const TimerBlock& block = *usable[hints.step >= 0 ? static_cast<std::size_t>(hints.step) : usable.size() - 1];
  if (hints.m <= 0) {
    refuse("-m",
           "a Megatron-LM timer log does not say how many micro-batches ran: give -m (global batch / (micro-batch "
           "size x data-parallel size))");
  }
  if (hints.p <= 0) refuse("-p", "a Megatron-LM timer log does not say how many pipeline stages ran: give -p");
  const int p = hints.p;
  const int v = std::max(1, hints.v);
  c.p = p;
  c.v = v;
  c.stages.resize(static_cast<std::size_t>(p * v));
  const auto chunks = chunks_of(hints, p, v);
  const double per_op = 1e-3 / (static_cast<double>(hints.m) * v);  // ms over every micro-batch and chunk
  for (Op op : {Op::kForward, Op::kBackward}) {
    const TimerValue& value = *timer(block, op == Op::kForward ? "forward-compute" : "backward-compute");
    std::vector<std::vector<double>> by_device(static_cast<std::size_t>(p));
    if (!value.ranks.empty()) {
      // Megatron's default rank order puts the pipeline outermost (parallel_state, order
      // "tp-cp-ep-dp-pp"): rank r is on stage r / (world / p).
      const int world = value.ranks.rbegin()->first + 1;
      if (world % p != 0)
        refuse("-p", "the log's " + std::to_string(world) + " ranks are not a multiple of p=" + std::to_string(p));
      for (const auto& [rank, ms] : value.ranks)
        by_device[static_cast<std::size_t>(rank / (world / p))].push_back(ms * per_op);
    } else {
      const double ms = value.min ? (*value.min + *value.max) / 2 : *value.max;
      for (auto& device : by_device) device.push_back(ms * per_op);
    }
    for (int d = 0; d < p; ++d) {
      if (by_device[static_cast<std::size_t>(d)].empty()) continue;
      OpMeasure m = measure(by_device[static_cast<std::size_t>(d)]);
      if (value.ranks.empty() && value.min && *value.max > 0)
        m.spread = (*value.max - *value.min) / (*value.max + *value.min);
      for (int stage : chunks[static_cast<std::size_t>(d)])
        c.stages[static_cast<std::size_t>(stage)][static_cast<std::size_t>(op)] = m;
    }
    if (value.ranks.empty()) {
      c.notes.push_back(std::string(op == Op::kForward ? "forward-compute" : "backward-compute") +
                        (value.min
                             ? ": the mean of min and max across ranks on every stage (--timing-log-option all "
                               "gives each rank's)"
                             : ": the slowest rank's on every stage (--timing-log-option all gives each rank's)"));
    }
  }
  c.notes.push_back(
      "per micro-batch: each timer over m=" + std::to_string(hints.m) + (v > 1 ? " and v=" + std::to_string(v) : "") +
      "; W is B/2 where a schedule needs it; links are not measured (Megatron's p2p timers include waiting "
      "for the peer)");
  if (const TimerValue* step = timer(block, "forward-backward")) {
    double slowest = step->max.value_or(0);
    for (const auto& [rank, ms] : step->ranks) slowest = std::max(slowest, ms);
    c.measured_step = slowest * 1e-3;  // the pipeline's step is its slowest rank's
  }
  if (block.iteration >= 0) c.notes.push_back("the timer block of iteration " + std::to_string(block.iteration));
  return c;
}

std::vector<double> resample_stages(const std::vector<double>& costs, int stages) {
  const int from = static_cast<int>(costs.size());
  if (from == stages || from == 0) return costs;
  std::vector<double> out(static_cast<std::size_t>(stages), 0);
  for (int k = 0; k < stages; ++k) {
    // Stage k covers [k, k+1) * from / stages of the measured stages' depth.
    const double a = static_cast<double>(k) * from / stages;
    const double b = static_cast<double>(k + 1) * from / stages;
    for (int s = static_cast<int>(std::floor(a)); s < from && s < b; ++s) {
      const double overlap = std::min(b, s + 1.0) - std::max(a, static_cast<double>(s));
      if (overlap > 0) out[static_cast<std::size_t>(k)] += costs[static_cast<std::size_t>(s)] * overlap;
    }
  }
  return out;
}

namespace {

nlohmann::ordered_json measure_json(const OpMeasure& m) {
  return {{"median", m.median}, {"spread", m.spread}, {"count", m.count}};
}

[[noreturn]] void bad(const std::string& file, const std::string& path, const std::string& why) {
  throw InputError(excerpt(file) + ": " + path + ": " + why);
}

double time_at(const nlohmann::json& j, const std::string& file, const std::string& path) {
  if (!j.is_number() || !std::isfinite(j.get<double>()) || j.get<double>() < 0 || j.get<double>() > 1e15) {
    bad(file, path, "must be a number from 0 to 1e15");
  }
  return j.get<double>();
}

OpMeasure measure_from(const nlohmann::json& j, const std::string& file, const std::string& path) {
  if (!j.is_object()) bad(file, path, "must be an object with median, spread and count");
  OpMeasure m;
  for (const char* key : {"median", "spread", "count"}) {
    if (!j.contains(key)) bad(file, path, std::string("needs ") + key);
  }
  m.median = time_at(j["median"], file, path + ".median");
  m.spread = time_at(j["spread"], file, path + ".spread");
  const double count = time_at(j["count"], file, path + ".count");
  m.count = static_cast<std::int64_t>(count);
  return m;
}

int count_at(const nlohmann::json& j, const char* key, const std::string& file, int low) {
  if (!j.contains(key)) return 0;
  const nlohmann::json& value = j[key];
  if (!value.is_number_integer() || value.get<std::int64_t>() < low || value.get<std::int64_t>() > 10'000'000) {
    bad(file, std::string("$.") + key, "must be a whole number from " + std::to_string(low) + " to 10000000");
  }
  return static_cast<int>(value.get<std::int64_t>());
}

}  // namespace

bool is_calibration_json(const nlohmann::json& json) { return json.is_object() && json.contains("ppsim-calibration"); }

nlohmann::ordered_json calibration_json(const Calibration& c) {
  nlohmann::ordered_json out;
  out["ppsim-calibration"] = 1;
  out["measured from"] = c.files;
  out["format"] = c.format;
  out["time unit"] = c.seconds ? "s" : "abstract";
  if (!c.schedule.empty()) out["schedule"] = c.schedule;
  out["p"] = c.p;
  out["m"] = c.m;
  out["v"] = c.v;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const auto& stage : c.stages) {
    nlohmann::ordered_json s = nlohmann::ordered_json::object();
    for (int op = 0; op < kNumOps; ++op) {
      if (stage[static_cast<std::size_t>(op)]) s[kOpKeys[op]] = measure_json(*stage[static_cast<std::size_t>(op)]);
    }
    stages.push_back(std::move(s));
  }
  out["stages"] = std::move(stages);
  if (c.overlap) out["overlap"] = measure_json(*c.overlap);
  if (c.latency) out["latency"] = measure_json(*c.latency);
  if (c.bandwidth) out["bandwidth"] = *c.bandwidth;
  if (c.message_bytes) out["message-bytes"] = *c.message_bytes;
  nlohmann::ordered_json jitter = nlohmann::ordered_json::object();
  for (int op = 0; op < kNumOps; ++op) jitter[kOpKeys[op]] = c.jitter[static_cast<std::size_t>(op)];
  out["jitter"] = std::move(jitter);
  if (c.measured_step) out["measured step"] = *c.measured_step;
  out["notes"] = c.notes;
  return out;
}

Calibration calibration_from_json(const nlohmann::json& json, const std::string& file) {
  if (!is_calibration_json(json)) bad(file, "$", "not a ppsim calibration (ppsim trace --calibrate writes one)");
  if (json["ppsim-calibration"] != 1) bad(file, "$.ppsim-calibration", "must be 1 (this ppsim's version of the file)");
  Calibration c;
  if (json.contains("measured from") && json["measured from"].is_array()) {
    for (const auto& f : json["measured from"]) {
      if (f.is_string()) c.files.push_back(f.get<std::string>().substr(0, 4096));
    }
  }
  if (json.contains("format") && json["format"].is_string())
    c.format = json["format"].get<std::string>().substr(0, 256);
  if (json.contains("time unit")) {
    const nlohmann::json& unit = json["time unit"];
    if (unit != "s" && unit != "abstract") bad(file, "$.time unit", "must be \"s\" or \"abstract\"");
    c.seconds = unit == "s";
  }
  if (json.contains("schedule") && json["schedule"].is_string())
    c.schedule = json["schedule"].get<std::string>().substr(0, 256);
  c.p = count_at(json, "p", file, 1);
  c.m = count_at(json, "m", file, 1);
  c.v = std::max(1, count_at(json, "v", file, 1));
  if (!json.contains("stages") || !json["stages"].is_array() || json["stages"].empty() ||
      json["stages"].size() > 65536) {
    bad(file, "$.stages", "must be a list of 1 to 65536 stages");
  }
  const nlohmann::json& stages = json["stages"];
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const std::string path = "$.stages[" + std::to_string(s) + "]";
    if (!stages[s].is_object()) bad(file, path, "must be an object of F, B, I and W");
    std::array<std::optional<OpMeasure>, kNumOps> stage;
    for (const auto& item : stages[s].items()) {
      const auto* key =
          std::find_if(std::begin(kOpKeys), std::end(kOpKeys), [&](const char* k) { return item.key() == k; });
      if (key == std::end(kOpKeys)) bad(file, path + "." + excerpt(item.key()), "is not F, B, I or W");
      stage[static_cast<std::size_t>(key - std::begin(kOpKeys))] =
          measure_from(item.value(), file, path + "." + item.key());
    }
    c.stages.push_back(stage);
  }
  // A stage may lack an op (it ran only overlapped pairs): it takes the other stages' median.
  if (!has(c, Op::kForward) ||
      !(has(c, Op::kBackward) || (has(c, Op::kBackwardInput) && has(c, Op::kBackwardWeight)))) {
    bad(file, "$.stages", "needs F on some stage, and B, or I and W, on some stage");
  }
  if (json.contains("overlap")) c.overlap = measure_from(json["overlap"], file, "$.overlap");
  if (json.contains("latency")) c.latency = measure_from(json["latency"], file, "$.latency");
  if (json.contains("bandwidth")) {
    const double bandwidth = time_at(json["bandwidth"], file, "$.bandwidth");
    if (!(bandwidth > 0)) bad(file, "$.bandwidth", "must be > 0");
    c.bandwidth = bandwidth;
  }
  if (json.contains("message-bytes"))
    c.message_bytes = static_cast<std::int64_t>(time_at(json["message-bytes"], file, "$.message-bytes"));
  if (json.contains("jitter")) {
    const nlohmann::json& jitter = json["jitter"];
    if (!jitter.is_object()) bad(file, "$.jitter", "must be an object of F, B, I and W");
    for (int op = 0; op < kNumOps; ++op) {
      if (jitter.contains(kOpKeys[op])) {
        const double cv = time_at(jitter[kOpKeys[op]], file, std::string("$.jitter.") + kOpKeys[op]);
        if (cv > 10) bad(file, std::string("$.jitter.") + kOpKeys[op], "must be at most 10");
        c.jitter[static_cast<std::size_t>(op)] = cv;
      }
    }
  }
  if (json.contains("measured step")) c.measured_step = time_at(json["measured step"], file, "$.measured step");
  if (json.contains("notes") && json["notes"].is_array()) {
    for (const auto& note : json["notes"]) {
      if (note.is_string() && c.notes.size() < 64) c.notes.push_back(note.get<std::string>().substr(0, 1024));
    }
  }
  return c;
}

}  // namespace ppsim
