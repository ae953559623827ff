// SPDX-License-Identifier: Apache-2.0
// Static validation of programs: the built-in schedules pass, and every broken rule is reported with
// the action that breaks it and its cell in the step x device grid.
#include "schedules/validate.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "schedules/registry.hpp"

using Catch::Matchers::Contains;
using ppsim::Action;
using ppsim::Op;
using ppsim::Program;

namespace {

// GPipe on two devices and two micro-batches, written out: the base every broken program starts from.
//   device 0: 0F0 0F1 0B0 0B1
//   device 1: 1F0 1F1 1B0 1B1
Program two_by_two() {
  Program program;
  program.num_devices = 2;
  program.num_microbatches = 2;
  program.stage_device = {0, 1};
  program.actions = {{{0, Op::kForward, 0}, {0, Op::kForward, 1}, {0, Op::kBackward, 0}, {0, Op::kBackward, 1}},
                     {{1, Op::kForward, 0}, {1, Op::kForward, 1}, {1, Op::kBackward, 0}, {1, Op::kBackward, 1}}};
  return program;
}

std::vector<Action>& list(Program& program, int device) { return program.actions[static_cast<std::size_t>(device)]; }

// Trailing blanks are padding, not content: compare grids line by line without them.
std::string strip_trailing_blanks(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::string out;
  while (std::getline(in, line)) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

}  // namespace

TEST_CASE("GPipe and 1F1B produce valid programs for every p up to 8 and m up to 16") {
  const std::string name = GENERATE(as<std::string>{}, "gpipe", "1f1b");
  const int p = GENERATE(range(1, 9));
  const ppsim::ScheduleInfo* info = ppsim::find_schedule(name);
  REQUIRE(info != nullptr);
  for (int m = 1; m <= 16; ++m) {
    const ppsim::ScheduleParams params{p, m, 1};
    INFO(name << " p=" << p << " m=" << m);
    REQUIRE_FALSE(info->check(params).has_value());
    const Program program = info->build(params);
    const auto problem = ppsim::validate_program(program);
    INFO((problem ? problem->message : std::string()));
    CHECK_FALSE(problem.has_value());
    // Both place stage d on device d and give every device one F and one B per micro-batch.
    CHECK(program.num_stages() == p);
    CHECK(program.num_ops() == static_cast<std::size_t>(2 * p * m));
  }
}

TEST_CASE("The unmodified two-device program is valid") {
  CHECK_FALSE(ppsim::validate_program(two_by_two()).has_value());
}

TEST_CASE("A broken program is rejected with a message naming the action and its grid cell") {
  struct Breakage {
    const char* what;
    std::function<void(Program&)> apply;
    const char* message;
    int device;
    std::size_t step;
  };
  const auto breakage = GENERATE(values<Breakage>({
      {"a missing F (and its B)",
       [](Program& p) {
         list(p, 1) = {{1, Op::kForward, 0}, {1, Op::kBackward, 0}};
       },
       "1F1 is missing", 1, 2},
      {"a missing F whose B is still there", [](Program& p) { list(p, 1).erase(list(p, 1).begin() + 1); },
       "1B1 comes before its forward 1F1", 1, 2},
      {"a missing B", [](Program& p) { list(p, 0).pop_back(); }, "0B1 (or 0I1 and 0W1) is missing", 0, 3},
      {"a duplicate F",
       [](Program& p) {
         list(p, 0).insert(list(p, 0).begin() + 2, {0, Op::kForward, 0});
       },
       "0F0 appears twice", 0, 2},
      {"a B before its F on the device", [](Program& p) { std::swap(list(p, 1)[1], list(p, 1)[3]); },
       "1B1 comes before its forward 1F1", 1, 1},
      {"a W without an I",
       [](Program& p) {
         list(p, 0)[2] = {0, Op::kBackwardWeight, 0};
       },
       "0W0 comes before its input-gradient backward 0I0", 0, 2},
      {"a W after a fused B",
       [](Program& p) {
         list(p, 0).push_back({0, Op::kBackwardWeight, 0});
       },
       "0W0 follows a full backward 0B0, which already computed the weight gradient", 0, 4},
      {"both B and I for one micro-batch",
       [](Program& p) {
         list(p, 0).insert(list(p, 0).begin() + 3, {0, Op::kBackwardInput, 0});
       },
       "0I0 repeats the backward of stage 0 micro-batch 0 (a backward is either one B or one I and one W)", 0, 3},
      {"an I whose W is missing",
       [](Program& p) {
         list(p, 1)[2] = {1, Op::kBackwardInput, 0};
       },
       "1W0 is missing", 1, 4},
      {"an action on the wrong device",
       [](Program& p) {
         list(p, 0).insert(list(p, 0).begin() + 1, {1, Op::kForward, 1});
       },
       "1F1 is on device 0 but stage 1 belongs to device 1", 0, 1},
      {"a stage out of range",
       [](Program& p) {
         list(p, 1)[0] = {2, Op::kForward, 0};
       },
       "2F0: stage 2 is outside 0..1", 1, 0},
      {"a micro-batch out of range",
       [](Program& p) {
         list(p, 0)[1] = {0, Op::kForward, 2};
       },
       "0F2: micro-batch 2 is outside 0..1", 0, 1},
  }));
  Program program = two_by_two();
  breakage.apply(program);
  INFO(breakage.what);
  const auto problem = ppsim::validate_program(program);
  REQUIRE(problem.has_value());
  CHECK(problem->message == breakage.message);
  REQUIRE(problem->where.has_value());
  CHECK(problem->where->device == breakage.device);
  CHECK(problem->where->step == breakage.step);
}

TEST_CASE("A program whose shape is wrong is rejected without a grid cell") {
  Program program = two_by_two();
  std::string expected;
  SECTION("wrong number of action lists") {
    program.actions.pop_back();
    expected = "program has 1 action lists for 2 devices";
  }
  SECTION("a stage mapped to a device that does not exist") {
    program.stage_device[1] = 5;
    expected = "stage 1 is mapped to device 5, outside 0..1";
  }
  SECTION("no micro-batches") {
    program.num_microbatches = 0;
    expected = "program has no micro-batches";
  }
  SECTION("no stages") {
    program.stage_device.clear();
    expected = "program has no stages";
  }
  const auto problem = ppsim::validate_program(program);
  REQUIRE(problem.has_value());
  CHECK(problem->message == expected);
  CHECK_FALSE(problem->where.has_value());
}

TEST_CASE("The step grid brackets the bad cell and points at its row") {
  Program program = two_by_two();
  std::swap(list(program, 1)[1], list(program, 1)[3]);  // device 1: 1F0 1B1 1B0 1F1
  const auto problem = ppsim::validate_program(program);
  REQUIRE(problem.has_value());
  REQUIRE(problem->where.has_value());
  const std::array marks{*problem->where};
  // Columns are 8 wide ("device 0") with two blanks between them; the step column is 4 wide.
  const std::string expected =
      "step  device 0  device 1\n"
      "0     0F0       1F0\n"
      "1     0F1       [1B1]  <-- here\n"
      "2     0B0       1B0\n"
      "3     0B1       1F1\n";
  const std::string grid = ppsim::format_step_grid(program, marks);
  INFO(grid);
  CHECK(strip_trailing_blanks(grid) == expected);
  // Marked rows end with the pointer, not with padding.
  CHECK_THAT(grid, Contains("[1B1]  <-- here\n"));
}

TEST_CASE("The step grid marks a missing op at the end of its device's list") {
  Program program = two_by_two();
  list(program, 1).pop_back();  // 1B1 missing: the mark is one past device 1's last step
  const auto problem = ppsim::validate_program(program);
  REQUIRE(problem.has_value());
  REQUIRE(problem->where.has_value());
  CHECK(problem->where->device == 1);
  CHECK(problem->where->step == 3);
  const std::array marks{*problem->where};
  const std::string expected =
      "step  device 0  device 1\n"
      "0     0F0       1F0\n"
      "1     0F1       1F1\n"
      "2     0B0       1B0\n"
      "3     0B1       [(end)]  <-- here\n";
  CHECK(strip_trailing_blanks(ppsim::format_step_grid(program, marks)) == expected);
}

TEST_CASE("The step grid elides rows far from every mark") {
  const Program program = ppsim::find_schedule("gpipe")->build({2, 8, 1});  // 16 steps per device
  const std::array marks{ppsim::GridMark{0, 10}};
  const std::string expected =
      "step  device 0  device 1\n"
      " ...\n"
      "9     0B1       1B1\n"
      "10    [0B2]     1B2  <-- here\n"
      "11    0B3       1B3\n"
      " ...\n";
  CHECK(strip_trailing_blanks(ppsim::format_step_grid(program, marks, 1)) == expected);
}
