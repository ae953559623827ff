// SPDX-License-Identifier: Apache-2.0
// Programs written by hand, outside any schedule, that the engine must run from the semantics alone:
// several stages per device, a V-shaped mapping, split backwards, unequal stages. Every expected
// number below comes from a hand simulation written next to it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/stage_table_cost_model.hpp"
#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "support/invariants.hpp"

using Catch::Matchers::WithinRel;
using ppsim::Op;
using ppsim::Program;

namespace {

// Actions from "0F0 0F1 ..." text, one string per device.
Program program_from(int m, std::vector<int> stage_device, const std::vector<std::string>& devices) {
  Program program;
  program.num_devices = static_cast<int>(devices.size());
  program.num_microbatches = m;
  program.stage_device = std::move(stage_device);
  for (const std::string& text : devices) {
    std::vector<ppsim::Action> list;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t end = std::min(text.find(' ', pos), text.size());
      const ppsim::ActionParse parsed = ppsim::parse_action(text.substr(pos, end - pos));
      INFO(parsed.error);
      REQUIRE(parsed.ok);
      list.push_back(parsed.action);
      pos = end + 1;
    }
    program.actions.push_back(std::move(list));
  }
  const auto problem = ppsim::validate_program(program);
  INFO((problem ? problem->message : std::string()));
  REQUIRE_FALSE(problem.has_value());
  return program;
}

ppsim::UniformCostModel uniform(double forward, double backward, double latency = 0) {
  ppsim::UniformCosts costs;
  costs.forward = ppsim::Duration{forward};
  costs.backward = ppsim::Duration{backward};
  costs.latency = ppsim::Duration{latency};
  costs.activation_bytes = ppsim::ByteCount{1000};
  return ppsim::UniformCostModel(costs);
}

double peak_stashed(const ppsim::Result& result, int device) {
  return result.per_device[static_cast<std::size_t>(device)].peak_stashed;
}

}  // namespace

TEST_CASE("Two stages per device on the loop mapping run with a message at every stage boundary") {
  // p=2, v=2: stages 0,2 on device 0 and 1,3 on device 1; m=2; F=1, B=2, latency L.
  // By hand with L = 0.5:
  //   device 0: 0F0 [0,1]  0F1 [1,2]  2F0 [3,4]  2F1 [4,5]  2B0 [9,11]  2B1 [11,13]  0B0 [14,16]  0B1 [16,18]
  //   device 1: 1F0 [1.5,2.5]  1F1 [2.5,3.5]  3F0 [4.5,5.5]  3F1 [5.5,6.5]  3B0 [6.5,8.5]  3B1 [8.5,10.5]
  //             1B0 [11.5,13.5]  1B1 [13.5,15.5]
  // With L = 0 the same order gives 15. The longest chain, 0F0 0F1 | 1F1 | 2F1 | 3F1 3B0 3B1 | 2B1 | 1B1 |
  // 0B1, costs 5F + 5B = 15 and crosses six boundaries: makespan 15 + 6L.
  const double latency = GENERATE(0.0, 0.5, 1.0, 3.0);
  INFO("L=" << latency);
  const Program program = program_from(2, ppsim::loop_stage_mapping(2, 2),
                                       {"0F0 0F1 2F0 2F1 2B0 2B1 0B0 0B1", "1F0 1F1 3F0 3F1 3B0 3B1 1B0 1B1"});
  REQUIRE(program.stage_device == std::vector<int>{0, 1, 0, 1});
  const ppsim::Result result = ppsim::run_checked(program, uniform(1, 2, latency));
  CHECK_THAT(result.makespan, WithinRel(15 + 6 * latency, 1e-12));
  // Three boundaries, two micro-batches, both directions.
  CHECK(result.messages == 12);
  // Each device holds both of its stages' stashes for both micro-batches before its first backward.
  CHECK(peak_stashed(result, 0) == 4);
  CHECK(peak_stashed(result, 1) == 4);
}

TEST_CASE("On the V-shape mapping the two middle stages share a device and exchange no message") {
  // v_stage_mapping(2): stages 0,1,2,3 on devices 0,1,1,0. m=2; F=1, B=2; latency L.
  // By hand with L = 1:
  //   device 0: 0F0 [0,1]  0F1 [1,2]  3F0 [5,6]  3B0 [6,8]  3F1 [8,9]  3B1 [9,11]  0B0 [14,16]  0B1 [18,20]
  //   device 1: 1F0 [2,3]  2F0 [3,4] (no hop from stage 1)  1F1 [4,5]  2F1 [5,6]  2B0 [9,11]  1B0 [11,13]
  //             2B1 [13,15]  1B1 [15,17]
  // and with L = 0: device 0 ends 0B1 at 16. The longest chain 0F0 | 1F0 2F0 | 3F0 3B0 | 2B0 1B0 2B1
  // 1B1 | 0B1 costs 16 and crosses four boundaries: 16 + 4L.
  const double latency = GENERATE(0.0, 1.0);
  const Program program = program_from(2, ppsim::v_stage_mapping(2),
                                       {"0F0 0F1 3F0 3B0 3F1 3B1 0B0 0B1", "1F0 2F0 1F1 2F1 2B0 1B0 2B1 1B1"});
  REQUIRE(program.stage_device == std::vector<int>{0, 1, 1, 0});
  const ppsim::Result result = ppsim::run_checked(program, uniform(1, 2, latency));
  CHECK(result.makespan == Approx(latency == 0 ? 16 : 20));
  // Boundaries 0|1 and 2|3 cross devices, 1|2 does not: 2 boundaries x 2 micro-batches x 2 directions.
  CHECK(result.messages == 8);
  for (const ppsim::MessageSpan& message : result.timeline->messages) {
    const bool from_stage_1_forward = message.from.stage == 1 && message.from.op == Op::kForward;
    const bool from_stage_2_backward = message.from.stage == 2 && message.from.op == Op::kBackward;
    CHECK_FALSE(from_stage_1_forward);
    CHECK_FALSE(from_stage_2_backward);
  }
  CHECK(peak_stashed(result, 0) == 3);  // 0F0 0F1 3F0 before 3B0
  CHECK(peak_stashed(result, 1) == 4);  // 1F0 2F0 1F1 2F1 before 2B0
}

TEST_CASE("Splitting every backward into I and W and deferring the Ws fills 1F1B's drain") {
  // p=2, m=3, F=1, B=3 split into I=2 and W=1; free links. 1F1B's order with each B replaced by I
  // and all Ws at the end. By hand:
  //   device 0: 0F0 [0,1]  0F1 [1,2]  0I0 [4,6]  0F2 [6,7]  0I1 [7,9]  0I2 [10,12]  0W0 [12,13]  0W1 [13,14]
  //             0W2 [14,15]
  //   device 1: 1F0 [1,2]  1I0 [2,4]  1F1 [4,5]  1I1 [5,7]  1F2 [7,8]  1I2 [8,10]  1W0 [10,11]  1W1 [11,12]
  //             1W2 [12,13]
  // makespan 15, against (m + p - 1)(F + B) = 16 for plain 1F1B.
  //
  // Memory, in stashes of one micro-batch (activation 1000 bytes, W keeps `fraction` of it after I):
  //   device 0: F0 1, F1 2, I0 ends at 6: 1 + fraction, F2 starts at 6 (after the free): 2 + fraction,
  //             then I1, I2, W0..W2 bring it down to 0 -> peak 2 + fraction;
  //   device 1: F0 1, I0 fraction, F1 1 + fraction, I1 2·fraction, F2 1 + 2·fraction -> peak
  //             max(1, 1 + 2·fraction).
  const double fraction = GENERATE(0.5, 0.25);
  INFO("weight_stash_fraction=" << fraction);
  const Program program =
      program_from(3, {0, 1}, {"0F0 0F1 0I0 0F2 0I1 0I2 0W0 0W1 0W2", "1F0 1I0 1F1 1I1 1F2 1I2 1W0 1W1 1W2"});
  ppsim::UniformCosts costs;
  costs.forward = ppsim::Duration{1};
  costs.backward = ppsim::Duration{3};
  costs.weight = ppsim::Duration{1};
  costs.activation_bytes = ppsim::ByteCount{1000};
  costs.weight_stash_fraction = fraction;
  costs.static_bytes = ppsim::ByteCount{10000};
  const ppsim::UniformCostModel model(costs);
  REQUIRE(model.compute_time(Op::kBackwardInput, 0) == 2);

  const ppsim::Result result = ppsim::run_checked(program, model);
  CHECK(result.makespan == 15);
  CHECK(result.total_busy == 2 * 3 * (1 + 3));

  const auto& d0 = result.per_device[0];
  const auto& d1 = result.per_device[1];
  CHECK(d0.peak_stashed == Approx(2 + fraction));
  CHECK(d1.peak_stashed == Approx(1 + 2 * fraction));
  const auto weight_bytes = static_cast<std::int64_t>(1000 * fraction);
  CHECK(d0.peak_activation_bytes == 2000 + weight_bytes);
  CHECK(d1.peak_activation_bytes == 1000 + 2 * weight_bytes);
  CHECK(d0.peak_memory_bytes == 10000 + d0.peak_activation_bytes);
  CHECK(d1.peak_memory_bytes == 10000 + d1.peak_activation_bytes);

  // The same program with fused backwards is plain 1F1B: 16.
  const Program fused = ppsim::find_schedule("1f1b")->build({2, 3, 1});
  CHECK(ppsim::run_checked(fused, model).makespan == 16);
}

TEST_CASE("A last stage 1.5x slower paces GPipe and 1F1B at its own F + B per micro-batch") {
  // Stages 0,1: F=1, B=2; stage 2 (the LM head and loss): F=1.5, B=3; free links.
  // GPipe by hand: stage 2's inputs arrive at 2, 3, 4, ... (every 1) but it needs 1.5 per forward, so it
  // runs F(j) back to back from 2, then B(0..m-1) back to back (3 each, slower than the 2 of the
  // others, which follow its wave): it ends at 2 + 4.5m and device 0 ends 2 + 2 later: 6 + 4.5m.
  // 1F1B: the last device runs F(j), B(j) back to back from 2 (the other devices need 3 per micro-batch
  // and keep ahead of its 4.5), then the last gradient walks down: the same 6 + 4.5m.
  // Both are sum over stages of (F + B) + (m - 1) x the slowest stage's F + B = 10.5 + 4.5(m - 1).
  const char* name = GENERATE("gpipe", "1f1b");
  const int m = GENERATE(1, 2, 4, 6);
  INFO(name << " m=" << m);
  ppsim::StageTable table;
  table.stages = {{ppsim::Duration{1}, ppsim::Duration{2}, ppsim::Duration{1}, ppsim::ByteCount{100}},
                  {ppsim::Duration{1}, ppsim::Duration{2}, ppsim::Duration{1}, ppsim::ByteCount{100}},
                  {ppsim::Duration{1.5}, ppsim::Duration{3}, ppsim::Duration{1.5}, ppsim::ByteCount{300}}};
  table.static_bytes = {ppsim::ByteCount{5000}, ppsim::ByteCount{5000}, ppsim::ByteCount{7000}};
  const ppsim::StageTableCostModel costs(table);
  const Program program = ppsim::find_schedule(name)->build({3, m, 1});
  const ppsim::Result result = ppsim::run_checked(program, costs);
  CHECK(result.makespan == Approx(6 + 4.5 * m));
  CHECK(result.total_busy == Approx(m * (3 + 3 + 4.5)));
  // The slow stage's device is the least idle one.
  CHECK(result.per_device[2].idle < result.per_device[0].idle);
  CHECK(result.per_device[2].peak_memory_bytes ==
        7000 + 300 * static_cast<std::int64_t>(result.per_device[2].peak_stashed));
}
