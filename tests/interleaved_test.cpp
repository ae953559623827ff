// SPDX-License-Identifier: Apache-2.0
// Interleaved 1F1B and looped BFS: action order against hand-written golden CSVs, closed forms of
// makespan and stash with uniform costs and free links, hand-simulated timelines, and the invariants.
//
// Closed forms (per-stage costs F, B; S = p·v stages; each device does m·v forwards and backwards):
// - Looped BFS, m >= p: device d runs its forwards back to back from d·F (chunk c+1's first input,
//   from device p-1, is ready after (p + c·m)F <= (c+1)·m·F when m >= p), so the last stage's forwards
//   end at (p-1+m·v)F; the backwards then flow down the same way, each device back to back once its
//   first gradient arrives, and device 0 ends (p-1)B + m·v·B later: (m·v + p - 1)(F + B).
//   m <= p: F(s, j) starts at (s + j)F and, with T = (S + m - 1)F and backwards in reverse micro-batch
//   order, B(S-1-i, j) at T + (i + m - 1 - j)B; one device's chunks never overlap because m <= p, so
//   device 0 ends at T + (S + m - 1)B = (p·v + m - 1)(F + B).
//   Together: (max(m, p)·v + min(m, p) - 1)(F + B).
// - Interleaved 1F1B, p | m: the paper's bubble (p-1)(t_f + t_b)/v, where t_f = v·F and t_b = v·B are
//   one device's whole slice, is (p-1)(F + B) per-stage: makespan = (m·v + p - 1)(F + B), bubble_ratio
//   (p-1)/(m·v + p-1), bubble_overhead (p-1)/(m·v). The other m torch accepts (rounds of r = m /
//   max(1, m/p) micro-batches) give the same form as looped BFS: pinned below over every accepted size,
//   with two of them (r > p and m < p) simulated by hand.
// - Stash: a device runs its actions in order and F allocates at its start, B frees at its end, so its
//   peak is the most forwards not yet matched by a backward in its action list. Interleaved device d
//   runs w = (v-1)r + 2(p-1-d) warmup forwards, then a forward before each backward: min(w + 1, m·v).
//   Looped BFS runs all m·v forwards first.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/builders.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/golden.hpp"
#include "support/invariants.hpp"

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using ppsim::Action;
using ppsim::Op;

namespace {

using ppsim::read_schedule_csv;

struct Ratio {
  double forward;
  double backward;
};

constexpr std::int64_t kActivationBytes = 1 << 20;

ppsim::UniformCostModel uniform(double forward, double backward) {
  ppsim::UniformCosts costs;
  costs.forward = ppsim::Duration{forward};
  costs.backward = ppsim::Duration{backward};
  costs.activation_bytes = ppsim::ByteCount{kActivationBytes};
  return ppsim::UniformCostModel(costs);
}

// torch's micro-batch group (round) size: m / max(1, m / p).
int group_size(int p, int m) { return m / std::max(1, m / p); }

double interleaved_peak_stashed(int p, int m, int v, int d) {
  return std::min((v - 1) * group_size(p, m) + 2 * (p - 1 - d) + 1, m * v);
}

// Start times of one device's ops, in its action order.
std::vector<double> starts_of(const ppsim::Result& result, int device) {
  std::vector<double> starts;
  for (const ppsim::Span& span : result.timeline->spans) {
    if (span.device == device) starts.push_back(span.start);
  }
  return starts;
}

}  // namespace

TEST_CASE("Interleaved 1F1B and looped BFS match their hand-written golden CSVs action for action", "[interleaved]") {
  struct Golden {
    const char* file;
    ppsim::ScheduleBuild build;
    int p;
    int m;
  };
  const Golden golden = GENERATE(values<Golden>({
      {"interleaved-1f1b_p2_m4_v2.csv", ppsim::build_interleaved_one_f_one_b, 2, 4},
      {"interleaved-1f1b_p4_m8_v2.csv", ppsim::build_interleaved_one_f_one_b, 4, 8},
      {"looped-bfs_p2_m4_v2.csv", ppsim::build_looped_bfs, 2, 4},
      {"looped-bfs_p4_m8_v2.csv", ppsim::build_looped_bfs, 4, 8},
  }));
  INFO(golden.file);
  const auto rows = read_schedule_csv(std::string(PPSIM_GOLDEN_DIR) + "/" + golden.file);
  const ppsim::Program program = golden.build({golden.p, golden.m, 2});
  REQUIRE(rows.size() == static_cast<std::size_t>(golden.p));
  CHECK(program.stage_device == ppsim::loop_stage_mapping(golden.p, 2));
  for (std::size_t d = 0; d < rows.size(); ++d) {
    INFO("device " << d);
    CHECK(program.actions[d] == rows[d]);
  }
}

TEST_CASE("Interleaved 1F1B needs v >= 2 and micro-batches that split into equal rounds", "[interleaved]") {
  const auto one_chunk = ppsim::check_interleaved({4, 8, 1});
  REQUIRE(one_chunk.has_value());
  CHECK(one_chunk->find("needs v >= 2") != std::string::npos);
  // p = 4, m = 9: two rounds of 4.5 micro-batches.
  const auto uneven = ppsim::check_interleaved({4, 9, 2});
  REQUIRE(uneven.has_value());
  CHECK(uneven->find("multiple of max(1, floor(m/p)) = 2") != std::string::npos);
  CHECK(ppsim::check_interleaved({4, 11, 3}).has_value());
  // Accepted: multiples of p (Megatron's default), m < p (one round), two rounds of 5 (torch's example).
  for (const ppsim::ScheduleParams params : {ppsim::ScheduleParams{4, 8, 2}, ppsim::ScheduleParams{4, 3, 2},
                                             ppsim::ScheduleParams{4, 10, 3}, ppsim::ScheduleParams{1, 5, 2}}) {
    INFO("p=" << params.p << " m=" << params.m << " v=" << params.v);
    CHECK_FALSE(ppsim::check_interleaved(params).has_value());
  }
}

TEST_CASE("Looped BFS needs v >= 2 and accepts any p and m", "[interleaved]") {
  const auto one_chunk = ppsim::check_looped_bfs({4, 8, 1});
  REQUIRE(one_chunk.has_value());
  CHECK(one_chunk->find("needs v >= 2") != std::string::npos);
  CHECK_FALSE(ppsim::check_looped_bfs({4, 9, 2}).has_value());
  CHECK_FALSE(ppsim::check_looped_bfs({8, 1, 3}).has_value());
}

TEST_CASE("Interleaved 1F1B with p | m has Megatron's bubble (p-1)(F+B) per device, i.e. (p-1)/v of 1F1B's",
          "[interleaved]") {
  const Ratio ratio = GENERATE(values<Ratio>({{1, 2}, {1, 1}, {1, 3}, {0.7, 1.3}, {2, 1}}));
  const int p = GENERATE(range(2, 9));
  const int v = GENERATE(range(2, 5));
  const ppsim::UniformCostModel costs = uniform(ratio.forward, ratio.backward);
  const double step = ratio.forward + ratio.backward;
  ppsim::Engine engine;
  for (int m = p; m <= 4 * p; m += p) {
    INFO("p=" << p << " m=" << m << " v=" << v << " F=" << ratio.forward << " B=" << ratio.backward);
    REQUIRE_FALSE(ppsim::check_interleaved({p, m, v}).has_value());
    const auto outcome = engine.run(ppsim::build_interleaved_one_f_one_b({p, m, v}), costs);
    REQUIRE(outcome.result.has_value());
    const ppsim::Result& result = *outcome.result;
    const double work = m * v * step;  // one device's busy time
    CHECK_THAT(result.makespan, WithinRel(work + (p - 1) * step, 1e-12));
    CHECK_THAT(result.total_busy, WithinRel(p * work, 1e-12));
    const double bubble = static_cast<double>(p - 1) / (m * v + p - 1);
    const double overhead = static_cast<double>(p - 1) / (m * v);
    CHECK_THAT(result.bubble_ratio, WithinRel(bubble, 1e-12) || WithinAbs(bubble, 1e-13));
    CHECK_THAT(result.bubble_overhead, WithinRel(overhead, 1e-12) || WithinAbs(overhead, 1e-13));
    for (int d = 0; d < p; ++d) {
      INFO("device " << d);
      const double stashed = result.per_device[static_cast<std::size_t>(d)].peak_stashed;
      // w = (v-1)p + 2(p-1-d) warmup forwards plus the first steady forward, at most all m·v.
      CHECK(stashed == std::min((v - 1) * p + 2 * (p - 1 - d) + 1, m * v));
      CHECK(result.per_device[static_cast<std::size_t>(d)].peak_activation_bytes ==
            static_cast<std::int64_t>(stashed) * kActivationBytes);
    }
  }
}

TEST_CASE("Interleaved 1F1B at every accepted m and looped BFS at every m share (max(m,p)v + min(m,p) - 1)(F+B)",
          "[interleaved]") {
  const Ratio ratio = GENERATE(values<Ratio>({{1, 2}, {0.7, 1.3}, {2, 1}}));
  const ppsim::UniformCostModel costs = uniform(ratio.forward, ratio.backward);
  const double step = ratio.forward + ratio.backward;
  ppsim::Engine engine;
  int interleaved_points = 0;
  for (int p = 1; p <= 8; ++p) {
    for (int v = 2; v <= 4; ++v) {
      for (int m = 1; m <= 4 * p; ++m) {
        INFO("p=" << p << " m=" << m << " v=" << v << " F=" << ratio.forward << " B=" << ratio.backward);
        const double expected = (std::max(m, p) * v + std::min(m, p) - 1) * step;
        const auto bfs = engine.run(ppsim::build_looped_bfs({p, m, v}), costs);
        REQUIRE(bfs.result.has_value());
        CHECK_THAT(bfs.result->makespan, WithinRel(expected, 1e-12));
        for (int d = 0; d < p; ++d) CHECK(bfs.result->per_device[static_cast<std::size_t>(d)].peak_stashed == m * v);
        if (ppsim::check_interleaved({p, m, v})) continue;
        ++interleaved_points;
        const auto interleaved = engine.run(ppsim::build_interleaved_one_f_one_b({p, m, v}), costs);
        REQUIRE(interleaved.result.has_value());
        CHECK_THAT(interleaved.result->makespan, WithinRel(expected, 1e-12));
        for (int d = 0; d < p; ++d) {
          INFO("device " << d);
          CHECK(interleaved.result->per_device[static_cast<std::size_t>(d)].peak_stashed ==
                interleaved_peak_stashed(p, m, v, d));
        }
        // Device 0 warms up longest and holds the most; never more than looped BFS's m·v.
        CHECK(interleaved.result->per_device.front().peak_stashed == interleaved_peak_stashed(p, m, v, 0));
        CHECK(interleaved.result->per_device.front().peak_stashed <= m * v);
      }
    }
  }
  CHECK(interleaved_points > 0);
}

TEST_CASE("Interleaved 1F1B stashes what its warmup implies: p=4, m=8, v=2 holds 11, 9, 7, 5", "[interleaved]") {
  // Device d: 2(p-1-d) + (v-1)p = 10, 8, 6, 4 warmup forwards, plus one before the first backward.
  const ppsim::Result big = ppsim::run_checked(ppsim::build_interleaved_one_f_one_b({4, 8, 2}), uniform(1, 2));
  const std::vector<double> expected_big = {11, 9, 7, 5};
  for (std::size_t d = 0; d < 4; ++d) CHECK(big.per_device[d].peak_stashed == expected_big[d]);
  // p=2, m=4, v=2: warmups of 4 and 2.
  const ppsim::Result small = ppsim::run_checked(ppsim::build_interleaved_one_f_one_b({2, 4, 2}), uniform(1, 2));
  CHECK(small.per_device[0].peak_stashed == 5);
  CHECK(small.per_device[1].peak_stashed == 3);
  // The same 16 chunk-forwards per device under looped BFS are all held at once.
  const ppsim::Result bfs = ppsim::run_checked(ppsim::build_looped_bfs({4, 8, 2}), uniform(1, 2));
  for (std::size_t d = 0; d < 4; ++d) CHECK(bfs.per_device[d].peak_stashed == 16);
}

TEST_CASE("Hand-simulated timelines with F = B = 1 match the engine span for span", "[interleaved]") {
  struct HandCase {
    const char* name;
    ppsim::ScheduleBuild build;
    ppsim::ScheduleParams params;
    std::vector<std::vector<double>> starts;  // per device, in action order
  };
  // Interleaved p=3, m=2 (m < p: one round of 2): d0 0F0 0F1 3F0 3F1 3B0 3B1 0B0 0B1,
  // d1 1F0 1F1 4F0 4F1 4B0 4B1 1B0 1B1, d2 2F0 2F1 5F0 5B0 5F1 5B1 2B0 2B1; makespan 14 = (6+2-1)·2.
  // Interleaved p=2, m=3 (one round of r=3 > p): d0 0F0 0F1 0F2 2F0 2F1 2F2 2B0 2B1 2B2 0B0 0B1 0B2,
  // d1 1F0 1F1 1F2 3F0 3B0 3F1 3B1 3F2 3B2 1B0 1B1 1B2; makespan 14 = (3·2+2-1)·2.
  // Looped BFS p=2, m=2: d0 0F0 0F1 2F0 2F1 2B1 2B0 0B1 0B0, d1 1F0 1F1 3F0 3F1 3B1 3B0 1B1 1B0; 10.
  const HandCase hand = GENERATE(values<HandCase>({
      {"interleaved p=3 m=2 v=2",
       ppsim::build_interleaved_one_f_one_b,
       {3, 2, 2},
       {{0, 1, 3, 4, 8, 10, 11, 13}, {1, 2, 4, 5, 7, 9, 10, 12}, {2, 3, 5, 6, 7, 8, 9, 11}}},
      {"interleaved p=2 m=3 v=2",
       ppsim::build_interleaved_one_f_one_b,
       {2, 3, 2},
       {{0, 1, 2, 3, 4, 5, 6, 8, 10, 11, 12, 13}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}},
      {"looped-bfs p=2 m=2 v=2",
       ppsim::build_looped_bfs,
       {2, 2, 2},
       {{0, 1, 2, 3, 6, 7, 8, 9}, {1, 2, 3, 4, 5, 6, 7, 8}}},
  }));
  INFO(hand.name);
  const ppsim::Result result = ppsim::run_checked(hand.build(hand.params), uniform(1, 1));
  for (int d = 0; d < hand.params.p; ++d) {
    INFO("device " << d);
    CHECK(starts_of(result, d) == hand.starts[static_cast<std::size_t>(d)]);
  }
  const double last = hand.starts.front().back() + 1;  // device 0 ends last
  CHECK(result.makespan == last);
}

TEST_CASE("Interleaved 1F1B and looped BFS at every accepted p <= 8, m <= 4p, v <= 3 are valid and keep the invariants",
          "[interleaved]") {
  const ppsim::UniformCostModel model(ppsim::slow_link_costs());
  const auto comm = GENERATE(ppsim::CommMode::kOverlap, ppsim::CommMode::kBlocking);
  struct Entry {
    const char* name;
    ppsim::ScheduleCheck check;
    ppsim::ScheduleBuild build;
  };
  const Entry entry = GENERATE(values<Entry>({
      {"interleaved-1f1b", ppsim::check_interleaved, ppsim::build_interleaved_one_f_one_b},
      {"looped-bfs", ppsim::check_looped_bfs, ppsim::build_looped_bfs},
  }));
  int simulated = 0;
  for (int p = 1; p <= 8; ++p) {
    for (int v = 1; v <= 3; ++v) {
      for (int m = 1; m <= 4 * p; ++m) {
        if (entry.check({p, m, v})) continue;
        INFO(entry.name << " p=" << p << " m=" << m << " v=" << v);
        const ppsim::Program program = entry.build({p, m, v});
        const auto problem = ppsim::validate_program(program);
        INFO((problem ? problem->message : std::string()));
        REQUIRE_FALSE(problem.has_value());
        CHECK(program.num_stages() == p * v);
        ppsim::run_checked(program, model, comm);
        ++simulated;
      }
    }
  }
  CHECK(simulated > 100);
}

// Megatron-LM's microbatch_group_size_per_vp_stage (N): the goldens were written by a Python port of
// get_schedule_table and the warmup count of forward_backward_pipelining_with_interleaving
// (Megatron-LM d98e8a64), including a short last group (m mod N >= p).
TEST_CASE("Interleaved 1F1B with Megatron's micro-batch group size matches get_schedule_table's order",
          "[interleaved]") {
  const auto [p, m, group] = GENERATE(std::make_tuple(4, 10, 5), std::make_tuple(2, 5, 3), std::make_tuple(4, 9, 5),
                                      std::make_tuple(8, 20, 12));
  const std::string file = "interleaved-1f1b_p" + std::to_string(p) + "_m" + std::to_string(m) + "_v2_group" +
                           std::to_string(group) + ".csv";
  INFO(file);
  const auto rows = read_schedule_csv(std::string(PPSIM_GOLDEN_DIR) + "/" + file);
  ppsim::ScheduleParams params{p, m, 2};
  params.microbatch_group = group;
  REQUIRE_FALSE(ppsim::check_interleaved(params).has_value());
  const ppsim::Program program = ppsim::build_interleaved_one_f_one_b(params);
  REQUIRE_FALSE(ppsim::validate_program(program).has_value());
  REQUIRE(rows.size() == static_cast<std::size_t>(p));
  for (std::size_t d = 0; d < rows.size(); ++d) {
    INFO("device " << d);
    CHECK(program.actions[d] == rows[d]);
    // The warmup grows with the group: (v-1)N + 2(p-1-d) forwards, then the steady state's first
    // forward, before the first backward.
    const int warmup = std::min(group + 2 * (p - 1 - static_cast<int>(d)), 2 * m);
    const auto first_backward = std::find_if(rows[d].begin(), rows[d].end(),
                                             [](const Action& a) { return a.op == Op::kBackward; });
    CHECK(first_backward - rows[d].begin() == warmup + (warmup < 2 * m ? 1 : 0));
  }
}

TEST_CASE("Interleaved 1F1B refuses the group sizes Megatron-LM refuses, and N = p is the default order",
          "[interleaved]") {
  const auto with_group = [](int p, int m, int group) {
    ppsim::ScheduleParams params{p, m, 2};
    params.microbatch_group = group;
    return params;
  };
  // Outside [p, m]: Megatron's ValueError.
  for (const auto& params : {with_group(4, 8, 3), with_group(4, 8, 9)}) {
    const auto why = ppsim::check_interleaved(params);
    REQUIRE(why.has_value());
    CHECK(why->starts_with("needs the micro-batch group size in [p, m] = [4, 8]"));
  }
  // A last group shorter than p: Megatron's RuntimeError (p=4, m=8, N=5 leaves 3).
  const auto short_rest = ppsim::check_interleaved(with_group(4, 8, 5));
  REQUIRE(short_rest.has_value());
  CHECK(short_rest->find("remainder 3 < p = 4") != std::string::npos);
  // torch's two rounds of 5 at m = 10 are Megatron's N = 5; m = 9 splits into no equal rounds, yet
  // N = 5 leaves a last group of 4 = p, which Megatron accepts.
  CHECK(ppsim::build_interleaved_one_f_one_b(with_group(4, 10, 5)).actions ==
        ppsim::build_interleaved_one_f_one_b({4, 10, 2}).actions);
  CHECK(ppsim::check_interleaved({4, 9, 2}).has_value());
  CHECK_FALSE(ppsim::check_interleaved(with_group(4, 9, 5)).has_value());
  // N = p is Megatron's default, the order without the flag.
  CHECK(ppsim::build_interleaved_one_f_one_b(with_group(4, 12, 4)).actions ==
        ppsim::build_interleaved_one_f_one_b({4, 12, 2}).actions);
}

TEST_CASE("Interleaved 1F1B at every group size Megatron accepts for p <= 6, m <= 3p is valid and keeps the invariants",
          "[interleaved]") {
  const ppsim::UniformCostModel model(ppsim::slow_link_costs());
  int simulated = 0;
  for (int p = 1; p <= 6; ++p) {
    for (int m = 1; m <= 3 * p; ++m) {
      for (int group = p; group <= m; ++group) {
        ppsim::ScheduleParams params{p, m, 3};
        params.microbatch_group = group;
        if (ppsim::check_interleaved(params)) continue;
        INFO("p=" << p << " m=" << m << " N=" << group);
        const ppsim::Program program = ppsim::build_interleaved_one_f_one_b(params);
        REQUIRE_FALSE(ppsim::validate_program(program).has_value());
        ppsim::run_checked(program, model, ppsim::CommMode::kOverlap);
        ++simulated;
      }
    }
  }
  CHECK(simulated > 50);
}
