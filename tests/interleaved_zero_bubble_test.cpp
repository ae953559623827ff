// SPDX-License-Identifier: Apache-2.0
// Interleaved zero bubble (torch's ScheduleInterleavedZeroBubble): action order against goldens
// written by a Python port of _calculate_single_rank_operations and _add_bubbles_to_actions (pytorch
// 00722e64, its empty steps left out), its size rule, and what it buys over interleaved 1F1B.
//
// Closed forms (per-chunk costs F = I = W = t, p | m so rounds are r = p): device d runs vp-1-d
// warmup forwards, then F, I and a held W per step. Its first I arrives one hop (an I's time) after
// the device below's, and the d W's it holds fill exactly those gaps, so the makespan is the work
// 3mv·t plus the fill (p-1)t. The stash peaks at vp-d full stashes plus d halves (weight stash
// fraction 1/2) that only W still needs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/golden.hpp"
#include "support/invariants.hpp"

TEST_CASE("Interleaved zero bubble matches torch's ScheduleInterleavedZeroBubble order action for action",
          "[interleaved-zb]") {
  const auto [p, m, v] = GENERATE(std::make_tuple(2, 4, 2), std::make_tuple(4, 8, 2), std::make_tuple(4, 2, 2),
                                  std::make_tuple(3, 6, 3), std::make_tuple(4, 10, 2));
  const std::string file = "interleaved-zb_p" + std::to_string(p) + "_m" + std::to_string(m) + "_v" +
                           std::to_string(v) + ".csv";
  INFO(file);
  const std::string path = std::string(PPSIM_GOLDEN_DIR) + "/" + file;
  const ppsim::ScheduleInfo& info = *ppsim::find_schedule("interleaved-zb");
  REQUIRE_FALSE(info.check({p, m, v}).has_value());
  const ppsim::Program program = info.build({p, m, v});
  CHECK(program.stage_device == ppsim::loop_stage_mapping(p, v));
  CHECK(program.actions == ppsim::read_schedule_csv(path));
  CHECK(ppsim::to_csv(program) == ppsim::read_text(path));
}

TEST_CASE("Interleaved zero bubble needs equal rounds, as torch does, and accepts m < p and v = 1",
          "[interleaved-zb]") {
  const ppsim::ScheduleInfo& info = *ppsim::find_schedule("interleaved-zb");
  const auto uneven = info.check({4, 9, 2});
  REQUIRE(uneven.has_value());
  CHECK(uneven->starts_with("needs m to be a multiple of max(1, floor(m/p)) = 2"));
  for (const ppsim::ScheduleParams params : {ppsim::ScheduleParams{4, 3, 2}, ppsim::ScheduleParams{4, 10, 2},
                                             ppsim::ScheduleParams{4, 8, 1}, ppsim::ScheduleParams{1, 5, 3}}) {
    INFO("p=" << params.p << " m=" << params.m << " v=" << params.v);
    CHECK_FALSE(info.check(params).has_value());
  }
  CHECK(ppsim::resolve_schedule("ScheduleInterleavedZeroBubble") == &info);
}

TEST_CASE("Interleaved zero bubble at p=8, m=32, v=2 makes 199 units at 16 stashes where interleaved 1F1B makes "
          "213 at 23",
          "[interleaved-zb]") {
  const auto costs = ppsim::unit_chunk_costs();
  ppsim::Engine engine;
  const auto zb = engine.run(ppsim::find_schedule("interleaved-zb")->build({8, 32, 2}), costs).result;
  const auto one_f_one_b = engine.run(ppsim::find_schedule("interleaved-1f1b")->build({8, 32, 2}), costs).result;
  REQUIRE(zb.has_value());
  REQUIRE(one_f_one_b.has_value());
  CHECK(zb->makespan == 199);
  CHECK(ppsim::most_stashed(*zb) == 16);
  CHECK(one_f_one_b->makespan == 213);
  CHECK(ppsim::most_stashed(*one_f_one_b) == 23);
}

TEST_CASE("Interleaved zero bubble with p | m and F = I = W leaves only the fill: (3mv + p - 1)F, stash vp - d/2",
          "[interleaved-zb]") {
  const auto [p, m, v] = GENERATE(std::make_tuple(2, 4, 2), std::make_tuple(4, 4, 2), std::make_tuple(4, 12, 3),
                                  std::make_tuple(6, 18, 2), std::make_tuple(3, 6, 1));
  INFO("p=" << p << " m=" << m << " v=" << v);
  const auto costs = ppsim::unit_chunk_costs();
  const ppsim::Result result = ppsim::run_checked(ppsim::find_schedule("interleaved-zb")->build({p, m, v}), costs);
  CHECK(result.makespan == 3 * m * v + p - 1);
  for (int d = 0; d < p; ++d) {
    INFO("device " << d);
    CHECK(result.per_device[static_cast<std::size_t>(d)].peak_stashed == v * p - d + 0.5 * d);
  }
}
