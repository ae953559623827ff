// SPDX-License-Identifier: Apache-2.0
// Schedule files: torch.distributed.pipelining's CSV read and written, JSON written, the shape inferred
// from the actions, and every refusal with its message and its cell in the step x device grid.
#include "schedules/schedule_file.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/builders.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/invariants.hpp"

using Catch::Matchers::Contains;
using ppsim::Program;
using ppsim::ScheduleFileParse;

namespace {

std::string data_path(const std::string& name) {
  return std::string(PPSIM_SOURCE_DIR) + "/tests/data/schedule_files/" + name;
}

// Binary mode: the files' CRLF line ends are part of what is compared.
std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string problem_of(const ScheduleFileParse& parse) { return parse.problem ? parse.problem->message : ""; }

// Requires a clean parse and returns its program.
Program parsed_csv(std::string_view text) {
  const ScheduleFileParse parse = ppsim::parse_schedule_csv(text);
  INFO(problem_of(parse));
  REQUIRE(parse.ok());
  return parse.program;
}

void check_same_program(const Program& actual, const Program& expected) {
  CHECK(actual.num_devices == expected.num_devices);
  CHECK(actual.num_microbatches == expected.num_microbatches);
  CHECK(actual.stage_device == expected.stage_device);
  CHECK(actual.actions == expected.actions);
}

ppsim::UniformCostModel unit_costs() {
  ppsim::UniformCosts costs;
  costs.forward = ppsim::Duration{1};
  costs.backward = ppsim::Duration{2};
  costs.weight = ppsim::Duration{1};
  costs.latency = ppsim::Duration{0.5};
  return ppsim::UniformCostModel(costs);
}

// GPipe at p=2, m=2 as _dump_csv writes it; the variants below must all read as this.
constexpr std::string_view kGpipeP2M2 = "0F0,0F1,0B0,0B1\r\n1F0,1F1,1B0,1B1\r\n";

}  // namespace

TEST_CASE("A program is written as torch's _dump_csv writes it: one CRLF-terminated row of actions per device",
          "[schedule-file]") {
  CHECK(ppsim::write_schedule_csv(ppsim::build_gpipe({2, 2, 1})) == kGpipeP2M2);
  CHECK(ppsim::write_schedule_csv(ppsim::build_one_f_one_b({2, 3, 1})) ==
        "0F0,0F1,0B0,0F2,0B1,0B2\r\n1F0,1B0,1F1,1B1,1F2,1B2\r\n");
}

TEST_CASE("GPipe and 1F1B read back as the same program after writing, and rewrite to the same bytes",
          "[schedule-file]") {
  const bool gpipe = GENERATE(true, false);
  const int p = GENERATE(range(1, 7));
  const int m = GENERATE(1, 2, 3, 4, 7, 8, 16);
  INFO((gpipe ? "gpipe" : "1f1b") << " p=" << p << " m=" << m);
  const Program built = gpipe ? ppsim::build_gpipe({p, m, 1}) : ppsim::build_one_f_one_b({p, m, 1});
  const std::string text = ppsim::write_schedule_csv(built);
  const Program read = parsed_csv(text);
  check_same_program(read, built);
  CHECK(ppsim::write_schedule_csv(read) == text);
}

TEST_CASE("The golden CSV schedules, written with LF line ends, read as the built GPipe and 1F1B", "[schedule-file]") {
  const bool gpipe = GENERATE(true, false);
  const std::string path = std::string(PPSIM_GOLDEN_DIR) + (gpipe ? "/gpipe_p4_m8.csv" : "/1f1b_p4_m8.csv");
  INFO(path);
  const Program read = parsed_csv(read_text(path));
  check_same_program(read, gpipe ? ppsim::build_gpipe({4, 8, 1}) : ppsim::build_one_f_one_b({4, 8, 1}));
}

TEST_CASE("A hand-written V-shaped program infers the V stage map, round-trips byte for byte and runs",
          "[schedule-file]") {
  // Device 0 holds stages 0 and 3, device 1 stages 1 and 2: the first and last stage share device 0.
  const std::string text = read_text(data_path("v_shape_p2_m2.csv"));
  const Program program = parsed_csv(text);
  CHECK(program.num_devices == 2);
  CHECK(program.num_microbatches == 2);
  CHECK(program.stage_device == ppsim::v_stage_mapping(2));
  CHECK(program.num_ops() == 16);
  CHECK_FALSE(ppsim::validate_program(program).has_value());
  CHECK(ppsim::write_schedule_csv(program) == text);
  const ppsim::Result result = ppsim::run_checked(program, unit_costs());
  CHECK(result.makespan > 0);
}

TEST_CASE("A program with split backwards (I and W) round-trips byte for byte and runs", "[schedule-file]") {
  const std::string text = read_text(data_path("zero_bubble_p2_m2.csv"));
  const Program program = parsed_csv(text);
  CHECK(program.stage_device == std::vector<int>{0, 1});
  CHECK(program.num_microbatches == 2);
  CHECK(program.actions[1][1] == ppsim::Action{1, ppsim::Op::kBackwardInput, 0});
  CHECK(program.actions[0][4] == ppsim::Action{0, ppsim::Op::kBackwardWeight, 0});
  CHECK_FALSE(ppsim::validate_program(program).has_value());
  CHECK(ppsim::write_schedule_csv(program) == text);
  const ppsim::Result result = ppsim::run_checked(program, unit_costs());
  CHECK(result.makespan > 0);
}

TEST_CASE("Idle cells, blanks, line ends, quotes, trailing blank rows and a BOM read as the canonical file",
          "[schedule-file]") {
  const std::string text =
      GENERATE(as<std::string>{},
               "0F0,0F1,0B0,0B1\n1F0,1F1,1B0,1B1\n",                    // LF, as the golden files
               "0F0,0F1,0B0,0B1\r1F0,1F1,1B0,1B1",                      // CR, no final line end
               "0F0,,0F1,0B0,,,0B1\r\n,1F0,1F1,1B0,1B1,\r\n",           // idle steps, as torch writes None
               " 0F0 ,\t0F1,0B0 , 0B1\r\n1F0,1F1 ,1B0,1B1\r\n",         // blanks, which from_str strips
               "\"0F0\",0F1,0B0,0B1\r\n1F0,\"1F1\",\"\",1B0,1B1\r\n",   // quoted, as csv.reader reads
               "0F0,0F1,0B0,0B1\r\n1F0,1F1,1B0,1B1\r\n\r\n \r\n,\r\n",  // blank rows at the end
               "\xEF\xBB\xBF"
               "0F0,0F1,0B0,0B1\r\n1F0,1F1,1B0,1B1\r\n");  // a spreadsheet's byte-order mark
  INFO(text);
  const Program program = parsed_csv(text);
  check_same_program(program, ppsim::build_gpipe({2, 2, 1}));
  CHECK(ppsim::write_schedule_csv(program) == kGpipeP2M2);
}

TEST_CASE("The idle-cell example file reads with its empty cells skipped", "[schedule-file]") {
  const Program program = parsed_csv(read_text(data_path("idle_cells_p2_m2.csv")));
  check_same_program(program, ppsim::build_gpipe({2, 2, 1}));
}

TEST_CASE("A broken schedule file is refused with a message naming its cell and the cell's grid position",
          "[schedule-file]") {
  struct Case {
    const char* what;
    const char* text;
    const char* message;
    std::optional<ppsim::GridMark> where;
  };
  const auto c = GENERATE(values<Case>({
      {"an unknown op", "0F0,0F1,0B0,0B1\r\n1F0,1X1,1B0,1B1\r\n",
       "row 2 (device 1), column 2: '1X1' is not an action (unknown op 'X'; expected [stage][F|B|I|W][micro-batch], "
       "e.g. 0F1)",
       ppsim::GridMark{1, 1}},
      {"a bad cell after idle cells: the column counts them, the step does not", "0F0,,,0F1,0F2x\r\n",
       "row 1 (device 0), column 5: '0F2x' is not an action (unexpected 'x' in the micro-batch number; expected "
       "[stage][F|B|I|W][micro-batch], e.g. 0F1)",
       ppsim::GridMark{0, 2}},
      // Communication ops are read (torch's lowered format); a malformed one is named.
      {"a torch communication op without its micro-batch", "0F0,0SEND_F\r\n",
       "row 1 (device 0), column 2: '0SEND_F': SEND_F needs a micro-batch, as in 0SEND_F0", ppsim::GridMark{0, 1}},
      {"a leading zero", "0F0,0B0\r\n01F0,1B0\r\n",
       "row 2 (device 1), column 1: '01F0' is not an action (stage number has a leading zero; expected "
       "[stage][F|B|I|W][micro-batch], e.g. 0F1)",
       ppsim::GridMark{1, 0}},
      {"the first bad cell in row order wins", "0F0,0Q0\r\n1Z0\r\n",
       "row 1 (device 0), column 2: '0Q0' is not an action (unknown op 'Q'; expected [stage][F|B|I|W][micro-batch], "
       "e.g. 0F1)",
       ppsim::GridMark{0, 1}},
      {"an unclosed quote", "0F0,0B0\r\n1F0,\"1B0\r\n",
       "row 2 (device 1), column 2: a quoted cell has no closing quote", ppsim::GridMark{1, 1}},
      {"a stage on two devices", "0F0,0F1,1F0,0B0,0B1\r\n1F1,1B0,1B1\r\n",
       "row 2 (device 1), column 1: 1F1 is on device 1, but stage 1 is on device 0 (row 1, column 3: 1F0)",
       ppsim::GridMark{1, 0}},
      {"a missing stage", "0F0,0B0\r\n1F0,1B0\r\n3F0,3B0\r\n",
       "no row holds stage 2, but rows hold stages up to 3; stages are numbered 0..3 without gaps", std::nullopt},
      {"no stage 0", "1F0,1B0\r\n",
       "no row holds stage 0, but rows hold stages up to 1; stages are numbered 0..1 "
       "without gaps",
       std::nullopt},
      {"an empty file", "", "the schedule has no actions (expected one row of actions per device)", std::nullopt},
      {"a file of blank lines and empty cells", "\r\n  \r\n,,\r\n",
       "the schedule has no actions (expected one row of actions per device)", std::nullopt},
      {"a blank row between devices", "0F0,0B0\r\n\r\n1F0,1B0\r\n",
       "row 2 (device 1) has no actions; every device must run at least one stage", ppsim::GridMark{1, 0}},
      {"a micro-batch number far beyond the others", "0F0,0F1,0B0,0B1\r\n1F0,1F1,1B0,1B10\r\n",
       "row 2 (device 1), column 4: 1B10 implies 11 micro-batches, but 2 stages and 11 micro-batches need more than "
       "twice the 8 actions in the schedule (a forward and a backward each)",
       ppsim::GridMark{1, 3}},
      {"the largest micro-batch number there is", "0F2147483647,0B0\r\n",
       "row 1 (device 0), column 1: 0F2147483647 implies 2147483648 micro-batches, but 1 stages and 2147483648 "
       "micro-batches need more than twice the 2 actions in the schedule (a forward and a backward each)",
       ppsim::GridMark{0, 0}},
  }));
  INFO(c.what);
  const ScheduleFileParse parse = ppsim::parse_schedule_csv(c.text);
  REQUIRE_FALSE(parse.ok());
  CHECK(parse.problem->message == c.message);
  REQUIRE(parse.problem->where.has_value() == c.where.has_value());
  if (c.where) {
    CHECK(parse.problem->where->device == c.where->device);
    CHECK(parse.problem->where->step == c.where->step);
  }
}

TEST_CASE("The broken example files are refused with the messages their names promise", "[schedule-file]") {
  struct Case {
    const char* file;
    const char* message;
  };
  const auto c = GENERATE(values<Case>({
      {"broken_bad_action.csv",
       "row 2 (device 1), column 2: '1X1' is not an action (unknown op 'X'; expected [stage][F|B|I|W][micro-batch], "
       "e.g. 0F1)"},
      {"broken_stage_on_two_devices.csv",
       "row 2 (device 1), column 1: 1F1 is on device 1, but stage 1 is on device 0 (row 1, column 3: 1F0)"},
      {"broken_missing_stage.csv",
       "no row holds stage 2, but rows hold stages up to 3; stages are numbered 0..3 without gaps"},
      {"broken_empty.csv", "the schedule has no actions (expected one row of actions per device)"},
  }));
  INFO(c.file);
  const ScheduleFileParse parse = ppsim::parse_schedule_csv(read_text(data_path(c.file)));
  REQUIRE_FALSE(parse.ok());
  CHECK(parse.problem->message == c.message);
}

TEST_CASE("The grid of a file with a bad cell shows every row read and marks the cell where its device's list stops",
          "[schedule-file]") {
  const ScheduleFileParse parse = ppsim::parse_schedule_csv(read_text(data_path("broken_bad_action.csv")));
  REQUIRE(parse.problem.has_value());
  REQUIRE(parse.problem->where.has_value());
  const std::array marks{*parse.problem->where};
  const std::string grid = ppsim::format_step_grid(parse.program, marks);
  INFO(grid);
  CHECK_THAT(grid, Contains("0     0F0       1F0\n"));
  CHECK_THAT(grid, Contains("1     0F1       [(end)]  <-- here\n"));
  CHECK_THAT(grid, Contains("3     0B1\n"));  // device 0 is read to its end, device 1 stops at the bad cell
}

TEST_CASE("The grid of a stage on two devices brackets the action that puts it on the second", "[schedule-file]") {
  const ScheduleFileParse parse = ppsim::parse_schedule_csv(read_text(data_path("broken_stage_on_two_devices.csv")));
  REQUIRE(parse.problem.has_value());
  REQUIRE(parse.problem->where.has_value());
  const std::array marks{*parse.problem->where};
  const std::string grid = ppsim::format_step_grid(parse.program, marks);
  INFO(grid);
  CHECK_THAT(grid, Contains("0     0F0       [1F1]  <-- here\n"));
}

TEST_CASE("Missing ops are left to validate_program, which names them in the program read", "[schedule-file]") {
  const Program program = parsed_csv(read_text(data_path("broken_missing_op.csv")));
  const auto problem = ppsim::validate_program(program);
  REQUIRE(problem.has_value());
  CHECK(problem->message == "1B1 (or 1I1 and 1W1) is missing");
  REQUIRE(problem->where.has_value());
  CHECK(problem->where->device == 1);
  CHECK(problem->where->step == 3);
}

TEST_CASE("A cross-device cycle read from a file parses and validates, and deadlocks in the engine",
          "[schedule-file]") {
  const Program program = parsed_csv(read_text(data_path("deadlock_p2_m2.csv")));
  CHECK_FALSE(ppsim::validate_program(program).has_value());
  ppsim::Engine engine;
  const ppsim::SimulationOutcome outcome = engine.run(program, unit_costs());
  CHECK_FALSE(outcome.result.has_value());
  REQUIRE(outcome.deadlock.has_value());
  CHECK(outcome.deadlock->devices.size() == 2);
}

TEST_CASE("A program is written as JSON with its stage map, its micro-batch count and one device per line",
          "[schedule-file]") {
  CHECK(ppsim::write_schedule_json(ppsim::build_one_f_one_b({2, 3, 1})) == read_text(data_path("1f1b_p2_m3.json")));
  const Program v_shape = parsed_csv(read_text(data_path("v_shape_p2_m2.csv")));
  CHECK(ppsim::write_schedule_json(v_shape) == read_text(data_path("v_shape_p2_m2.json")));
  CHECK(ppsim::write_schedule_json(Program{}) ==
        "{\n  \"stage_device\": [],\n  \"microbatches\": 0,\n  \"actions\": []\n}\n");
}

TEST_CASE("Cells handed over from JSON infer the shape the way CSV rows do, empty strings being idle steps",
          "[schedule-file]") {
  const ppsim::ScheduleCells cells = {{"0F0", "", "0F1", "3F0", "3B0", "3F1", "3B1", "0B0", "0B1"},
                                      {"1F0", "1F1", "2F0", "2F1", "2B0", "2B1", "", "1B0", "1B1"}};
  const ScheduleFileParse parse = ppsim::program_from_cells(cells);
  INFO(problem_of(parse));
  REQUIRE(parse.ok());
  check_same_program(parse.program, parsed_csv(read_text(data_path("v_shape_p2_m2.csv"))));
}

TEST_CASE("Cells handed over from JSON keep a declared stage map and micro-batch count for validation to check",
          "[schedule-file]") {
  const ppsim::ScheduleCells cells = {{"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1F1", "1B0", "1B1"}};

  SECTION("a declared micro-batch count the actions do not reach") {
    ppsim::DeclaredShape declared;
    declared.num_microbatches = 3;
    const ScheduleFileParse parse = ppsim::program_from_cells(cells, declared);
    REQUIRE(parse.ok());
    CHECK(parse.program.num_microbatches == 3);
    CHECK(parse.program.stage_device == std::vector<int>{0, 1});
    const auto problem = ppsim::validate_program(parse.program);
    REQUIRE(problem.has_value());
    CHECK(problem->message == "0F2 is missing");
  }
  SECTION("a declared stage map the actions contradict") {
    ppsim::DeclaredShape declared;
    declared.stage_device = std::vector<int>{1, 0};
    const ScheduleFileParse parse = ppsim::program_from_cells(cells, declared);
    REQUIRE(parse.ok());
    CHECK(parse.program.stage_device == std::vector<int>{1, 0});
    CHECK(parse.program.num_microbatches == 2);
    const auto problem = ppsim::validate_program(parse.program);
    REQUIRE(problem.has_value());
    CHECK(problem->message == "0F0 is on device 0 but stage 0 belongs to device 1");
  }
  SECTION("a declared micro-batch count no schedule of these actions could hold") {
    ppsim::DeclaredShape declared;
    declared.num_microbatches = 1'000'000'000;
    const ScheduleFileParse parse = ppsim::program_from_cells(cells, declared);
    REQUIRE_FALSE(parse.ok());
    CHECK(parse.problem->message ==
          "2 stages and 1000000000 micro-batches need more than twice the 8 actions in the schedule (a forward and a "
          "backward each)");
    CHECK_FALSE(parse.problem->where.has_value());
  }
}
