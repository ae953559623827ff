// SPDX-License-Identifier: Apache-2.0
// The built-in schedules, action for action, against expected schedules kept as CSV files in
// torch.distributed.pipelining's _dump_csv layout: one row per device (rank), its actions in order,
// comma-separated. The files were written by hand from the schedules' definitions:
// - GPipe: every device runs F0..F(m-1), then B0..B(m-1);
// - 1F1B (Megatron-LM): device d runs min(p-d-1, m) warmup forwards, then F(warmup+i), B(i) pairs,
//   then the remaining backwards.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "support/golden.hpp"

using ppsim::Action;
using ppsim::Op;

namespace {

using ppsim::read_schedule_csv;
using ppsim::read_text;
using ppsim::to_csv;

// Most forwards whose backward has not yet run, counted from the action order alone.
int max_in_flight(const std::vector<Action>& row) {
  int in_flight = 0;
  int peak = 0;
  for (const Action& a : row) {
    in_flight += a.op == Op::kForward ? 1 : (a.op == Op::kBackward ? -1 : 0);
    peak = std::max(peak, in_flight);
  }
  return peak;
}

}  // namespace

TEST_CASE("GPipe and 1F1B at p=4, m=8 and p=2, m=3 match their golden CSV schedules action for action") {
  const std::string name = GENERATE(as<std::string>{}, "gpipe", "1f1b");
  const auto [p, m] = GENERATE(std::make_pair(4, 8), std::make_pair(2, 3));
  const std::string path =
      std::string(PPSIM_GOLDEN_DIR) + "/" + name + "_p" + std::to_string(p) + "_m" + std::to_string(m) + ".csv";
  INFO(path);
  const auto golden = read_schedule_csv(path);
  const ppsim::Program program = ppsim::find_schedule(name)->build({p, m, 1});

  REQUIRE(golden.size() == static_cast<std::size_t>(p));
  REQUIRE(program.actions.size() == golden.size());
  for (std::size_t d = 0; d < golden.size(); ++d) {
    INFO("device " << d);
    CHECK(program.actions[d].size() == static_cast<std::size_t>(2 * m));
    CHECK(program.actions[d] == golden[d]);
    // Stage numbers equal the device for these single-chunk schedules.
    CHECK(program.stage_device[d] == static_cast<int>(d));
    CHECK(std::all_of(golden[d].begin(), golden[d].end(),
                      [&](const Action& a) { return a.stage == static_cast<int>(d); }));
  }
  // The same text, byte for byte, when the program is written out the way _dump_csv writes it.
  CHECK(to_csv(program) == read_text(path));
}

TEST_CASE("The golden schedules are valid and stash what their definitions promise") {
  const std::string name = GENERATE(as<std::string>{}, "gpipe", "1f1b");
  ppsim::Program golden;
  golden.num_devices = 4;
  golden.num_microbatches = 8;
  golden.stage_device = ppsim::loop_stage_mapping(4, 1);
  golden.actions = read_schedule_csv(std::string(PPSIM_GOLDEN_DIR) + "/" + name + "_p4_m8.csv");
  const auto problem = ppsim::validate_program(golden);
  INFO((problem ? problem->message : std::string()));
  CHECK_FALSE(problem.has_value());
  for (int d = 0; d < 4; ++d) {
    // GPipe holds all m micro-batches; 1F1B at most p - d on device d.
    CHECK(max_in_flight(golden.actions[static_cast<std::size_t>(d)]) == (name == "gpipe" ? 8 : 4 - d));
  }
}
