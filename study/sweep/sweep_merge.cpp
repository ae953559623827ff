// SPDX-License-Identifier: Apache-2.0
#include "study/sweep/sweep_merge.hpp"

#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "models/json/json_document.hpp"
#include "study/common/errors.hpp"
#include "study/sweep/sweep_shard_record.hpp"

namespace ppsim {
namespace {

// One row of a shard file: its text (without the newline) and the line it starts on.
struct Row {
  std::string_view text;
  std::size_t line = 0;
};

struct ParsedShard {
  const ShardText* file = nullptr;
  ShardRecord record;
  std::string_view header;  // CSV: the header row; JSONL: empty
  std::string keys;         // JSONL: the keys of the first row, in order
  std::vector<Row> rows;
};

std::string at(const ShardText& file, std::size_t line) { return file.name + ": line " + std::to_string(line); }

// Splits CSV text into records: a newline inside a quoted cell belongs to its cell. `cells` gets
// each record's cell count; a quote that is not RFC 4180's (a cell either quoted whole, with ""
// inside, or not at all) is InputError.
std::vector<Row> csv_records(std::string_view text, std::size_t first_line, const ShardText& file,
                             std::vector<std::size_t>& cells) {
  std::vector<Row> rows;
  std::size_t start = 0;
  std::size_t line = first_line;
  while (start < text.size()) {
    const std::size_t row_line = line;
    std::size_t count = 1;
    bool quoted = false;
    bool cell_start = true;
    std::size_t i = start;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (quoted) {
        if (c == '\n') ++line;
        if (c != '"') continue;
        if (i + 1 < text.size() && text[i + 1] == '"') {
          ++i;
          continue;
        }
        quoted = false;
        if (i + 1 < text.size() && text[i + 1] != ',' && text[i + 1] != '\n') {
          throw InputError(at(file, line) + ": a quoted cell ends before its comma; the row is damaged");
        }
        continue;
      }
      if (c == '\n') break;
      if (c == ',') {
        ++count;
        cell_start = true;
        continue;
      }
      if (c == '"') {
        if (!cell_start) throw InputError(at(file, line) + ": a quote inside an unquoted cell; the row is damaged");
        quoted = true;
      }
      cell_start = false;
    }
    if (i >= text.size()) {
      throw InputError(at(file, row_line) + ": the last row is cut short (no newline); was the run killed?");
    }
    rows.push_back({text.substr(start, i - start), row_line});
    cells.push_back(count);
    start = i + 1;
    ++line;
  }
  return rows;
}

std::vector<Row> lines_of(std::string_view text, std::size_t first_line, const ShardText& file) {
  std::vector<Row> rows;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      throw InputError(at(file, first_line + rows.size()) + ": the last row is cut short (no newline); was the run killed?");
    }
    rows.push_back({text.substr(start, end - start), first_line + rows.size()});
    start = end + 1;
  }
  return rows;
}

// The point index a CSV row starts with ("17,run,...").
std::optional<std::size_t> csv_point(std::string_view row) {
  std::size_t point = 0;
  const auto [end, error] = std::from_chars(row.data(), row.data() + row.size(), point);
  if (error != std::errc() || end == row.data() || end == row.data() + row.size() || *end != ',') return std::nullopt;
  return point;
}

// A JSONL row's keys in order, and its point; InputError when it is not an object starting with an
// unsigned "point".
std::size_t json_point(std::string_view row, const std::string& where, std::string& keys) {
  nlohmann::ordered_json json;
  try {
    json = parse_ordered_json_text(row, where);
  } catch (const JsonInputError&) {
    throw InputError(where + ": not a JSON line; the row is damaged");
  }
  if (!json.is_object() || json.empty() || json.begin().key() != "point" || !json.begin().value().is_number_unsigned()) {
    throw InputError(where + ": not a row of ppsim sweep (an object that starts with \"point\")");
  }
  keys.clear();
  for (const auto& item : json.items()) keys += item.key() + ",";
  return json.begin().value().get<std::size_t>();
}

ParsedShard parse_shard_file(const ShardText& file, SweepFormat format) {
  const bool csv = format == SweepFormat::kCsv;
  ParsedShard shard;
  shard.file = &file;
  const std::string_view text = file.text;
  const std::size_t end = text.find('\n');
  const std::string_view first = text.substr(0, end);
  if (!looks_like_shard_record(first, format)) {
    throw InputError(at(file, 1) +
                     ": not a shard's file (ppsim sweep --shard I/N starts it with its #ppsim-shard record; a file "
                     "written without --shard holds every point already)");
  }
  if (end == std::string_view::npos) throw InputError(at(file, 1) + ": the shard record is cut short (no newline)");
  shard.record = parse_shard_record(first, format, at(file, 1));
  const std::string_view body = text.substr(end + 1);

  std::vector<std::size_t> cells;
  std::vector<Row> rows = csv ? csv_records(body, 2, file, cells) : lines_of(body, 2, file);
  std::size_t header_cells = 0;
  if (csv) {
    if (rows.empty() || !rows[0].text.starts_with("point,status,")) {
      throw InputError(at(file, 2) + ": not the header of a ppsim sweep CSV");
    }
    shard.header = rows[0].text;
    header_cells = cells[0];
  }
  const std::size_t first_row = csv ? 1 : 0;
  const std::size_t count = rows.size() - first_row;
  const std::string shard_name = std::to_string(shard.record.index) + "/" + std::to_string(shard.record.count);
  if (count != shard.record.points) {
    throw InputError(file.name + ": holds " + std::to_string(count) + (count == 1 ? " row" : " rows") +
                     " where its record says shard " + shard_name +
                     " has " + std::to_string(shard.record.points) + "; rows were lost or added, rerun that shard");
  }
  std::string keys;
  for (std::size_t r = first_row; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const std::string where = at(file, row.line);
    std::size_t point = 0;
    if (csv) {
      if (cells[r] != header_cells) {
        throw InputError(where + ": " + std::to_string(cells[r]) + " cells where the header has " +
                         std::to_string(header_cells) + "; the row is damaged");
      }
      const std::optional<std::size_t> number = csv_point(row.text);
      if (!number) throw InputError(where + ": not a row of ppsim sweep (it starts with the point number)");
      point = *number;
    } else {
      point = json_point(row.text, where, keys);
      if (r == first_row) {
        shard.keys = keys;
      } else if (keys != shard.keys) {
        throw InputError(where + ": its keys differ from line " + std::to_string(rows[first_row].line) +
                         "'s; the row is damaged");
      }
    }
    const std::size_t expected = shard.record.index + (r - first_row) * shard.record.count;
    if (point != expected) {
      throw InputError(where + ": point " + std::to_string(point) + " where shard " + shard_name + " has point " +
                       std::to_string(expected) + "; the row is damaged");
    }
    shard.rows.push_back(row);
  }
  if (content_checksum(body) != shard.record.checksum) {
    throw InputError(file.name + ": its bytes do not match its record's checksum (a changed byte); rerun that shard");
  }
  return shard;
}

// The shards of one study and one split, each once, none missing.
void check_complete(const std::vector<ParsedShard>& shards, const std::vector<const ParsedShard*>& by_index) {
  const ParsedShard& first = shards.front();
  for (const ParsedShard& shard : shards) {
    const std::string& name = shard.file->name;
    if (shard.record.study != first.record.study || shard.record.total != first.record.total) {
      throw InputError(name + ": is from another study than " + first.file->name + " (study " + shard.record.study +
                       ", not " + first.record.study + ")");
    }
    if (shard.record.count != first.record.count) {
      throw InputError(name + ": is shard " + std::to_string(shard.record.index) + "/" +
                       std::to_string(shard.record.count) + " but " + first.file->name + " is one of " +
                       std::to_string(first.record.count) + "; merge the shards of one split");
    }
    if (shard.header != first.header || (!shard.keys.empty() && !first.keys.empty() && shard.keys != first.keys)) {
      throw InputError(name + ": its columns differ from " + first.file->name + "'s; are both from the same version?");
    }
  }
  std::string missing;
  std::size_t missing_count = 0;
  for (std::size_t i = 0; i < by_index.size(); ++i) {
    if (by_index[i] != nullptr) continue;
    if (++missing_count <= 8) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(by_index.size());
  }
  if (missing_count > 0) {
    throw InputError("merge: shard" + std::string(missing_count > 1 ? "s " : " ") + missing +
                     (missing_count > 8 ? " and " + std::to_string(missing_count - 8) + " more" : "") +
                     (missing_count > 1 ? " are" : " is") + " missing; give every shard's file");
  }
}

}  // namespace

std::string merge_sweep_texts(SweepFormat format, const std::vector<ShardText>& shards) {
  if (shards.empty()) throw InputError("merge: give the shards' output files to join");
  std::vector<ParsedShard> parsed;
  parsed.reserve(shards.size());
  for (const ShardText& file : shards) parsed.push_back(parse_shard_file(file, format));
  // The first file's split decides how many shards there are; check_complete refuses the others.
  std::vector<const ParsedShard*> by_index(parsed.front().record.count, nullptr);
  for (const ParsedShard& shard : parsed) {
    if (shard.record.index >= by_index.size()) continue;  // another split: check_complete says so
    if (const ParsedShard* other = by_index[shard.record.index]) {
      if (other->record.count == shard.record.count) {
        throw InputError(shard.file->name + ": shard " + std::to_string(shard.record.index) + "/" +
                         std::to_string(shard.record.count) + " is also in " + other->file->name +
                         "; each shard's file once, please");
      }
    }
    by_index[shard.record.index] = &shard;
  }
  check_complete(parsed, by_index);
  std::string text = format == SweepFormat::kCsv ? std::string(parsed.front().header) + "\n" : "";
  const std::size_t count = by_index.size();
  for (std::size_t point = 0; point < parsed.front().record.total; ++point) {
    text += by_index[point % count]->rows[point / count].text;
    text += '\n';
  }
  return text;
}

std::string merge_sweep_files(const std::string& output, const std::vector<std::string>& inputs) {
  const SweepFormat format = sweep_format_for(output, "-o");
  if (inputs.empty()) throw InputError("merge: give the shards' output files to join");
  std::vector<ShardText> shards;
  for (const std::string& path : inputs) {
    if (sweep_format_for(path, path) != format) {
      throw InputError(path + ": is not " + (format == SweepFormat::kCsv ? "CSV" : "JSON Lines") + " like " + output +
                       "; merge files of one kind");
    }
    try {
      shards.push_back({path, read_bounded_file(path, kMaxShardFileBytes, "shard file")});
    } catch (const JsonInputError& error) {
      throw InputError(error.what());
    }
  }
  return merge_sweep_texts(format, shards);
}

}  // namespace ppsim
