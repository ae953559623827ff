// SPDX-License-Identifier: Apache-2.0
#include "study/sweep/sweep_study.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <set>

#include "models/json/json_document.hpp"
#include "schedules/registry.hpp"
#include "sim/report/format.hpp"
#include "study/common/errors.hpp"
#include "study/input/config.hpp"
#include "study/input/setting_aliases.hpp"
#include "study/sweep/sweep_shard_record.hpp"

namespace ppsim {
namespace {

// A study file's keys, with what each holds: the reader's list and the man page's (study_keys()).
constexpr std::array<StudyKeyInfo, 8> kStudyKeyInfo = {{
    {"description", "a line of text shown above the summary"},
    {"fixed", "settings every point shares, as a run config's keys (\"model\": \"llama3.1-8b\", \"seq\": 4096)"},
    {"axes", "the settings that vary: each a list of values, a range {\"from\", \"to\", \"step\" or \"times\"}, or "
             "a named list of objects of settings varied together"},
    {"gpus", "the GPUs every layout must use: t * context-parallel * p * d (with a model)"},
    {"objective", "what ranks the points: throughput (default), bubble, memory, time or p99_step_time"},
    {"bubble_target", "the bubble ratio choose-m aims under (default 0.1)"},
    {"memory_limit", "bytes a device may hold, e.g. \"80 GiB\" (default: the hardware's memory with a model)"},
    {"top", "rows of the summary's best table (default 10)"},
}};
constexpr std::array<std::string_view, 8> kStudyKeys = [] {
  std::array<std::string_view, 8> keys{};
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = kStudyKeyInfo[i].key;
  return keys;
}();
// Integer settings: their ranges step in integers.
constexpr std::array<std::string_view, 9> kCountKeys = {"p",   "m",            "v",          "t",          "d",
                                                        "seq", "micro-batch", "global-batch", "bucket-size"};
// Settings that take a number: their ranges may step in fractions.
constexpr std::array<std::string_view, 13> kNumberKeys = {
    "forward",      "backward",     "weight",       "overlap",   "latency", "bandwidth", "message-bytes",
    "activation-bytes", "static-bytes", "weight-stash-fraction", "workspace", "dropout", "memory-headroom"};
// Settings a sweep does not take: they choose the output of one run.
constexpr std::array<std::string_view, 2> kRunOnlyKeys = {"format", "timeline"};
constexpr std::size_t kMaxAxisValues = 100'000;

template <std::size_t N>
bool among(const std::array<std::string_view, N>& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

bool is_setting(std::string_view key) {
  for (const SettingInfo& setting : scenario_settings()) {
    if (setting.key == key) return true;
  }
  return false;
}

[[noreturn]] void fail(const Study& study, const std::string& path, const std::string& what) {
  throw InputError(study.origin + ": " + path + ": " + what);
}

std::string type_and_value(const nlohmann::ordered_json& value) { return json_excerpt(value); }

// Applies an object of settings; errors and sources name `path` ("$.axes.p[2]") instead of the
// "$.key" that apply_config_json would write. With `per_key`, each key is appended to the path.
void apply_settings(const Study& study, const nlohmann::json& settings, const std::string& path, bool per_key,
                    Scenario& scenario) {
  for (const auto& [key, value] : settings.items()) {
    const std::string where = per_key ? path + "." + excerpt(key) : path;
    try {
      apply_config_json(nlohmann::json{{key, value}}, study.origin, scenario);
    } catch (const InputError& error) {
      const std::string message = error.what();
      const std::string written = study.origin + ": $." + excerpt(key);
      if (message.starts_with(written)) throw InputError(study.origin + ": " + where + message.substr(written.size()));
      throw;
    }
    scenario.sources[key] = study.origin + ": " + where;
  }
}

// A model, hardware or schedule file named in a study is found beside the study.
nlohmann::json beside_study(const std::string& key, const nlohmann::json& value, const std::string& directory) {
  if (directory.empty() || !value.is_string()) return value;
  const std::string text = value.get<std::string>();
  const bool file = key == "schedule-file" || ((key == "model" || key == "hardware") && text.ends_with(".json"));
  if (!file || text.empty() || std::filesystem::path(text).is_absolute()) return value;
  return (std::filesystem::path(directory) / text).string();
}

nlohmann::json to_json(const nlohmann::ordered_json& value) { return nlohmann::json::parse(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)); }

std::string label_of(const nlohmann::ordered_json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) return format_exact(value.get<double>());
  return value.dump();
}

// {"from": a, "to": b, "step": s} or {"from": a, "to": b, "times": k}: values from a up to b.
std::vector<nlohmann::ordered_json> range_values(const Study& study, const std::string& key,
                                                 const nlohmann::ordered_json& range, const std::string& path) {
  const bool count = among(kCountKeys, key);
  if (!count && !among(kNumberKeys, key)) {
    fail(study, path, "a range needs a numeric setting; give " + key + " a list of values");
  }
  for (const auto& [name, value] : range.items()) {
    if (name != "from" && name != "to" && name != "step" && name != "times") {
      fail(study, path + "." + excerpt(name), "unknown key in a range; a range is {\"from\", \"to\", and \"step\" or \"times\"}");
    }
    if (!value.is_number()) fail(study, path + "." + excerpt(name), "must be a number, got " + type_and_value(value));
    if (count && !value.is_number_integer() && !value.is_number_unsigned()) {
      fail(study, path + "." + excerpt(name), key + " is a whole number, got " + json_excerpt(value));
    }
  }
  for (const char* needed : {"from", "to"}) {
    if (!range.contains(needed)) fail(study, path, std::string("a range needs \"") + needed + "\"");
  }
  if (range.contains("step") == range.contains("times")) {
    fail(study, path, "a range needs exactly one of \"step\" (add) and \"times\" (multiply)");
  }
  const double from = range["from"].get<double>();
  const double to = range["to"].get<double>();
  if (!(from <= to)) fail(study, path, "\"from\" (" + format_exact(from) + ") is above \"to\" (" + format_exact(to) + ")");
  std::vector<nlohmann::ordered_json> values;
  auto push = [&](double value) {
    if (values.size() >= kMaxAxisValues) {
      fail(study, path, "has more than " + std::to_string(kMaxAxisValues) + " values; is the step right?");
    }
    if (count)
      values.emplace_back(static_cast<long long>(std::llround(value)));
    else
      values.emplace_back(value);
  };
  // Values are from + i*step (or from * times^i), never accumulated, so 0.1 steps do not drift.
  const double slack = 1e-9 * std::max(1.0, std::fabs(to));
  if (range.contains("step")) {
    const double step = range["step"].get<double>();
    if (!(step > 0)) fail(study, path + ".step", "must be positive, got " + json_excerpt(range["step"]));
    for (std::size_t i = 0;; ++i) {
      const double value = from + static_cast<double>(i) * step;
      if (value > to + slack) break;
      push(value);
    }
  } else {
    const double times = range["times"].get<double>();
    if (!(times > 1)) fail(study, path + ".times", "must be above 1, got " + json_excerpt(range["times"]));
    if (!(from > 0)) fail(study, path + ".from", "must be positive with \"times\", got " + json_excerpt(range["from"]));
    for (std::size_t i = 0;; ++i) {
      const double value = from * std::pow(times, static_cast<double>(i));
      if (value > to + slack) break;
      push(value);
    }
  }
  return values;
}

StudyAxis read_axis(const Study& study, const std::string& written, const nlohmann::ordered_json& spec,
                    const std::string& directory) {
  StudyAxis axis;
  // Any name of a setting (a long option, Megatron-LM's or torchtitan's) varies ppsim's key.
  const std::optional<SettingAlias> alias = setting_alias(written);
  if (alias && alias->key.empty()) fail(study, "$.axes." + excerpt(written), alias->explanation);
  const std::string key = alias ? alias->key : written;
  axis.key = key;
  axis.path = "$.axes." + excerpt(written);
  axis.group = !is_setting(key);
  if (among(kRunOnlyKeys, key)) fail(study, axis.path, "is not a sweep setting (it chooses the output of ppsim run)");
  if (key == "schedule-file") fail(study, axis.path, "cannot vary; give it under \"fixed\"");
  std::vector<nlohmann::ordered_json> values;
  if (spec.is_array()) {
    if (spec.empty()) fail(study, axis.path, "must not be empty");
    values.assign(spec.begin(), spec.end());
  } else if (spec.is_object() && !axis.group) {
    values = range_values(study, key, spec, axis.path);
    if (values.empty()) fail(study, axis.path, "the range holds no value");
  } else if (axis.group) {
    const std::string suggestion = nearest_key(key);
    fail(study, axis.path,
         "unknown setting" + (suggestion.empty() ? std::string() : " (did you mean \"" + suggestion + "\"?)") +
             "; an axis of several settings takes a list of objects of settings");
  } else {
    fail(study, axis.path, "must be a list of values or a range {\"from\", \"to\", \"step\" or \"times\"}, got " +
                               type_and_value(spec));
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string path = axis.path + "[" + std::to_string(i) + "]";
    const nlohmann::ordered_json& value = values[i];
    nlohmann::json settings = nlohmann::json::object();
    if (axis.group) {
      if (!value.is_object()) {
        const std::string suggestion = nearest_key(key);
        fail(study, path,
             "must be an object of settings (\"" + excerpt(key) + "\" is not a setting" +
                 (suggestion.empty() ? std::string() : "; did you mean \"" + suggestion + "\"?") + "), got " +
                 type_and_value(value));
      }
      std::string label;
      for (const auto& [name, setting] : value.items()) {
        if (name == "name") {
          if (!setting.is_string() || setting.get<std::string>().empty()) {
            fail(study, path + ".name", "must be a non-empty string, got " + type_and_value(setting));
          }
          label = setting.get<std::string>();
          continue;
        }
        if (among(kRunOnlyKeys, name)) fail(study, path + "." + excerpt(name), "is not a sweep setting");
        settings[name] = beside_study(name, to_json(setting), directory);
      }
      if (settings.empty()) fail(study, path, "names no setting");
      axis.labels.push_back(label.empty() ? value.dump() : label);
    } else {
      if (value.is_object() || (key == "schedule" && !value.is_string())) {
        fail(study, path,
             key == "schedule" ? "must be one schedule name, got " + type_and_value(value)
                               : "must be one value of " + key + ", got " + type_and_value(value));
      }
      settings[key] = beside_study(key, to_json(value), directory);
      axis.labels.push_back(label_of(value));
    }
    // Every value is checked now, so a bad one fails the study before any point runs.
    Scenario scratch = study.base;
    apply_settings(study, settings, path, axis.group, scratch);
    if (settings.contains("schedule") && find_schedule(scratch.schedules.front()) == nullptr) {
      fail(study, axis.group ? path + ".schedule" : path, "unknown schedule " + quoted_excerpt(scratch.schedules.front()));
    }
    if (scratch.schedules.size() != 1) fail(study, path, "a point runs one schedule");
    std::vector<StudyAxis::Setting> ready;
    for (const auto& [name, setting] : settings.items()) {
      ready.push_back({name, setting, study.origin + ": " + (axis.group ? path + "." + excerpt(name) : path)});
    }
    axis.ready.push_back(std::move(ready));
    axis.values.push_back(std::move(settings));
  }
  return axis;
}

// Where each setting is set: "$.fixed.p", "$.axes.p", "$.axes.link". One place per setting.
std::map<std::string, std::string> setting_places(const Study& study, const nlohmann::ordered_json& fixed) {
  std::map<std::string, std::string> places;
  auto place = [&](const std::string& key, const std::string& path) {
    const auto [it, inserted] = places.emplace(key, path);
    if (!inserted) fail(study, path, key + " is also set at " + it->second + "; set each setting in one place");
  };
  for (const auto& [key, value] : fixed.items()) place(key, "$.fixed." + excerpt(key));
  for (const StudyAxis& axis : study.axes) {
    std::set<std::string> keys;
    for (const auto& settings : axis.values) {
      for (const auto& [key, value] : settings.items()) keys.insert(key);
    }
    for (const std::string& key : keys) place(key, axis.path);
  }
  return places;
}

void check_combinations(Study& study, const std::map<std::string, std::string>& places) {
  const bool model = places.count("model") > 0;
  study.model = model;
  study.sampled = places.count("samples") > 0;
  study.failures = places.count("mtbf") > 0;
  for (const auto& [key, path] : places) {
    if (model && is_cost_setting(key)) {
      fail(study, path, key + " cannot be combined with a model, which derives F, B, W, memory and links");
    }
    if (!model && is_model_setting(key)) {
      fail(study, path, key + " needs a model (\"fixed\": {\"model\": \"llama3.1-8b\"}, see ppsim run --help)");
    }
  }
  if (places.count("m") > 0 && places.count("global-batch") > 0) {
    fail(study, places.at("m"),
         "m is derived from the global batch at " + places.at("global-batch") +
             " (m = global batch / (b*d)); give one of them");
  }
  if (study.gpus) {
    if (!model) fail(study, "$.gpus", "needs a model study (t and d are layout settings of a model)");
    study.derive_d = places.count("d") == 0;
  }
  if (places.count("schedule-file") > 0) {
    // The file's actions run only as schedule custom: any other schedule would ignore it.
    for (const StudyAxis& axis : study.axes) {
      if (axis.key != "schedule") continue;
      for (const nlohmann::json& value : axis.values) {
        if (value.contains("schedule") && value["schedule"] != "custom") {
          fail(study, places.at("schedule-file"),
               "runs as schedule custom, but " + axis.path + " lists " + json_excerpt(value["schedule"]) +
                   "; a schedule file cannot sweep schedules");
        }
      }
    }
    if (study.base.sources.count("schedule") > 0 && study.base.schedules.front() != "custom") {
      fail(study, places.at("schedule-file"),
           "runs as schedule custom, but $.fixed.schedule names " + quoted_excerpt(study.base.schedules.front()));
    }
  }
  if (places.count("schedule-file") > 0 && study.has_axis("p")) {
    fail(study, places.at("schedule-file"), "a schedule file fixes p and m; it cannot sweep p");
  }
}

// Refuses constraints that rule out every point: a study that runs nothing is a mistake.
void check_feasible(const Study& study) {
  if (!study.gpus && study.base.sources.count("global-batch") == 0 && !study.has_axis("global-batch")) return;
  if (study.points > 200'000) return;  // checked as the points run
  std::string first;
  for (std::size_t i = 0; i < study.points; ++i) {
    const PreparedPoint point = prepare_point(study, i);
    if (point.skipped.empty()) return;
    if (first.empty()) first = point.skipped;
  }
  const std::string path = study.gpus ? "$.gpus" : "$.fixed.global-batch";
  fail(study, path, "no point of the study satisfies the constraints (first: " + first + ")");
}

}  // namespace

const char* objective_name(Objective objective) {
  switch (objective) {
    case Objective::kThroughput:
      return "throughput";
    case Objective::kBubble:
      return "bubble";
    case Objective::kMemory:
      return "memory";
    case Objective::kTime:
      return "time";
    case Objective::kP99Time:
      return "p99_step_time";
  }
  return "throughput";
}

bool Study::has_axis(std::string_view key) const {
  for (const StudyAxis& axis : axes) {
    for (const auto& settings : axis.values) {
      if (settings.contains(key)) return true;
    }
  }
  return false;
}

std::span<const StudyKeyInfo> study_keys() { return kStudyKeyInfo; }

Study parse_study(const nlohmann::ordered_json& json, const std::string& origin, const std::string& directory) {
  Study study;
  study.origin = origin;
  study.fingerprint = study_fingerprint(json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (!json.is_object()) fail(study, "$", "a study is a JSON object with \"fixed\" and \"axes\", got " + type_and_value(json));
  for (const auto& [key, value] : json.items()) {
    if (!among(kStudyKeys, key)) {
      const std::string suggestion = nearest_name(key, kStudyKeys);
      fail(study, "$." + excerpt(key),
           "unknown key" + (suggestion.empty() ? std::string(" (a study has description, fixed, axes, gpus, objective, "
                                                             "bubble_target, memory_limit, top)")
                                               : " (did you mean \"" + suggestion + "\"?)"));
    }
  }
  if (json.contains("description")) {
    if (!json["description"].is_string()) fail(study, "$.description", "must be a string");
    study.description = json["description"].get<std::string>();
  }
  const nlohmann::ordered_json fixed = json.value("fixed", nlohmann::ordered_json::object());
  if (!fixed.is_object()) fail(study, "$.fixed", "must be an object of settings, got " + type_and_value(fixed));
  for (const auto& [key, value] : fixed.items()) {
    if (among(kRunOnlyKeys, key)) fail(study, "$.fixed." + excerpt(key), "is not a sweep setting");
    nlohmann::json setting = nlohmann::json::object();
    setting[key] = beside_study(key, to_json(value), directory);
    apply_settings(study, setting, "$.fixed", true, study.base);
  }
  if (!study.base.schedule_file.empty() && study.base.sources.count("schedule") == 0) {
    study.base.schedules = {"custom"};
  }
  if (study.base.schedules.size() != 1) {
    fail(study, "$.fixed.schedule", "a point runs one schedule; list several under \"axes\": {\"schedule\": [...]}");
  }
  if (find_schedule(study.base.schedules.front()) == nullptr) {
    fail(study, "$.fixed.schedule", "unknown schedule " + quoted_excerpt(study.base.schedules.front()));
  }

  if (!json.contains("axes")) fail(study, "$", "a study needs \"axes\": the settings to vary");
  const nlohmann::ordered_json& axes = json["axes"];
  if (!axes.is_object()) fail(study, "$.axes", "must be an object of axes, got " + type_and_value(axes));
  if (axes.empty()) fail(study, "$.axes", "must name at least one axis (ppsim run simulates a single point)");
  for (const auto& [key, spec] : axes.items()) {
    study.axes.push_back(read_axis(study, key, spec, directory));
    const std::size_t size = study.axes.back().values.size();
    if (study.points > kMaxStudyPoints / size) {
      fail(study, "$.axes", "has more than " + std::to_string(kMaxStudyPoints) + " points; narrow a range");
    }
    study.points *= size;
  }

  if (json.contains("gpus")) {
    const auto& gpus = json["gpus"];
    if (!gpus.is_number_integer() || gpus.get<long long>() <= 0 || gpus.get<long long>() > 1'000'000) {
      fail(study, "$.gpus", "must be a positive whole number of GPUs, got " + json_excerpt(gpus));
    }
    study.gpus = gpus.get<int>();
  }
  if (json.contains("objective")) {
    const auto& objective = json["objective"];
    const std::string name = objective.is_string() ? objective.get<std::string>() : "";
    if (name == "throughput")
      study.objective = Objective::kThroughput;
    else if (name == "bubble")
      study.objective = Objective::kBubble;
    else if (name == "memory")
      study.objective = Objective::kMemory;
    else if (name == "time")
      study.objective = Objective::kTime;
    else if (name == "p99_step_time")
      study.objective = Objective::kP99Time;
    else
      fail(study, "$.objective",
           "must be throughput, bubble, memory, time or p99_step_time, got " + json_excerpt(objective));
  }
  if (json.contains("bubble_target")) {
    const auto& target = json["bubble_target"];
    if (!target.is_number() || !(target.get<double>() > 0) || !(target.get<double>() < 1)) {
      fail(study, "$.bubble_target", "must be a fraction between 0 and 1, got " + json_excerpt(target));
    }
    study.bubble_target = target.get<double>();
  }
  if (json.contains("memory_limit")) {
    const auto& limit = json["memory_limit"];
    Parsed<ByteCount> parsed = limit.is_number()   ? bytes_from_number(limit.get<double>())
                               : limit.is_string() ? parse_bytes(limit.get<std::string>())
                                                   : Parsed<ByteCount>{false, {}, "must be a size, got " + json_excerpt(limit)};
    if (!parsed.ok) fail(study, "$.memory_limit", parsed.error);
    if (parsed.value.value <= 0) fail(study, "$.memory_limit", "must be positive");
    study.memory_limit = parsed.value.value;
  }
  if (json.contains("top")) {
    const auto& top = json["top"];
    if (!top.is_number_integer() || top.get<long long>() < 1 || top.get<long long>() > 1000) {
      fail(study, "$.top", "must be a whole number from 1 to 1000, got " + json_excerpt(top));
    }
    study.top = top.get<int>();
  }

  check_combinations(study, setting_places(study, fixed));
  if (study.objective == Objective::kP99Time && !study.sampled) {
    fail(study, "$.objective", "p99_step_time ranks by the samples' p99: give \"samples\" in fixed or an axis");
  }
  check_feasible(study);
  return study;
}

Study load_study(const std::string& path) {
  nlohmann::ordered_json json;
  try {
    json = read_ordered_json_file(path, "study file");
  } catch (const JsonInputError& error) {
    throw InputError(error.what());
  }
  return parse_study(json, path, std::filesystem::path(path).parent_path().string());
}

PreparedPoint prepare_point(const Study& study, std::size_t index) {
  PreparedPoint point;
  point.index = index;
  point.scenario = study.base;
  std::vector<std::size_t>& choice = point.choice;
  choice.resize(study.axes.size());
  std::size_t rest = index;
  for (std::size_t a = study.axes.size(); a-- > 0;) {
    choice[a] = rest % study.axes[a].values.size();
    rest /= study.axes[a].values.size();
  }
  Scenario& scenario = point.scenario;
  for (std::size_t a = 0; a < study.axes.size(); ++a) {
    const StudyAxis& axis = study.axes[a];
    for (const StudyAxis::Setting& setting : axis.ready[choice[a]]) {
      apply_config_setting(setting.key, setting.value, setting.source, scenario);
    }
    point.labels.push_back(axis.labels[choice[a]]);
  }
  point.schedule = scenario.schedules.front();
  scenario.schedules = {point.schedule};
  const ScheduleInfo* info = find_schedule(point.schedule);
  point.v = (info == nullptr || scenario.sources.count("v") > 0 || info->default_v == 1) ? scenario.params.v
                                                                                         : info->default_v;
  TrainingLayout& layout = scenario.layout;
  if (study.gpus) {
    const int gpus = *study.gpus;
    // The GPUs of one data-parallel replica: t * p, times c with context parallelism.
    const long long tp = static_cast<long long>(layout.tensor_parallel) * layout.context_parallel * scenario.params.p;
    const std::string product = layout.context_parallel > 1 ? "t*c*p" : "t*p";
    if (study.derive_d) {
      if (gpus % tp != 0) {
        point.skipped = product + " does not divide the " + std::to_string(gpus) + " GPUs";
        return point;
      }
      apply_setting_text("d", std::to_string(gpus / tp), study.origin + ": $.gpus", scenario);
    } else if (tp * layout.data_parallel != gpus) {
      point.skipped = product + "*d is not the " + std::to_string(gpus) + " GPUs";
      return point;
    }
  }
  if (scenario.sources.count("global-batch") > 0) {
    const std::int64_t per_microbatch = layout.micro_batch * layout.data_parallel;
    if (layout.global_batch % per_microbatch != 0) {
      point.skipped = "the global batch is not a multiple of b*d";
      return point;
    }
    const std::int64_t m = layout.global_batch / per_microbatch;
    if (m <= 1'000'000'000) scenario.params.m = static_cast<int>(m);
  }
  return point;
}

std::string short_reason(const Study& study, const std::string& message) {
  std::string reason = message;
  // The source first: "study.json: $.axes.m[3]: " or a flag's "-m: ".
  if (reason.starts_with(study.origin + ": ")) reason = reason.substr(study.origin.size() + 2);
  if (reason.starts_with("$") || reason.starts_with("-")) {
    if (const auto colon = reason.find(": "); colon != std::string::npos) reason = reason.substr(colon + 2);
  }
  // Then the why after the rule, and this point's numbers.
  if (const auto colon = reason.find(": "); colon != std::string::npos) reason.resize(colon);
  if (const auto got = reason.find(" (got"); got != std::string::npos) reason.resize(got);
  if (const auto equals = reason.rfind(" = "); equals != std::string::npos &&
                                               reason.find_first_not_of("0123456789", equals + 3) == std::string::npos) {
    reason.resize(equals);
  }
  return reason;
}

}  // namespace ppsim
