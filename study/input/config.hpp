// SPDX-License-Identifier: Apache-2.0
#pragma once
// Settings by their long option names: one table shared by the JSON config reader and the flags,
// so a key means the same thing in a file and on the command line, and errors name their source.

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "study/input/scenario.hpp"

namespace ppsim {

struct SettingInfo {
  std::string_view key;         // JSON key and long option name
  std::string_view flag;        // how the command line spells it, e.g. "-p" or "--forward"
  std::string_view value_name;  // for --help
  std::string_view help;
  bool repeatable = false;  // a flag given several times joins its values with commas
};

std::span<const SettingInfo> scenario_settings();

// Applies one setting given as text (a flag's value, or a JSON string). `source` names it in errors.
void apply_setting_text(std::string_view key, std::string_view text, const std::string& source, Scenario& scenario);

// Applies every key of a JSON object; errors name `origin` and the JSON path ("cfg.json: $.m: ...").
void apply_config_json(const nlohmann::json& config, const std::string& origin, Scenario& scenario);
// One setting of a known key (a long option name) from JSON, its errors and its source naming
// `source` ("study.json: $.axes.p[3]"): what apply_config_json does per key, for callers that
// have checked the key already and apply it many times (a sweep's points).
void apply_config_setting(const std::string& key, const nlohmann::json& value, const std::string& source,
                          Scenario& scenario);

// Reads and applies a JSON config file; malformed JSON and unreadable files are InputErrors.
void apply_config_file(const std::string& path, Scenario& scenario);
// Its two halves: the file's JSON, read with the limits and errors of a config file, and that JSON
// applied as the file's (files it names are found beside it). ppsim plan reads its file so, taking
// its own keys out between the two.
nlohmann::json read_config_file(const std::string& path);
void apply_config_read(const nlohmann::json& config, const std::string& path, Scenario& scenario);

// The resolved scenario in base units, under the same key names, for JSON output.
nlohmann::ordered_json scenario_to_json(const Scenario& scenario, std::string_view schedule);

// The candidate closest to `unknown` by edit distance, or "" when none is close.
std::string nearest_name(std::string_view unknown, std::span<const std::string_view> candidates);

// The known key closest to `unknown`, or "" when none is close.
std::string nearest_key(std::string_view unknown);

}  // namespace ppsim
