// SPDX-License-Identifier: Apache-2.0
#include "support/golden.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

namespace ppsim {

std::vector<std::vector<Action>> read_schedule_csv(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<std::vector<Action>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<Action> row;
    std::stringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) {
      const ActionParse parsed = parse_action(cell);
      INFO(path << " row " << rows.size() << " cell '" << cell << "': " << parsed.error);
      REQUIRE(parsed.ok);
      row.push_back(parsed.action);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string to_csv(const Program& program) {
  std::string text;
  for (const auto& list : program.actions) {
    for (std::size_t i = 0; i < list.size(); ++i) text += (i == 0 ? "" : ",") + to_string(list[i]);
    text += '\n';
  }
  return text;
}

std::vector<std::string> read_golden_lines(const std::string& name) {
  std::ifstream file(std::string(PPSIM_GOLDEN_DIR) + "/" + name);
  INFO(name);
  REQUIRE(file.good());
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) {
    if (!line.empty() && line.front() != '#') lines.push_back(line);
  }
  return lines;
}

}  // namespace ppsim
