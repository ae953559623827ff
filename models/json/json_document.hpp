// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading JSON that a user hands ppsim (configs, studies, schedule files, model and hardware files):
// bounded in size and nesting before nlohmann sees it, every nlohmann failure turned into a
// JsonInputError that names the file, and excerpts of values for messages that never grow with the
// input. The limits are documented in README.md, "Limits".

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "models/json/json_input_error.hpp"
#include "schedules/excerpt.hpp"

namespace ppsim {

// A config, study, model or hardware file above this is refused before it is read.
inline constexpr std::size_t kMaxJsonFileBytes = std::size_t{16} << 20;  // 16 MiB
// Arrays and objects nested deeper than this are refused: nothing ppsim reads needs more than 4,
// and nlohmann's dump() and comparisons recurse once per level.
inline constexpr int kMaxJsonDepth = 64;

// The whole file, or a JsonInputError naming `path` when it cannot be read, is not a regular file
// that can be read, or holds more than `max_bytes`. `what` names the kind of file ("config file").
std::string read_bounded_file(const std::string& path, std::size_t max_bytes, std::string_view what);

// `text` as JSON, or a JsonInputError "origin: malformed JSON: ..." (syntax, numbers out of range
// such as 1e309, nesting deeper than kMaxJsonDepth).
nlohmann::json parse_json_text(std::string_view text, const std::string& origin);
nlohmann::ordered_json parse_ordered_json_text(std::string_view text, const std::string& origin);

// read_bounded_file + parse_json_text.
nlohmann::json read_json_file(const std::string& path);
nlohmann::ordered_json read_ordered_json_file(const std::string& path, std::string_view what);

// A JSON value for a message, "number 1.5", "string \"abc\"", "array [1,2]": its type and its text
// cut by excerpt(). Parsing bounds the depth (kMaxJsonDepth) and the file size bounds the rest, so
// dumping a value to cut it stays bounded too.
template <typename Json>
std::string json_excerpt(const Json& value) {
  if (value.is_string()) return "string \"" + excerpt(value.template get_ref<const std::string&>()) + "\"";
  return std::string(value.type_name()) + " " + excerpt(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

}  // namespace ppsim
