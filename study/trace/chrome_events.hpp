// SPDX-License-Identifier: Apache-2.0
#pragma once
// The events of a Chrome trace-event JSON file ("Trace Event Format", Google; the format of
// torch.profiler's export_chrome_trace and of ppsim's own --trace), read as a stream: each event is
// handed over as it is parsed and forgotten, so memory does not grow with the file.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ppsim {

// One event's fields that the importers read; other fields and args are skipped.
struct ChromeEvent {
  std::string name;
  std::string cat;
  std::string ph;
  std::string pid;  // as text: real traces use numbers and strings alike
  std::string tid;
  std::optional<double> ts;   // microseconds
  std::optional<double> dur;  // microseconds
  // Scalar args, in file order: numbers (and booleans) as numbers, strings as strings.
  std::vector<std::pair<std::string, std::string>> text_args;
  std::vector<std::pair<std::string, double>> number_args;
  std::uint64_t position = 0;  // the byte just after the event, for errors
  const std::string* text(std::string_view key) const;
  std::optional<double> number(std::string_view key) const;
};

// The top-level fields besides traceEvents that the importers read.
struct ChromeTraceHeader {
  std::optional<double> rank;        // distributedInfo.rank (torch.profiler, world size > 1)
  std::optional<double> world_size;  // distributedInfo.world_size
  std::optional<double> base_ns;     // baseTimeNanoseconds: ts counts microseconds from it
  std::string generator;             // otherData.generator ("ppsim")
  std::string time_unit;             // otherData.time_unit (ppsim)
  // otherData.schedules[k]: each run's schedule and size as ppsim wrote them.
  struct Run {
    std::string schedule;
    std::optional<double> p, m, v;
    std::optional<double> sequence_splits;  // Seq1F1B's slices, or a sliced schedule file's
  };
  std::vector<Run> runs;
  std::uint64_t events = 0;
};

// Reads `path` (plain or gzip), calling on_event for every object in traceEvents. A file that is not
// JSON, not an object with a traceEvents array, or has a field of the wrong kind gets InputError
// "PATH: byte N: ...". A single value longer than 16 MiB is refused the same way.
ChromeTraceHeader read_chrome_events(const std::string& path, const std::function<void(const ChromeEvent&)>& on_event);

// The same over text in memory (fuzzing and tests), `name` standing for the path.
ChromeTraceHeader read_chrome_events_text(const std::string& text, const std::string& name,
                                          const std::function<void(const ChromeEvent&)>& on_event);

}  // namespace ppsim
