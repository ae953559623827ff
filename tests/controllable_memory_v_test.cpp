// SPDX-License-Identifier: Apache-2.0
// V-Half and V-Min (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024): action
// order against goldens written by a Python port of the zero-bubble repository's zbv_greedy.py
// (sail-sg 39f2c186, checked against the repository's own file), their memory against 1F1B's, and
// their makespans at F = I = W.
//
// Memory, in stage stashes (one micro-batch on one chunk; 1F1B at v = 1 holds p full stashes, 2p of
// these): the paper's (p+2)//2 and (p+4)//3 micro-batches, so 2 floor((p+2)/2) and 2 floor((p+4)/3)
// stage stashes once m > p. V-Half is half of 1F1B's plus at most one full stage stash; V-Min a third
// of it plus at most 4/3 of one (p mod 3 = 2 rounds up the most).
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <tuple>

#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/golden.hpp"
#include "support/invariants.hpp"

namespace {

ppsim::Result simulate(const std::string& name, int p, int m, int v, double fraction = 0.5) {
  ppsim::Engine engine;
  auto outcome = engine.run(ppsim::find_schedule(name)->build({p, m, v}), ppsim::unit_chunk_costs(fraction));
  REQUIRE(outcome.result.has_value());
  return *outcome.result;
}

}  // namespace

TEST_CASE("V-Half and V-Min match the zero-bubble repository's zbv_greedy order action for action", "[v-memory]") {
  const auto [name, p, m] = GENERATE(table<std::string, int, int>({{"v-half", 4, 8},
                                                                   {"v-min", 4, 8},
                                                                   {"v-half", 8, 4},
                                                                   {"v-min", 6, 12},
                                                                   {"v-half", 5, 10},
                                                                   {"v-min", 8, 32}}));
  const std::string path =
      std::string(PPSIM_GOLDEN_DIR) + "/" + name + "_p" + std::to_string(p) + "_m" + std::to_string(m) + ".csv";
  INFO(path);
  const ppsim::Program program = ppsim::find_schedule(name)->build({p, m, 2});
  CHECK(program.stage_device == ppsim::v_stage_mapping(p));
  CHECK(program.actions == ppsim::read_schedule_csv(path));
  CHECK_FALSE(ppsim::validate_program(program).has_value());
}

TEST_CASE("V-Half holds half of 1F1B's activations and V-Min a third, as the paper's (p+2)//2 and (p+4)//3",
          "[v-memory]") {
  const int p = GENERATE(range(2, 13));
  const int m = GENERATE_COPY(p + 1, 3 * p);
  const double fraction = GENERATE(0.5, 1.0);  // 1: the paper's memory, W frees the stash
  INFO("p=" << p << " m=" << m << " weight stash fraction " << fraction);
  const double one_f_one_b = 2.0 * simulate("1f1b", p, m, 1, fraction).per_device[0].peak_stashed;
  REQUIRE(one_f_one_b == 2.0 * p);  // p full stashes, each two stage stashes of v = 2
  const double half = ppsim::most_stashed(simulate("v-half", p, m, 2, fraction));
  const double min = ppsim::most_stashed(simulate("v-min", p, m, 2, fraction));
  CHECK(half == 2 * ((p + 2) / 2));
  // A stash that W half frees lets V-Min's two devices at p = 2 hold one fewer.
  if (fraction == 1.0 || p != 2) CHECK(min == 2 * ((p + 4) / 3));
  CHECK(min <= 2 * ((p + 4) / 3));
  CHECK(half <= one_f_one_b / 2 + 2);
  CHECK(min <= one_f_one_b / 3 + 8.0 / 3);
  CHECK(min <= half);
}

TEST_CASE("V-Half and V-Min at F = I = W take (6m+3p-7)F and (6m+4p-5)F, between ZB-V and 1F1B's bubble",
          "[v-memory]") {
  const auto [p, m] = GENERATE(std::make_tuple(4, 8), std::make_tuple(8, 32), std::make_tuple(16, 64));
  INFO("p=" << p << " m=" << m);
  const double half = simulate("v-half", p, m, 2).makespan;
  const double min = simulate("v-min", p, m, 2).makespan;
  CHECK(half == 6 * m + 3 * p - 7);
  CHECK(min == 6 * m + 4 * p - 5);
  // ZB-V fills everything but (p-1)F; 1F1B at v = 1 with the same work idles 6(p-1)F.
  const double zbv = simulate("zbv", p, m, 2).makespan;
  CHECK(zbv < half);
  CHECK(half < min);
  CHECK(min - 6 * m < 6 * (p - 1));
}

TEST_CASE("V-Half and V-Min are valid at every p <= 8, m <= 4p and keep the invariants", "[v-memory]") {
  const ppsim::UniformCostModel model(ppsim::slow_link_costs());
  for (const char* name : {"v-half", "v-min"}) {
    for (int p = 1; p <= 8; ++p) {
      for (int m = 1; m <= 4 * p; ++m) {
        INFO(name << " p=" << p << " m=" << m);
        const ppsim::Program program = ppsim::find_schedule(name)->build({p, m, 2});
        REQUIRE_FALSE(ppsim::validate_program(program).has_value());
        ppsim::run_checked(program, model);
      }
    }
  }
  const auto why = ppsim::find_schedule("v-half")->check({4, 8, 1});
  REQUIRE(why.has_value());
  CHECK(why->starts_with("needs v = 2"));
}
