// SPDX-License-Identifier: Apache-2.0
#include "models/json/json_fields.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ppsim {
namespace {

std::string shown(const nlohmann::json& value) { return json_excerpt(value); }

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest_name(std::string_view unknown, const std::vector<std::string_view>& candidates) {
  std::string best;
  // No name ppsim knows is this long: a suggestion for a giant key would cost its length times every
  // candidate's, for nothing.
  if (unknown.size() > kMaxSuggestedLength) return best;
  std::size_t best_distance = std::max<std::size_t>(2, unknown.size() / 3) + 1;
  for (std::string_view candidate : candidates) {
    const std::size_t distance = edit_distance(unknown, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

JsonFields::JsonFields(const nlohmann::json& object, std::string origin, std::string path)
    : object_(object), origin_(std::move(origin)), path_(std::move(path)) {
  if (!object_.is_object()) fail_here("must be a JSON object, got " + shown(object_));
}

void JsonFields::fail(std::string_view key, const std::string& what) const {
  throw JsonInputError(origin_ + ": " + path_of(key) + ": " + what);
}

void JsonFields::fail_here(const std::string& what) const { throw JsonInputError(origin_ + ": " + path_ + ": " + what); }

bool JsonFields::has(std::string_view key) const { return object_.contains(std::string(key)); }

const nlohmann::json& JsonFields::at(std::string_view key) const {
  const auto found = object_.find(std::string(key));
  if (found == object_.end()) fail(key, "is missing");
  return *found;
}

std::string JsonFields::string(std::string_view key) const {
  const nlohmann::json& value = at(key);
  if (!value.is_string()) fail(key, "must be a string, got " + shown(value));
  return value.get<std::string>();
}

bool JsonFields::boolean(std::string_view key) const {
  const nlohmann::json& value = at(key);
  if (!value.is_boolean()) fail(key, "must be true or false, got " + shown(value));
  return value.get<bool>();
}

double JsonFields::positive(std::string_view key, bool allow_zero) const {
  const nlohmann::json& value = at(key);
  if (!value.is_number()) fail(key, "must be a number, got " + shown(value));
  const double number = value.get<double>();
  if (!std::isfinite(number) || number < 0 || (!allow_zero && number == 0)) {
    fail(key, std::string("must be a finite number ") + (allow_zero ? ">= 0" : "> 0") + ", got " + value.dump());
  }
  return number;
}

double JsonFields::number_in(std::string_view key, double min, double max) const {
  const nlohmann::json& value = at(key);
  if (!value.is_number()) fail(key, "must be a number, got " + shown(value));
  const double number = value.get<double>();
  if (!(number >= min && number <= max)) {
    fail(key, "must be a number from " + nlohmann::json(min).dump() + " to " + nlohmann::json(max).dump() + ", got " +
                  excerpt(value.dump()));
  }
  return number;
}

std::int64_t JsonFields::integer(std::string_view key, std::int64_t min, std::int64_t max) const {
  const nlohmann::json& value = at(key);
  double number = 0;
  if (value.is_number_integer() || value.is_number_unsigned()) {
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
      fail(key, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " +
                    value.dump());
    }
    const std::int64_t integer = value.get<std::int64_t>();
    if (integer < min || integer > max) {
      fail(key, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " +
                    value.dump());
    }
    return integer;
  }
  if (!value.is_number_float()) fail(key, "must be an integer, got " + shown(value));
  number = value.get<double>();
  if (!std::isfinite(number) || number != std::floor(number) || number < static_cast<double>(min) ||
      number > static_cast<double>(max)) {
    fail(key,
         "must be an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " + value.dump());
  }
  return static_cast<std::int64_t>(number);
}

JsonFields JsonFields::object(std::string_view key) const { return JsonFields(at(key), origin_, path_of(key)); }

void JsonFields::refuse_unknown(std::initializer_list<std::string_view> known) const {
  for (const auto& [key, value] : object_.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string suggestion = closest_name(key, std::vector<std::string_view>(known));
    fail(key, "unknown key" + (suggestion.empty() ? std::string() : " (did you mean \"" + suggestion + "\"?)"));
  }
}

}  // namespace ppsim
