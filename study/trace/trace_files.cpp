// SPDX-License-Identifier: Apache-2.0
// Which reader a file needs, and one run from several files: a profiler trace per rank, or one
// ppsim trace, or one timer log.

#include <algorithm>
#include <filesystem>

#include "study/common/errors.hpp"
#include "study/trace/profiler_trace.hpp"
#include "study/trace/trace_bytes.hpp"
#include "study/trace/trace_import.hpp"

namespace ppsim {
namespace {

std::vector<std::string> expand(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> inside;
    for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file(error) &&
          (name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".log") || name.ends_with(".txt"))) {
        inside.push_back(entry.path().string());
      }
    }
    if (inside.empty()) throw InputError(excerpt(path) + ": a directory without trace files (.json, .json.gz, .log)");
    std::sort(inside.begin(), inside.end());
    files.insert(files.end(), inside.begin(), inside.end());
  }
  if (files.empty()) throw InputError("no trace file given");
  if (files.size() > 4096) throw InputError("more than 4096 trace files");
  return files;
}

}  // namespace

TraceReading read_trace_files(const std::vector<std::string>& paths, const TraceReadOptions& options) {
  const std::vector<std::string> files = expand(paths);
  TraceReading out;
  if (looks_like_timer_log(TraceBytes(files.front()).take(512))) {
    if (files.size() > 1)
      throw InputError(excerpt(files[1]) + ": a timer log is read alone (the last rank prints every rank's timers)");
    out.timers = read_timer_log(files.front());
    out.format = out.timers->zero_bubble.empty() ? "Megatron-LM timer log" : "zero-bubble profiling conclusion";
    return out;
  }
  std::vector<ProfilerRank> ranks;
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto ppsim = ppsim_trace_collector(files[i], options);
    ProfilerRankCollector profiler(files[i], static_cast<int>(i));
    const ChromeTraceHeader header = read_chrome_events(files[i], [&](const ChromeEvent& event) {
      ppsim->on_event(event);
      profiler.on_event(event);
    });
    TraceReading own;
    ppsim->finish(header, own);
    if (own.run) {
      if (files.size() > 1) throw InputError(excerpt(files[i]) + ": ppsim's trace holds every device: read it alone");
      return own;
    }
    ranks.push_back(profiler.finish(header));
  }
  build_profiler_reading(ranks, options, out);
  return out;
}

TraceReading read_trace_text(const std::string& text, const std::string& name) {
  TraceReading out;
  if (looks_like_timer_log(text.substr(0, 512))) {
    out.timers = read_timer_log_text(text, name);
    return out;
  }
  auto ppsim = ppsim_trace_collector(name, {});
  ProfilerRankCollector profiler(name, 0);
  const ChromeTraceHeader header = read_chrome_events_text(text, name, [&](const ChromeEvent& event) {
    ppsim->on_event(event);
    profiler.on_event(event);
  });
  ppsim->finish(header, out);
  if (out.run) return out;
  std::vector<ProfilerRank> ranks{profiler.finish(header)};
  build_profiler_reading(ranks, {}, out);
  return out;
}

}  // namespace ppsim
