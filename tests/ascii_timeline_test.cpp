// SPDX-License-Identifier: Apache-2.0
// The ASCII timeline: slot choice, labels, phase markers, width capping, and pinned pictures.
#include "sim/report/ascii_timeline.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/builders.hpp"
#include "sim/engine.hpp"
#include "support/report_fixtures.hpp"

namespace ppsim {
namespace {

Report simulate(const std::string& name, Program program, const UniformCosts& costs = {}) {
  return simulate_report(name, std::move(program), costs);
}

Report gpipe(int p, int m, const UniformCosts& costs = {}) { return simulate("gpipe", build_gpipe({p, m, 1}), costs); }
Report one_f_one_b(int p, int m, const UniformCosts& costs = {}) {
  return simulate("1f1b", build_one_f_one_b({p, m, 1}), costs);
}

// The device rows of a picture (they start with "d").
std::vector<std::string> device_rows(const std::string& text) {
  std::vector<std::string> rows;
  for (const std::string& line : lines_of(text)) {
    if (line.starts_with("d")) rows.push_back(line);
  }
  return rows;
}

// A row's cells, splitting on the separators (space or `|`) after the "dN |" frame.
std::vector<std::string> cells_of(const std::string& row, std::size_t cell_width) {
  std::vector<std::string> cells;
  const std::size_t first = row.find('|') + 1;
  for (std::size_t at = first; at < row.size(); at += cell_width + 1) {
    std::string cell = row.substr(at, cell_width);
    while (!cell.empty() && cell.back() == ' ') cell.pop_back();
    cells.push_back(cell);
  }
  return cells;
}

// Columns c whose left separator is a phase marker `|`.
std::set<std::size_t> marker_columns(const std::string& row, std::size_t cell_width) {
  std::set<std::size_t> columns;
  const std::size_t first = row.find('|') + 1;
  for (std::size_t c = 1; first + c * (cell_width + 1) - 1 < row.size(); ++c) {
    if (row[first + c * (cell_width + 1) - 1] == '|') columns.insert(c);
  }
  return columns;
}

}  // namespace

TEST_CASE("the gpipe timeline at p=4, m=8 with F=1 and B=2 matches the pinned picture", "[ascii_timeline]") {
  const std::string expected =
      "1 column = 1 time unit\n"
      "legend: | separates warmup | steady | cooldown; . idle\n"
      "d0 |F0 F1 F2 F3 F4 F5 F6 F7|.  .  .  .  .  .  .  .  . |B0 B0 B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 B6 B6 B7 B7\n"
      "d1 |.  F0 F1 F2 F3 F4 F5 F6 F7|.  .  .  .  .  . |B0 B0 B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 B6 B6 B7 B7 .  .\n"
      "d2 |.  .  F0 F1 F2 F3 F4 F5 F6 F7|.  .  . |B0 B0 B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 B6 B6 B7 B7 .  .  .  .\n"
      "d3 |.  .  .  F0 F1 F2 F3 F4 F5 F6 F7|B0 B0 B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 B6 B6 B7 B7 .  .  .  .  .  .\n";
  CHECK(render_ascii_timeline(gpipe(4, 8)) == expected);
}

TEST_CASE("the 1f1b timeline at p=4, m=8 with F=1 and B=2 matches the pinned picture", "[ascii_timeline]") {
  const std::string expected =
      "1 column = 1 time unit\n"
      "legend: | separates warmup | steady | cooldown; . idle\n"
      "d0 |F0 F1 F2 F3 .  .  .  .  .  . |B0 B0 F4 B1 B1 F5 B2 B2 F6 B3 B3 F7|B4 B4 .  B5 B5 .  B6 B6 .  B7 B7\n"
      "d1 |.  F0 F1 F2 .  .  .  . |B0 B0 F3 B1 B1 F4 B2 B2 F5 B3 B3 F6 B4 B4 F7|B5 B5 .  B6 B6 .  B7 B7 .  .\n"
      "d2 |.  .  F0 F1 .  . |B0 B0 F2 B1 B1 F3 B2 B2 F4 B3 B3 F5 B4 B4 F6 B5 B5 F7|B6 B6 .  B7 B7 .  .  .  .\n"
      "d3 |.  .  .  F0|B0 B0 F1 B1 B1 F2 B2 B2 F3 B3 B3 F4 B4 B4 F5 B5 B5 F6 B6 B6 F7|B7 B7 .  .  .  .  .  .\n";
  CHECK(render_ascii_timeline(one_f_one_b(4, 8)) == expected);
}

TEST_CASE("gpipe's first device runs every forward, idles, then repeats each backward label over its two slots",
          "[ascii_timeline]") {
  const std::vector<std::string> cells = cells_of(device_rows(render_ascii_timeline(gpipe(4, 8)))[0], 2);
  REQUIRE(cells.size() == 33);
  for (int j = 0; j < 8; ++j) CHECK(cells[static_cast<std::size_t>(j)] == "F" + std::to_string(j));
  for (std::size_t c = 8; c < 17; ++c) CHECK(cells[c] == ".");
  for (int j = 0; j < 8; ++j) {
    CHECK(cells[17 + 2 * static_cast<std::size_t>(j)] == "B" + std::to_string(j));
    CHECK(cells[18 + 2 * static_cast<std::size_t>(j)] == "B" + std::to_string(j));
  }
}

TEST_CASE("the slot is the largest time that divides every op start and end", "[ascii_timeline]") {
  struct Case {
    double forward;
    double backward;
    double slot;
  };
  const Case c = GENERATE(Case{1, 2, 1}, Case{2, 4, 2}, Case{1, 1.5, 0.5}, Case{0.5, 1, 0.5}, Case{3, 6, 3},
                          Case{2, 3, 1}, Case{0.1, 0.3, 0.1}, Case{1e-3, 2e-3, 1e-3});
  CAPTURE(c.forward, c.backward);
  const Report report = gpipe(4, 8, {.forward = {c.forward}, .backward = {c.backward}});
  const TimelineGrid grid = choose_timeline_grid(*report.result.timeline, 120);
  CHECK(grid.exact);
  CHECK(grid.slot == Approx(c.slot).epsilon(1e-12));
  CHECK(grid.origin == 0);
  CHECK(static_cast<double>(grid.columns) == Approx(report.result.makespan / c.slot));
}

TEST_CASE("the slot size is stated in the first line", "[ascii_timeline]") {
  CHECK(lines_of(render_ascii_timeline(gpipe(2, 2, {.forward = {1}, .backward = {1.5}})))[0] ==
        "1 column = 0.5 time units");
  CHECK(lines_of(render_ascii_timeline(gpipe(2, 2, {.forward = {2}, .backward = {4}})))[0] ==
        "1 column = 2 time units");
}

TEST_CASE("incommensurable op times fall back to makespan / max_columns", "[ascii_timeline]") {
  const Report report = gpipe(4, 8, {.forward = {1}, .backward = {std::sqrt(2.0)}});
  const TimelineGrid grid = choose_timeline_grid(*report.result.timeline, 60);
  CHECK_FALSE(grid.exact);
  CHECK(grid.columns == 60);
  CHECK(grid.slot == Approx(report.result.makespan / 60));
  const std::string text = render_ascii_timeline(report, 60);
  CHECK(lines_of(text)[0].find("scaled to fit") != std::string::npos);
  for (const std::string& row : device_rows(text)) CHECK(cells_of(row, 2).size() <= 60);
}

TEST_CASE("a grid that would need more than max_columns columns is scaled down", "[ascii_timeline]") {
  // F=1, B=1.01: the exact slot is 0.01, which needs thousands of columns.
  const Report report = gpipe(4, 8, {.forward = {1}, .backward = {1.01}});
  const TimelineGrid grid = choose_timeline_grid(*report.result.timeline, 120);
  CHECK_FALSE(grid.exact);
  CHECK(grid.columns == 120);
}

TEST_CASE("a large run is capped at max_columns cells per row", "[ascii_timeline]") {
  const Report report = gpipe(8, 64);  // makespan 213 time units
  const std::size_t max_columns = GENERATE(40u, 80u, 120u);
  CAPTURE(max_columns);
  const std::string text = render_ascii_timeline(report, max_columns);
  const std::vector<std::string> rows = device_rows(text);
  REQUIRE(rows.size() == 8);
  // Labels run up to F63, so every cell is 3 wide; d0 is busy at both ends, so its row is full length.
  CHECK(rows[0].size() == std::string("d0 |").size() + max_columns * 4 - 1);
  for (const std::string& row : rows) CHECK(row.size() <= rows[0].size());
  // Each cell shows the op at its midpoint. Device 0 runs F j over [j, j+1), idles until 85
  // (m + 3(p-1)), then runs B j over [85 + 2j, 87 + 2j).
  const std::vector<std::string> cells = cells_of(rows[0], 3);
  REQUIRE(cells.size() == max_columns);
  const double slot = 213.0 / static_cast<double>(max_columns);
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const double t = (static_cast<double>(c) + 0.5) * slot;
    const std::string expected = t < 64   ? "F" + std::to_string(static_cast<int>(t))
                                 : t < 85 ? std::string(".")
                                          : "B" + std::to_string(static_cast<int>((t - 85) / 2));
    CAPTURE(c, t);
    CHECK(cells[c] == expected);
  }
}

TEST_CASE("several stages per device label cells with the stage, as in 0F3", "[ascii_timeline]") {
  // p=2, v=2, loop placement {0,1,0,1}: device 0 holds stages 0 and 2, device 1 stages 1 and 3.
  Program program;
  program.num_devices = 2;
  program.num_microbatches = 2;
  program.stage_device = loop_stage_mapping(2, 2);
  REQUIRE(program.stage_device == std::vector<int>{0, 1, 0, 1});
  auto list = [](std::initializer_list<const char*> texts) {
    std::vector<Action> actions;
    for (const char* text : texts) actions.push_back(parse_action(text).action);
    return actions;
  };
  program.actions = {list({"0F0", "0F1", "2F0", "2F1", "2B0", "2B1", "0B0", "0B1"}),
                     list({"1F0", "1F1", "3F0", "3F1", "3B0", "3B1", "1B0", "1B1"})};
  const std::string text = render_ascii_timeline(simulate("hand", program));
  const std::string expected =
      "1 column = 1 time unit\n"
      "legend: | separates warmup | steady | cooldown; . idle\n"
      "d0 |0F0 0F1 2F0 2F1|.   .   .  |2B0 2B0 2B1 2B1 0B0 0B0 0B1 0B1\n"
      "d1 |.   1F0 1F1 3F0 3F1|3B0 3B0 3B1 3B1 1B0 1B0 1B1 1B1 .   .\n";
  CHECK(text == expected);
}

TEST_CASE("split backwards show as I and W cells, and I opens the steady phase", "[ascii_timeline]") {
  Program program;
  program.num_devices = 2;
  program.num_microbatches = 2;
  program.stage_device = loop_stage_mapping(2, 1);
  auto list = [](std::initializer_list<const char*> texts) {
    std::vector<Action> actions;
    for (const char* text : texts) actions.push_back(parse_action(text).action);
    return actions;
  };
  program.actions = {list({"0F0", "0F1", "0I0", "0I1", "0W0", "0W1"}),
                     list({"1F0", "1I0", "1F1", "1W0", "1I1", "1W1"})};
  // F=1, B=2 split as I=1 and W=1.
  const std::string text = render_ascii_timeline(simulate("hand", program, {.weight = {1}}));
  const std::string expected =
      "1 column = 1 time unit\n"
      "legend: | separates warmup | steady | cooldown; . idle\n"
      "d0 |F0 F1|. |I0 .  .  I1 W0 W1\n"
      "d1 |.  F0|I0 F1|W0 I1 W1 .  .\n";
  CHECK(text == expected);
}

TEST_CASE("phase markers sit before the first backward and after the last forward of each device", "[ascii_timeline]") {
  // With F=1, B=2 and free links, columns are time units: device d of gpipe ends its forwards at
  // 8 + d and starts its backwards at 17 - 2d; 1f1b starts backwards at 10 - 2d and ends forwards at 22 + d.
  const int d = GENERATE(0, 1, 2, 3);
  CAPTURE(d);
  const std::size_t u = static_cast<std::size_t>(d);
  const std::string gpipe_row = device_rows(render_ascii_timeline(gpipe(4, 8)))[u];
  const std::string one_f_one_b_row = device_rows(render_ascii_timeline(one_f_one_b(4, 8)))[u];
  CHECK(marker_columns(gpipe_row, 2) == std::set<std::size_t>{8 + u, 17 - 2 * u});
  CHECK(marker_columns(one_f_one_b_row, 2) == std::set<std::size_t>{10 - 2 * u, 22 + u});
}

TEST_CASE("phase markers agree with the engine's phase figures", "[ascii_timeline]") {
  const int p = GENERATE(1, 2, 3, 4);
  const int m = GENERATE(1, 4, 6);
  const bool use_gpipe = GENERATE(true, false);
  CAPTURE(p, m, use_gpipe);
  const Report report = use_gpipe ? gpipe(p, m) : one_f_one_b(p, m);
  const std::vector<std::string> rows = device_rows(render_ascii_timeline(report));
  for (std::size_t d = 0; d < rows.size(); ++d) {
    const auto& [warmup, steady, cooldown] = report.result.per_device[d].phases;
    // Steady runs from the first backward to the last forward; when it is empty (the first backward
    // follows the last forward) the first backward opens the cooldown and the last forward closes the warmup.
    const double first_backward = steady.ops > 0 ? steady.start : cooldown.start;
    const double last_forward = steady.ops > 0 ? steady.end : warmup.end;
    std::set<std::size_t> expected{static_cast<std::size_t>(std::llround(first_backward)),
                                   static_cast<std::size_t>(std::llround(last_forward))};
    expected.erase(0);
    CHECK(marker_columns(rows[d], 2) == expected);
  }
}

TEST_CASE("rendering the same report twice gives the same text", "[ascii_timeline]") {
  const Report report = one_f_one_b(8, 64);
  CHECK(render_ascii_timeline(report) == render_ascii_timeline(report));
  CHECK(render_ascii_timeline(report, 50) == render_ascii_timeline(report, 50));
}

TEST_CASE("a report without a recorded timeline says so instead of drawing", "[ascii_timeline]") {
  Report report = gpipe(2, 2);
  report.result.timeline.reset();
  CHECK(render_ascii_timeline(report) == "(no timeline recorded)\n");
}

}  // namespace ppsim
