// SPDX-License-Identifier: Apache-2.0
#include "study/input/calibrated_costs.hpp"

#include <filesystem>
#include <list>
#include <mutex>
#include <utility>

#include "schedules/registry.hpp"
#include "study/common/errors.hpp"
#include "study/trace/calibration.hpp"
#include "study/trace/trace_bytes.hpp"
#include "study/trace/trace_study.hpp"

namespace ppsim {
namespace {

// A calibration file (ppsim trace --calibrate) or the files of a run, calibrated now.
std::shared_ptr<const Calibration> load(const Scenario& scenario) {
  const std::vector<std::string>& files = scenario.calibrated_from;
  if (files.size() == 1) {
    TraceBytes bytes(files.front());
    std::string text = bytes.take(64);
    if (text.find("\"ppsim-calibration\"") != std::string::npos) {
      // Read whole (gzip or not), at most 64 MiB: a calibration is a few kilobytes per stage.
      text += bytes.take(64u << 20);
      if (!bytes.at_end()) throw InputError(excerpt(files.front()) + ": a calibration larger than 64 MiB");
      nlohmann::json json;
      try {
        json = nlohmann::json::parse(text);
      } catch (const nlohmann::json::parse_error& error) {
        throw InputError(excerpt(files.front()) + ": byte " + std::to_string(error.byte) + ": not JSON");
      }
      return std::make_shared<const Calibration>(calibration_from_json(json, files.front()));
    }
  }
  TimerHints hints;
  if (scenario.sources.count("p") != 0) hints.p = scenario.params.p;
  if (scenario.sources.count("m") != 0) hints.m = scenario.params.m;
  if (scenario.sources.count("v") != 0) hints.v = scenario.params.v;
  // The schedule asked for is the one to predict, not necessarily the one that ran: a timer log's
  // chunks are placed as Megatron's interleaving places them (ppsim trace -s says otherwise).
  return std::make_shared<const Calibration>(calibrate_files(files, {}, hints));
}

// What identifies a read: the paths, their sizes and times, and the hints a timer log needs.
std::string cache_key(const Scenario& scenario) {
  std::string key;
  for (const std::string& file : scenario.calibrated_from) {
    std::error_code error;
    const auto size = std::filesystem::file_size(file, error);
    const auto time = std::filesystem::last_write_time(file, error);
    key += file + '\n' + std::to_string(error ? 0 : size) + '\n' +
           std::to_string(error ? 0 : time.time_since_epoch().count()) + '\n';
  }
  for (const char* k : {"p", "m", "v", "schedule"}) key += scenario.sources.count(k) != 0 ? "1" : "0";
  key += std::to_string(scenario.params.p) + "," + std::to_string(scenario.params.m) + "," +
         std::to_string(scenario.params.v);
  if (!scenario.schedules.empty()) key += scenario.schedules.front();
  return key;
}

std::shared_ptr<const Calibration> cached(const Scenario& scenario) {
  static std::mutex mutex;
  static std::list<std::pair<std::string, std::shared_ptr<const Calibration>>> recent;
  const std::string key = cache_key(scenario);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [k, calibration] : recent) {
      if (k == key) return calibration;
    }
  }
  std::shared_ptr<const Calibration> calibration;
  try {
    calibration = load(scenario);
  } catch (const InputError& error) {
    throw InputError(scenario.source_of("calibrated-from") + ": " + error.what());
  }
  const std::lock_guard<std::mutex> lock(mutex);
  recent.emplace_front(key, calibration);
  if (recent.size() > 4) recent.pop_back();
  return calibration;
}

std::vector<Duration> durations(const std::vector<double>& values, bool seconds) {
  std::vector<Duration> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(Duration{v, seconds});
  return out;
}

}  // namespace

void resolve_calibration(Scenario& scenario) {
  if (scenario.calibrated_from.empty()) return;
  if (!scenario.calibration) scenario.calibration = cached(scenario);
  const Calibration& c = *scenario.calibration;
  if (scenario.sources.count("p") == 0 && c.p > 0) scenario.params.p = c.p;
  if (scenario.sources.count("m") == 0 && c.m > 0) scenario.params.m = c.m;
  if (scenario.sources.count("schedule") == 0 && scenario.schedule_file.empty()) {
    const ScheduleInfo* info = c.schedule.empty() ? nullptr : resolve_schedule(c.schedule);
    if (info != nullptr && info->generated()) {
      scenario.schedules = {std::string(info->name)};
      if (scenario.sources.count("v") == 0 && c.v > 1) {
        scenario.params.v = c.v;
        scenario.sources["v"] = scenario.source_of("calibrated-from");
      }
    }
  }
  // Each device's share, for whatever reads costs before a schedule is chosen; each schedule's
  // stages get their own in calibrated_costs_for_schedule.
  const int p = scenario.params.p;
  const bool seconds = c.seconds;
  if (p < 1 || p > 65536) return;  // the run's own size checks refuse it, naming -p
  if (scenario.sources.count("forward") == 0) scenario.forward = durations(resample_stages(c.forward(), p), seconds);
  if (scenario.sources.count("backward") == 0) scenario.backward = durations(resample_stages(c.backward(), p), seconds);
  if (scenario.sources.count("weight") == 0) {
    const std::vector<double> weight = c.weight();
    scenario.weight = weight.empty() ? std::vector<Duration>() : durations(resample_stages(weight, p), seconds);
  }
  if (scenario.sources.count("latency") == 0) scenario.latency = Duration{c.latency ? c.latency->median : 0, seconds};
  if (scenario.sources.count("bandwidth") == 0 && c.bandwidth) scenario.bandwidth = Bandwidth{*c.bandwidth};
  if (scenario.sources.count("message-bytes") == 0 && c.message_bytes)
    scenario.message_bytes = {ByteCount{*c.message_bytes}};
  if (scenario.samples > 0 && scenario.sources.count("jitter") == 0 && !scenario.jitter_measured) {
    scenario.noise.op_cv = c.jitter;  // the measured spread, when Monte-Carlo steps are asked for
  }
}

void calibrated_costs_for_schedule(Scenario& scenario) {
  if (!scenario.calibration) return;
  if (scenario.sources.count("costs-per") != 0 && !scenario.costs_per_chunk) return;  // the user's device shares
  const Calibration& c = *scenario.calibration;
  const std::int64_t many = static_cast<std::int64_t>(scenario.params.p) * scenario.params.v;
  if (scenario.params.p < 1 || scenario.params.v < 1 || many > 65536) return;  // refused by the run's size checks
  const int stages = static_cast<int>(many);
  const bool seconds = c.seconds;
  bool any = false;
  if (scenario.sources.count("forward") == 0) {
    scenario.forward = durations(resample_stages(c.forward(), stages), seconds);
    any = true;
  }
  if (scenario.sources.count("backward") == 0) {
    scenario.backward = durations(resample_stages(c.backward(), stages), seconds);
    any = true;
  }
  if (scenario.sources.count("weight") == 0) {
    const std::vector<double> weight = c.weight();
    scenario.weight = weight.empty() ? std::vector<Duration>() : durations(resample_stages(weight, stages), seconds);
  }
  if (any) scenario.costs_per_chunk = true;
}

}  // namespace ppsim
