// SPDX-License-Identifier: Apache-2.0
// Every schedule in the registry, at every small size it accepts, builds a valid program that
// finishes and keeps the engine's invariants: a schedule is tested the moment its row is added.
#include "schedules/registry.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/validate.hpp"
#include "support/invariants.hpp"

TEST_CASE(
    "Every registry schedule at every accepted p <= 8, m <= 4p, v <= 3 is valid, finishes and keeps the invariants") {
  const ppsim::UniformCostModel model(ppsim::slow_link_costs());
  const auto comm = GENERATE(ppsim::CommMode::kOverlap, ppsim::CommMode::kBlocking);

  int simulated = 0;
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    for (int p = 1; p <= 8; ++p) {
      for (int v = 1; v <= 3; ++v) {
        for (int m = 1; m <= 4 * p; ++m) {
          const ppsim::ScheduleParams params{p, m, v};
          if (info.check(params)) continue;  // outside what the schedule accepts
          INFO(std::string(info.name) << " p=" << p << " m=" << m << " v=" << v);
          const ppsim::Program program = info.build(params);
          const auto problem = ppsim::validate_program(program);
          REQUIRE_FALSE(problem.has_value());
          CHECK(program.num_devices == p);
          // Per pipeline: DualPipe's two directions carry m/2 each, over p stages each.
          CHECK(program.microbatches_per_step() == m);
          CHECK(program.num_stages() == p * v * program.num_pipelines);
          CHECK(program.num_pipelines == info.pipelines);  // the registry's word, used by ppsim plan
          // Seq1F1B's units are its micro-batches' k sequence slices.
          CHECK(program.num_microbatches * program.num_pipelines == m * program.units_per_microbatch);
          ppsim::run_checked(program, model, comm);
          ++simulated;
        }
      }
    }
  }
  CHECK(simulated > 0);
}

// Summary runs replay registry schedules from their generators without validating them (study.cpp,
// simulate_generated): this grid, beyond the small sizes above, is what stands behind that.
TEST_CASE("Every registry schedule is valid by construction at large p and m around its size thresholds") {
  int validated = 0;
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    if (!info.generated()) continue;
    for (const int p : {9, 16, 33, 64}) {
      for (const int v : {1, 2, 3}) {
        for (const int m : {1, p - 1, p, p + 1, 2 * p - 2, 2 * p - 1, 2 * p, 3 * p + 1, 4 * p, 8 * p, 1000}) {
          const ppsim::ScheduleParams params{p, m, v};
          if (info.check(params)) continue;
          INFO(std::string(info.name) << " p=" << p << " m=" << m << " v=" << v);
          const ppsim::Program program = info.build(params);
          const auto problem = ppsim::validate_program(program);
          REQUIRE_FALSE(problem.has_value());
          ++validated;
        }
      }
    }
  }
  CHECK(validated > 100);
}

TEST_CASE("Every registry schedule refuses sizes outside its constraints with a reason") {
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    INFO(std::string(info.name));
    CHECK_FALSE(info.name.empty());
    CHECK_FALSE(info.summary.empty());
    CHECK_FALSE(info.constraints.empty());
    CHECK_FALSE(info.source.empty());
    CHECK(ppsim::find_schedule(info.name) == &info);
  }
  // GPipe and 1F1B place one stage per device.
  for (const char* name : {"gpipe", "1f1b"}) {
    const auto why = ppsim::find_schedule(name)->check({4, 8, 2});
    REQUIRE(why.has_value());
    CHECK(why->find("v = 1") != std::string::npos);
  }
  CHECK(ppsim::find_schedule("no-such-schedule") == nullptr);
}

TEST_CASE("A schedule's stream gives the same list through a buffer of any size and never writes past it") {
  // Steady states write straight into the reader's buffer (ActionStream's room and put), keeping the
  // slot a co_yield needs: a buffer of one action, or one period plus or minus one, must still hold.
  const auto [p, m] = GENERATE(table<int, int>({{1, 3}, {3, 8}, {4, 21}, {5, 40}}));
  const std::size_t capacity = GENERATE(1, 2, 3, 5, 6, 7, 13, 64);
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    if (!info.generated()) continue;
    for (const int v : {1, 2}) {
      const ppsim::ScheduleParams params{p, m, v};
      if (info.check(params)) continue;
      INFO(info.name << " p=" << p << " m=" << m << " v=" << v << " buffer " << capacity);
      const ppsim::Program program = info.build(params);
      const ppsim::ScheduleStreams streams = info.streams(params);
      for (int d = 0; d < p; ++d) {
        ppsim::ActionStream stream = streams.device(params, d);
        const ppsim::Action guard{-7, ppsim::Op::kBackwardWeight, -7};
        std::vector<ppsim::Action> buffer(capacity + 4, guard);
        std::vector<ppsim::Action> list;
        while (true) {
          const std::size_t added = stream.fill(buffer.data(), capacity);
          for (std::size_t i = capacity; i < buffer.size(); ++i) REQUIRE(buffer[i] == guard);
          list.insert(list.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(added));
          if (added < capacity) break;
        }
        CHECK(list == program.actions[static_cast<std::size_t>(d)]);
      }
    }
  }
}

// The engine's trusted loop tests an action for an overlapped pair only when the streams say they
// may hold one (ScheduleStreams::overlapped_pairs): a schedule that makes pairs must say so.
TEST_CASE("A registry schedule whose lists hold overlapped pairs says so in its streams") {
  int with_pairs = 0;
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    if (!info.generated()) continue;
    for (int p = 1; p <= 8; ++p) {
      for (int v = 1; v <= 3; ++v) {
        for (int m = 1; m <= 4 * p; ++m) {
          const ppsim::ScheduleParams params{p, m, v};
          if (info.check(params)) continue;
          const ppsim::Program program = info.build(params);
          const bool pairs = std::any_of(program.actions.begin(), program.actions.end(), [](const auto& list) {
            return std::any_of(list.begin(), list.end(), [](const ppsim::Action& a) { return a.fused_with_next; });
          });
          if (!pairs) continue;
          INFO(std::string(info.name) << " p=" << p << " m=" << m << " v=" << v);
          CHECK(info.streams(params).overlapped_pairs);
          ++with_pairs;
        }
      }
    }
  }
  CHECK(with_pairs > 0);  // DualPipeV makes pairs: the check above is not vacuous
}
