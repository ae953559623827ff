// SPDX-License-Identifier: Apache-2.0
#include "study/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/json/json_document.hpp"
#include "models/json/json_input_error.hpp"
#include "schedules/excerpt.hpp"
#include "sim/report/format.hpp"
#include "study/api.hpp"
#include "study/common/output_file.hpp"
#include "study/input/config.hpp"
#include "study/input/provenance.hpp"

namespace ppsim {
namespace {

using Json = nlohmann::ordered_json;

std::string shown(const Json& value) {
  return printable(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 40, true);
}

bool selected(const std::vector<std::string>& path, const CheckOptions& options) {
  if (options.only.empty()) return true;
  for (const std::string& name : options.only) {
    for (const std::string& key : path) {
      if (key == name) return true;
    }
  }
  return false;
}

std::string path_text(const std::string& schedule, const std::vector<std::string>& keys, const std::vector<int>& at) {
  std::string text = "[" + schedule + "] ";
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (at[i] >= 0) {
      text += "[" + std::to_string(at[i]) + "]";
    } else {
      text += (i == 0 ? "" : ".") + keys[i];
    }
  }
  return text;
}

struct Walker {
  const CheckOptions& options;
  const std::string& schedule;
  CheckOutcome& outcome;
  std::vector<std::string> keys;  // the object keys on the path (array steps repeat their key)
  std::vector<int> at;            // per step: the array index, or -1 for an object key
  bool in_empty_phase = false;    // the object walked is a phase with "ops": 0 in both results

  void moved(const Json* baseline, const Json* now) {
    MovedFigure figure;
    figure.figure = path_text(schedule, keys, at);
    figure.baseline = baseline != nullptr ? shown(*baseline) : "(none)";
    figure.now = now != nullptr ? shown(*now) : "(none)";
    figure.in_training = !keys.empty() && keys.front() == "training";
    figure.per_device = std::any_of(at.begin(), at.end(), [](int index) { return index >= 0; });
    figure.magnitude = std::numeric_limits<double>::infinity();
    if (baseline != nullptr && now != nullptr && baseline->is_number() && now->is_number()) {
      const double b = baseline->get<double>();
      const double n = now->get<double>();
      char buffer[32];
      if (b != 0) {
        std::snprintf(buffer, sizeof buffer, "%+.3g%%", 100 * (n - b) / std::fabs(b));
        figure.change = buffer;
        figure.magnitude = std::fabs((n - b) / b);
      } else {
        figure.change = "from 0";
      }
    }
    outcome.moved.push_back(std::move(figure));
  }

  void leaf(const Json& baseline, const Json& now) {
    if (!selected(keys, options)) return;
    ++outcome.figures;
    // A figure written as null was not a number (JSON has no NaN): it never passes, not even
    // against another null. The one null that is a value: the start and end of a phase with no
    // ops (a schedule without a steady phase), null in both.
    const bool no_ops = in_empty_phase && baseline.is_null() && now.is_null();
    if ((baseline.is_null() || now.is_null()) && !no_ops) {
      moved(&baseline, &now);
      outcome.moved.back().change = "not a number";
      return;
    }
    if (baseline.is_number() && now.is_number()) {
      const double b = baseline.get<double>();
      const double n = now.get<double>();
      if (std::fabs(n - b) <= options.atol + options.rtol * std::fabs(b)) return;
    } else if (baseline == now) {
      return;
    }
    moved(&baseline, &now);
  }

  // `top`: a result's object, whose "scenario" holds the inputs that were re-run, not figures.
  void walk(const Json& baseline, const Json& now, bool top = false) {
    if (baseline.is_object() && now.is_object()) {
      const bool outer_empty_phase = in_empty_phase;
      auto no_ops = [](const Json& object) {
        const auto ops = object.find("ops");
        return ops != object.end() && ops->is_number() && *ops == 0;
      };
      in_empty_phase = no_ops(baseline) && no_ops(now);
      for (const auto& [key, value] : baseline.items()) {
        if (top && (key == "scenario" || key == "provenance")) continue;
        step(key, -1);
        const auto found = now.find(key);
        if (found == now.end()) {
          if (selected(keys, options)) ++outcome.figures, moved(&value, nullptr);
        } else {
          walk(value, *found);
        }
        unstep();
      }
      for (const auto& [key, value] : now.items()) {
        if (baseline.contains(key) || (top && (key == "scenario" || key == "provenance"))) continue;
        step(key, -1);
        if (selected(keys, options)) ++outcome.figures, moved(nullptr, &value);
        unstep();
      }
      in_empty_phase = outer_empty_phase;
      return;
    }
    if (baseline.is_array() && now.is_array()) {
      const std::size_t common = std::min(baseline.size(), now.size());
      for (std::size_t i = 0; i < std::max(baseline.size(), now.size()); ++i) {
        step(keys.empty() ? "" : keys.back(), static_cast<int>(i));
        if (i < common) {
          walk(baseline[i], now[i]);
        } else if (selected(keys, options)) {
          ++outcome.figures;
          moved(i < baseline.size() ? &baseline[i] : nullptr, i < now.size() ? &now[i] : nullptr);
        }
        unstep();
      }
      return;
    }
    leaf(baseline, now);
  }

  void step(const std::string& key, int index) {
    keys.push_back(key);
    at.push_back(index);
  }
  void unstep() {
    keys.pop_back();
    at.pop_back();
  }
};

// Every key on a figure's path in `value`: what --only may name.
void collect_keys(const Json& value, std::vector<std::string>& keys) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      if (key == "scenario" || key == "provenance") continue;
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      collect_keys(child, keys);
    }
  } else if (value.is_array()) {
    for (const Json& child : value) collect_keys(child, keys);
  }
}

// The files a stored scenario names (a schedule file; a model or hardware file, not a preset name),
// found beside the baseline first, then where they were named from (the directory ppsim ran in);
// one that is in neither place is refused by the baseline's JSON path.
void find_scenario_files(Json& scenario, const std::string& baseline, const std::string& where) {
  namespace fs = std::filesystem;
  for (const char* key : {"schedule-file", "model", "hardware"}) {
    const auto found = scenario.find(key);
    if (found == scenario.end() || !found->is_string()) continue;
    const std::string named = found->get<std::string>();
    if (std::string_view(key) != "schedule-file" && !named.ends_with(".json")) continue;  // a preset
    std::error_code error;
    const fs::path beside = fs::path(baseline).parent_path() / named;
    if (fs::path(named).is_relative() && fs::is_regular_file(beside, error)) {
      *found = beside.string();
    } else if (!fs::is_regular_file(named, error)) {
      throw InputError(where + "." + key + ": cannot read " + excerpt(named));
    }
  }
}

[[noreturn]] void not_a_baseline(const std::string& where, const std::string& why) {
  throw InputError(where + ": " + why + " (a baseline is the --format json output of ppsim run or compare)");
}

}  // namespace

CheckOutcome check_baseline(const std::string& path, const CheckOptions& options) {
  if (!(options.rtol >= 0) || !std::isfinite(options.rtol)) throw InputError("--rtol: must be a finite number >= 0");
  if (!(options.atol >= 0) || !std::isfinite(options.atol)) throw InputError("--atol: must be a finite number >= 0");
  Json document;
  try {
    document = read_ordered_json_file(path, "baseline");
  } catch (const JsonInputError& error) {
    throw InputError(error.what());
  }
  const bool array = document.is_array();
  if (!array && !document.is_object()) not_a_baseline(path + ": $", "must be an object or an array of objects");
  if (array && document.empty()) not_a_baseline(path + ": $", "has no result");
  std::vector<const Json*> results;
  if (array) {
    for (const Json& result : document) results.push_back(&result);
  } else {
    results.push_back(&document);
  }
  std::vector<std::string> known;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string where = path + ": $" + (array ? "[" + std::to_string(i) + "]" : "");
    const Json& result = *results[i];
    if (!result.is_object()) not_a_baseline(where, "must be an object");
    if (!result.contains("scenario") || !result["scenario"].is_object()) not_a_baseline(where, "has no \"scenario\" object");
    if (!result.contains("schedule") || !result["schedule"].is_string()) not_a_baseline(where, "has no \"schedule\"");
    collect_keys(result, known);
  }
  for (const std::string& name : options.only) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::vector<std::string_view> names(known.begin(), known.end());
    const std::string near = nearest_name(name, names);
    throw InputError("--only: " + path + " has no figure " + quoted_excerpt(name) +
                     (near.empty() ? "" : " (did you mean \"" + near + "\"?)"));
  }
  CheckOutcome outcome;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Json& result = *results[i];
    const std::string origin = path + ": $" + (array ? "[" + std::to_string(i) + "]" : "") + ".scenario";
    // The stored scenario reads back as a config: each result's own, at the v it ran at.
    Json stored = result["scenario"];
    find_scenario_files(stored, path, origin);
    Scenario scenario = scenario_from_settings(nlohmann::json::parse(stored.dump()), origin);
    scenario.format = OutputFormat::kJson;
    // Output settings are not in the scenario: a baseline with a timeline was run with --timeline.
    scenario.timeline = result.contains("timeline");
    check_run_schedules(scenario);
    std::ostringstream out;
    write_reports(scenario, false, {}, out);
    const Json now = Json::parse(out.str());
    const std::string schedule = result["schedule"].get<std::string>();
    const auto provenance = result.find("provenance");
    for (std::string& cause : provenance_changes(provenance != result.end() ? *provenance : Json(), now["provenance"])) {
      if (std::find(outcome.causes.begin(), outcome.causes.end(), cause) == outcome.causes.end()) {
        outcome.causes.push_back(std::move(cause));
      }
    }
    Walker walker{options, schedule, outcome, {}, {}};
    walker.walk(result, now, true);
    ++outcome.results;
  }
  return outcome;
}

std::string check_report(const std::string& path, const CheckOptions& options, const CheckOutcome& outcome) {
  std::ostringstream out;
  const std::string tolerance = "rtol " + format_exact(options.rtol) + ", atol " + format_exact(options.atol);
  const std::string results = std::to_string(outcome.results) + (outcome.results == 1 ? " schedule" : " schedules");
  if (outcome.moved.empty()) {
    out << "ppsim check: " << outcome.figures << " figures of " << results << " within " << tolerance << " of " << path
        << '\n';
    for (const std::string& cause : outcome.causes) out << "  (although " << cause << ")\n";
    return out.str();
  }
  out << "ppsim check: " << outcome.moved.size() << " of " << outcome.figures << " figures of " << results
      << " moved beyond " << tolerance << " from " << path << '\n';
  for (const std::string& cause : outcome.causes) out << "  " << cause << '\n';
  // The run's own figures, training first, in the order the JSON has them.
  std::vector<const MovedFigure*> own;
  std::vector<const MovedFigure*> detail;
  for (const MovedFigure& figure : outcome.moved) {
    if (figure.per_device) {
      detail.push_back(&figure);
    } else if (figure.in_training) {
      own.push_back(&figure);
    }
  }
  for (const MovedFigure& figure : outcome.moved) {
    if (!figure.per_device && !figure.in_training) own.push_back(&figure);
  }
  TextTable table({Align::kLeft, Align::kRight, Align::kRight, Align::kRight});
  table.add_row({"figure", "baseline", "now", "change"});
  for (std::size_t i = 0; i < own.size() && i < kMaxMovedRows; ++i) {
    table.add_row({own[i]->figure, own[i]->baseline, own[i]->now, own[i]->change});
  }
  if (!own.empty()) out << table.render();
  if (own.size() > kMaxMovedRows) out << "... and " << own.size() - kMaxMovedRows << " more\n";
  if (detail.empty()) return out.str();
  // Stable: of equal moves, the first in the JSON's order.
  std::stable_sort(detail.begin(), detail.end(),
                   [](const MovedFigure* a, const MovedFigure* b) { return a->magnitude > b->magnitude; });
  const std::size_t shown_rows = std::min(detail.size(), kLargestDetailRows);
  out << detail.size() << " per-device, per-link and per-stage figure" << (detail.size() == 1 ? "" : "s")
      << " moved" << (shown_rows == detail.size() ? "" : "; the " + std::to_string(shown_rows) + " largest") << ":\n";
  TextTable largest({Align::kLeft, Align::kRight, Align::kRight, Align::kRight});
  largest.add_row({"figure", "baseline", "now", "change"});
  for (std::size_t i = 0; i < shown_rows; ++i) {
    largest.add_row({detail[i]->figure, detail[i]->baseline, detail[i]->now, detail[i]->change});
  }
  out << largest.render();
  return out.str();
}

}  // namespace ppsim
