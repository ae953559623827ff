// SPDX-License-Identifier: Apache-2.0
#include "study/sweep/sweep_shard_record.hpp"

#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "models/json/json_document.hpp"
#include "study/common/errors.hpp"

namespace ppsim {
namespace {

constexpr std::string_view kCsvTag = "#ppsim-shard ";
constexpr std::string_view kJsonKey = "ppsim-shard";
constexpr std::string_view kJsonStart = "{\"ppsim-shard\":";

[[noreturn]] void malformed(const std::string& where, const std::string& why) {
  throw InputError(where + ": the shard record is damaged (" + why + "); rerun that shard");
}

bool whole_number(std::string_view text, std::size_t& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

bool hex16(std::string_view text) {
  if (text.size() != 16) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// "I/N" with 0 <= I < N.
bool shard_of(std::string_view text, std::size_t& index, std::size_t& count) {
  const std::size_t slash = text.find('/');
  return slash != std::string_view::npos && whole_number(text.substr(0, slash), index) &&
         whole_number(text.substr(slash + 1), count) && count > 0 && index < count;
}

// Every field present and in range, the point count the one shard I of N of `total` holds.
void check_consistent(const ShardRecord& record, const std::string& where) {
  // No study has more points (kMaxStudyPoints), and --shard splits into no more shards than that.
  if (record.total < 1 || record.total > kMaxStudyPoints) malformed(where, "total is not a study's point count");
  if (record.count > kMaxStudyPoints) malformed(where, "shard splits into more shards than a study has points");
  if (!hex16(record.study)) malformed(where, "study is not 16 hex digits");
  if (!hex16(record.checksum)) malformed(where, "checksum is not 16 hex digits");
  if (record.points != shard_point_count(record.total, record.index, record.count)) {
    malformed(where, "shard " + std::to_string(record.index) + "/" + std::to_string(record.count) + " of " +
                         std::to_string(record.total) + " points cannot hold " + std::to_string(record.points));
  }
}

ShardRecord parse_csv_record(std::string_view line, const std::string& where) {
  if (!line.starts_with(kCsvTag)) malformed(where, "it does not start with #ppsim-shard");
  std::vector<std::string_view> fields;
  std::string_view rest = line.substr(kCsvTag.size());
  while (!rest.empty()) {
    const std::size_t space = rest.find(' ');
    fields.push_back(rest.substr(0, space));
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  constexpr std::string_view kKeys[] = {"study=", "shard=", "points=", "total=", "checksum="};
  if (fields.size() != std::size(kKeys)) malformed(where, "it needs study, shard, points, total and checksum");
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (!fields[i].starts_with(kKeys[i])) malformed(where, "field " + std::to_string(i + 1) + " is not " + std::string(kKeys[i]));
    fields[i].remove_prefix(kKeys[i].size());
  }
  ShardRecord record;
  record.study = fields[0];
  if (!shard_of(fields[1], record.index, record.count)) malformed(where, "shard is not I/N with I < N");
  if (!whole_number(fields[2], record.points)) malformed(where, "points is not a whole number");
  if (!whole_number(fields[3], record.total)) malformed(where, "total is not a whole number");
  record.checksum = fields[4];
  return record;
}

ShardRecord parse_json_record(std::string_view line, const std::string& where) {
  nlohmann::ordered_json json;
  try {
    json = parse_ordered_json_text(line, where);
  } catch (const JsonInputError&) {
    malformed(where, "not JSON");
  }
  if (!json.is_object() || json.size() != 1 || !json.contains(kJsonKey) || !json[kJsonKey].is_object()) {
    malformed(where, "not {\"ppsim-shard\": {...}}");
  }
  const nlohmann::ordered_json& fields = json[kJsonKey];
  auto text = [&](const char* key) {
    if (!fields.contains(key) || !fields[key].is_string()) malformed(where, std::string(key) + " is not a string");
    return fields[key].get<std::string>();
  };
  auto number = [&](const char* key) {
    if (!fields.contains(key) || !fields[key].is_number_unsigned()) {
      malformed(where, std::string(key) + " is not a whole number");
    }
    return fields[key].get<std::size_t>();
  };
  if (fields.size() != 5) malformed(where, "it needs study, shard, points, total and checksum");
  ShardRecord record;
  record.study = text("study");
  if (!shard_of(text("shard"), record.index, record.count)) malformed(where, "shard is not I/N with I < N");
  record.points = number("points");
  record.total = number("total");
  record.checksum = text("checksum");
  return record;
}

}  // namespace

std::string content_checksum(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a's offset basis and prime (Fowler, Noll, Vo)
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, hash >>= 4) text[static_cast<std::size_t>(i)] = kDigits[hash & 0xf];
  return text;
}

std::string study_fingerprint(std::string_view compact_json) { return content_checksum(compact_json); }

std::size_t shard_point_count(std::size_t total, std::size_t index, std::size_t count) {
  return index < total ? (total - index + count - 1) / count : 0;
}

std::string shard_record_line(const ShardRecord& record, SweepFormat format) {
  const std::string shard = std::to_string(record.index) + "/" + std::to_string(record.count);
  if (format == SweepFormat::kCsv) {
    return std::string(kCsvTag) + "study=" + record.study + " shard=" + shard + " points=" +
           std::to_string(record.points) + " total=" + std::to_string(record.total) + " checksum=" + record.checksum;
  }
  nlohmann::ordered_json fields;
  fields["study"] = record.study;
  fields["shard"] = shard;
  fields["points"] = record.points;
  fields["total"] = record.total;
  fields["checksum"] = record.checksum;
  nlohmann::ordered_json line;
  line[kJsonKey] = fields;
  return line.dump();
}

ShardRecord parse_shard_record(std::string_view line, SweepFormat format, const std::string& where) {
  ShardRecord record = format == SweepFormat::kCsv ? parse_csv_record(line, where) : parse_json_record(line, where);
  check_consistent(record, where);
  return record;
}

std::string shard_output(const Study& study, const std::vector<PointResult>& points, SweepFormat format,
                         std::size_t shard_index, std::size_t shard_count) {
  const std::string rows = sweep_output(study, points, format);
  ShardRecord record;
  record.study = study.fingerprint;
  record.index = shard_index;
  record.count = shard_count;
  record.points = points.size();
  record.total = study.points;
  record.checksum = content_checksum(rows);
  return shard_record_line(record, format) + "\n" + rows;
}

bool looks_like_shard_record(std::string_view line, SweepFormat format) {
  return format == SweepFormat::kCsv ? line.starts_with("#ppsim-shard") : line.starts_with(kJsonStart);
}

}  // namespace ppsim
