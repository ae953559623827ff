// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading one JSON object field by field with errors that name the JSON path. Every reader in
// models/json goes through this, so missing keys, wrong types, NaN-free numbers, ranges and unknown
// keys are refused the same way everywhere: "file.json: $.intra_node.bandwidth: must be > 0, got -1".

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "models/json/json_document.hpp"

namespace ppsim {

class JsonFields {
 public:
  // `path` is where `object` sits ("$" for the document, "$.intra_node" below it); `origin` names
  // the file (or "--model", "study.json") for the message.
  JsonFields(const nlohmann::json& object, std::string origin, std::string path);

  const std::string& origin() const { return origin_; }
  const std::string& path() const { return path_; }
  // The key is cut for messages: a key may be anything a file holds.
  std::string path_of(std::string_view key) const { return path_ + "." + excerpt(key); }

  [[noreturn]] void fail(std::string_view key, const std::string& what) const;
  [[noreturn]] void fail_here(const std::string& what) const;

  bool has(std::string_view key) const;
  const nlohmann::json& at(std::string_view key) const;  // required: refuses a missing key

  std::string string(std::string_view key) const;
  bool boolean(std::string_view key) const;
  // A finite number > 0 (or >= 0 with allow_zero).
  double positive(std::string_view key, bool allow_zero = false) const;
  // A finite number in [min, max].
  double number_in(std::string_view key, double min, double max) const;
  // An integer in [min, max]; 1e9-style floats with an integral value count as integers.
  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max) const;
  // A nested object, read with the same origin and a longer path.
  JsonFields object(std::string_view key) const;

  // Refuses any key not in `known`, with a "did you mean" when one is close.
  void refuse_unknown(std::initializer_list<std::string_view> known) const;

 private:
  const nlohmann::json& object_;
  std::string origin_;
  std::string path_;
};

// Names longer than this get no suggestion.
inline constexpr std::size_t kMaxSuggestedLength = 64;

// Edit-distance suggestion among `candidates`, or "" when none is close.
std::string closest_name(std::string_view unknown, const std::vector<std::string_view>& candidates);

}  // namespace ppsim
