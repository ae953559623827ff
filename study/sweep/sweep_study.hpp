// SPDX-License-Identifier: Apache-2.0
#pragma once
// A sweep study (ppsim sweep STUDY.json): fixed settings, axes to vary, constraints that derive what
// is not free (t*p*d = gpus, m = global batch / (b*d)), and how to rank the points. Reading a study
// checks everything that does not depend on a point, so a bad study fails before any simulation,
// with exit status 2 and the JSON path.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "study/input/scenario.hpp"

namespace ppsim {

// What the top table ranks by: throughput (highest), bubble ratio, peak memory or step time (lowest).
enum class Objective { kThroughput, kBubble, kMemory, kTime, kP99Time };

const char* objective_name(Objective objective);

// One axis: a setting with a list of values, or a named group of settings whose values are objects
// of settings ("link": [{"name": "nvlink", "latency": ..., "bandwidth": ...}, ...]).
struct StudyAxis {
  std::string key;   // the setting, or the group's name
  bool group = false;
  std::string path;  // "$.axes.p", for errors and sources
  std::vector<nlohmann::json> values;  // each an object of settings to apply
  std::vector<std::string> labels;     // how the value is shown in tables and output files
  // Per value, its settings ready to apply to a point (apply_config_setting): each key checked, with
  // its value and the source errors name ("study.json: $.axes.link[1].hardware").
  struct Setting {
    std::string key;
    nlohmann::json value;
    std::string source;
  };
  std::vector<std::vector<Setting>> ready;
};

struct Study {
  std::string origin;  // the study file, as errors name it
  std::string description;
  Scenario base;  // defaults and the fixed settings
  std::vector<StudyAxis> axes;  // in the file's order; the first varies slowest
  std::optional<int> gpus;      // t * p * d must equal it
  bool derive_d = false;        // d comes from gpus / (t * p)
  bool model = false;           // a transformer study: throughput in tokens per second
  bool sampled = false;         // points take --samples: mean and p99 step times
  bool failures = false;        // points take --mtbf: goodput
  Objective objective = Objective::kThroughput;
  double bubble_target = 0.05;
  std::optional<std::int64_t> memory_limit;  // bytes per device; above it a point does not fit
  int top = 10;
  std::size_t points = 1;  // product of the axis sizes
  std::string fingerprint;  // of the study's JSON, which a shard's file records (sweep_shard_record.hpp)

  bool has_axis(std::string_view key) const;
};

// One point before it runs: its scenario (one schedule), its axis labels, and why it is skipped
// when a constraint rules it out.
struct PreparedPoint {
  std::size_t index = 0;
  Scenario scenario;
  std::string schedule;
  int v = 1;  // chunks per device as the schedule runs
  std::vector<std::size_t> choice;  // the value taken from each axis
  std::vector<std::string> labels;  // one per axis
  std::string skipped;              // empty: runs
};

// At most this many points per study; more is almost surely a typo in a range. Every point's result
// is kept for the summary (about 400 bytes each), so this also bounds a sweep's memory.
inline constexpr std::size_t kMaxStudyPoints = 1'000'000;

// Reads a study file. Relative model, hardware and schedule files are found beside it.
Study load_study(const std::string& path);

// The keys of a study file and what each holds, as the reader takes them and the man page lists them.
struct StudyKeyInfo {
  std::string_view key;
  std::string_view help;
};
std::span<const StudyKeyInfo> study_keys();

// A study from JSON already read; `origin` names it in errors, `directory` is where relative files are.
Study parse_study(const nlohmann::ordered_json& json, const std::string& origin, const std::string& directory = "");

// The point at `index` (0 <= index < study.points); the last axis varies fastest.
PreparedPoint prepare_point(const Study& study, std::size_t index);

// A skip reason without the JSON path and the numbers of one point, so that reasons group:
// "interleaved-1f1b needs m to be a multiple of max(1, floor(m/p))".
std::string short_reason(const Study& study, const std::string& message);

}  // namespace ppsim
