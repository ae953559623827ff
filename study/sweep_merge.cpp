#include "study/sweep_merge.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "study/errors.hpp"
#include "study/sweep_output.hpp"

namespace ppsim {
namespace {

struct Row {
  std::size_t point = 0;
  std::string line;
  std::size_t file = 0;
};

std::string read_all(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(path + ": cannot read the file");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text, const std::string& path) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) throw InputError(path + ": the last line is cut short (no newline); was the run killed?");
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The point index at the start of a row: "17,run,..." or {"point":17,...}.
std::size_t point_of(const std::string& line, std::size_t prefix, const std::string& where) {
  std::size_t point = 0;
  const char* begin = line.data() + std::min(prefix, line.size());
  const char* end = line.data() + line.size();
  const auto [ptr, error] = std::from_chars(begin, end, point);
  if (error != std::errc() || ptr == begin || ptr == end || *ptr != ',') {
    throw InputError(where + ": not a row of ppsim sweep (it starts with the point number)");
  }
  return point;
}

std::string keys_of(const std::string& line, const std::string& where) {
  try {
    const auto row = nlohmann::ordered_json::parse(line);
    std::string keys;
    for (const auto& [key, value] : row.items()) keys += key + ",";
    return keys;
  } catch (const nlohmann::json::exception&) {  // parse_error, and out_of_range for 1e309
    throw InputError(where + ": not a JSON line");
  }
}

}  // namespace

std::string merge_sweep_files(const std::string& output, const std::vector<std::string>& inputs) {
  const SweepFormat format = sweep_format_for(output, "-o");
  if (inputs.empty()) throw InputError("merge: give the shards' output files to join");
  const bool csv = format == SweepFormat::kCsv;
  std::string header;  // CSV: the header line; JSONL: the keys of the first row
  std::string header_file;
  std::vector<Row> rows;
  for (std::size_t f = 0; f < inputs.size(); ++f) {
    const std::string& path = inputs[f];
    if (sweep_format_for(path, path) != format) {
      throw InputError(path + ": is not " + (csv ? "CSV" : "JSON Lines") + " like " + output + "; merge files of one kind");
    }
    const std::vector<std::string> lines = lines_of(read_all(path), path);
    std::size_t first = 0;
    if (csv) {
      if (lines.empty() || !lines[0].starts_with("point,status,")) {
        throw InputError(path + ": line 1: not the header of a ppsim sweep CSV");
      }
      first = 1;
    }
    // Every file has the same columns: one study's shards.
    if (csv || lines.size() > first) {
      const std::string where = path + ": line " + std::to_string(csv ? 1 : first + 1);
      const std::string shape = csv ? lines[0] : keys_of(lines[first], where);
      if (header.empty()) {
        header = shape;
        header_file = path;
      } else if (shape != header) {
        throw InputError(where + ": its columns differ from " + header_file + "; are both from the same study?");
      }
    }
    for (std::size_t l = first; l < lines.size(); ++l) {
      const std::string where = path + ": line " + std::to_string(l + 1);
      if (!csv && !lines[l].starts_with("{\"point\":")) throw InputError(where + ": not a row of ppsim sweep");
      rows.push_back({point_of(lines[l], csv ? 0 : 9, where), lines[l], f});
    }
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.point < b.point; });
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i > 0 && rows[i].point == rows[i - 1].point) {
      throw InputError(inputs[rows[i].file] + ": point " + std::to_string(rows[i].point) + " is also in " +
                       inputs[rows[i - 1].file] + "; each shard's file once, please");
    }
    if (rows[i].point != i) {
      throw InputError("merge: point " + std::to_string(i) +
                       " is in no input file; is a shard's file missing? (--shard I/N writes the points with "
                       "index % N == I)");
    }
  }
  std::string text = csv && !header.empty() ? header + "\n" : "";
  for (const Row& row : rows) text += row.line + "\n";
  return text;
}

}  // namespace ppsim
