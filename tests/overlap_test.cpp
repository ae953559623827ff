// SPDX-License-Identifier: Apache-2.0
// Overlapped forward-and-backward ops (torch's OVERLAP_F_B, as DualPipe uses them): the cell
// notation, validation, and the engine running a pair as one op of its own time.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "models/uniform_cost_model.hpp"
#include "schedules/schedule_file.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/invariants.hpp"

namespace {

using ppsim::Action;
using ppsim::Op;

Action fused(Action action) {
  action.fused_with_next = true;
  return action;
}

// p = 2 on the V mapping (device 0 holds stages 0 and 3, device 1 stages 1 and 2), m = 2, with
// device 0 overlapping the forward 3F1 with the backward 3B0.
ppsim::Program v_program_with_pair() {
  ppsim::Program program;
  program.num_devices = 2;
  program.num_microbatches = 2;
  program.stage_device = ppsim::v_stage_mapping(2);
  program.actions = {{{0, Op::kForward, 0},
                      {0, Op::kForward, 1},
                      {3, Op::kForward, 0},
                      fused({3, Op::kForward, 1}),
                      {3, Op::kBackward, 0},
                      {0, Op::kBackward, 0},
                      {3, Op::kBackward, 1},
                      {0, Op::kBackward, 1}},
                     {{1, Op::kForward, 0},
                      {1, Op::kForward, 1},
                      {2, Op::kForward, 0},
                      {2, Op::kForward, 1},
                      {2, Op::kBackward, 0},
                      {1, Op::kBackward, 0},
                      {2, Op::kBackward, 1},
                      {1, Op::kBackward, 1}}};
  return program;
}

}  // namespace

TEST_CASE("An overlapped pair reads and prints as torch writes it", "[overlap]") {
  const auto cell = ppsim::parse_cell("(0F3;3B1)OVERLAP_F_B");
  REQUIRE(cell.ok);
  REQUIRE(cell.pair);
  CHECK(cell.first == fused({0, Op::kForward, 3}));
  CHECK(cell.second == Action{3, Op::kBackward, 1});
  CHECK(ppsim::cell_text(cell.first, &cell.second) == "(0F3;3B1)OVERLAP_F_B");
  const auto single = ppsim::parse_cell("2I0");
  REQUIRE(single.ok);
  CHECK_FALSE(single.pair);
  CHECK(ppsim::cell_text(single.first) == "2I0");
}

TEST_CASE("A malformed overlapped pair is refused with the reason", "[overlap]") {
  const auto [text, reason] = GENERATE(table<std::string, std::string>({
      {"(0F3;3B1)", "missing )OVERLAP_F_B"},
      {"(0F3,3B1)OVERLAP_F_B", "missing ';' between the two actions"},
      {"(3B1;0F3)OVERLAP_F_B", "the first action must be a forward"},
      {"(0F3;3W1)OVERLAP_F_B", "the second action must be a B or an I"},
      {"(0F3;3X1)OVERLAP_F_B", "unknown op 'X'"},
  }));
  INFO(text);
  const auto cell = ppsim::parse_cell(text);
  CHECK_FALSE(cell.ok);
  CHECK(cell.error.find(reason) != std::string::npos);
}

TEST_CASE("A pair must be a forward followed by a backward on the same device", "[overlap]") {
  auto program = v_program_with_pair();
  REQUIRE_FALSE(ppsim::validate_program(program).has_value());
  program.actions[0][3].fused_with_next = false;
  program.actions[0][2].fused_with_next = true;  // 3F0 with 3F1: not a backward
  const auto problem = ppsim::validate_program(program);
  REQUIRE(problem.has_value());
  CHECK(problem->message.find("3F0 is overlapped with the next action, which must be a B or an I") == 0);
}

TEST_CASE("The engine runs a pair as one op lasting the overlap time, and F + B by default", "[overlap]") {
  // Hand replay, F = 1, B = 2, free links: device 0 runs 0F0 [0,1], 0F1 [1,2], 3F0 [4,5] after 2F0;
  // the pair waits for 2F1 (ends 5) and starts at 5. With overlap time T it ends at 5 + T; then
  // 2B0, 1B0, 0B0, 3B1, 2B1, 1B1, 0B1 follow one after another, 2 each: makespan 5 + T + 14.
  const double overlap = GENERATE(2.5, 3.0);
  ppsim::UniformCosts costs;
  costs.activation_bytes = ppsim::ByteCount{100};
  if (overlap != 3.0) costs.overlap = ppsim::Duration{overlap};  // 3 = F + B, the default
  const ppsim::UniformCostModel model(costs);
  const auto program = v_program_with_pair();
  const auto result = ppsim::run_checked(program, model);
  CHECK(result.makespan == Approx(5 + overlap + 14));
  CHECK(result.per_device[0].busy == Approx(1 + 1 + 1 + overlap + 2 + 2 + 2));
  CHECK(result.per_device[0].ops == 8);           // two actions, one op
  CHECK(result.per_device[0].peak_stashed == 4);  // 0F0, 0F1, 3F0 and the pair's 3F1 before 3B0 frees
  const auto& spans = result.timeline->spans;
  const auto pair =
      std::find_if(spans.begin(), spans.end(), [](const ppsim::Span& s) { return s.action.fused_with_next; });
  REQUIRE(pair != spans.end());
  CHECK(pair->partner == Action{3, Op::kBackward, 0});
  CHECK(pair->start == 5);
  CHECK(pair->end == Approx(5 + overlap));
}

TEST_CASE("A pair survives the schedule file round trip as one cell", "[overlap][schedule-file]") {
  const auto program = v_program_with_pair();
  const std::string csv = ppsim::write_schedule_csv(program);
  CHECK(csv.find(",(3F1;3B0)OVERLAP_F_B,") != std::string::npos);
  const auto parsed = ppsim::parse_schedule_csv(csv);
  REQUIRE(parsed.ok());
  CHECK(parsed.program.actions == program.actions);
  CHECK(ppsim::write_schedule_json(program).find("\"(3F1;3B0)OVERLAP_F_B\"") != std::string::npos);
}
