// SPDX-License-Identifier: Apache-2.0
// ZB-H1 and ZB-H2 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §2): their action order
// against hand-written golden CSVs, the paper's bubble and memory figures (Table 2, §2.3) with uniform
// costs and free links, and the engine invariants at every size they accept.
//
// Notation: the paper's T_F, T_B, T_W are ppsim's F, I = B - W and W (ppsim's --backward is the full
// B = I + W). The paper's "bubble" is the idle time of the critical device, device 0, between its first
// start and its last end; ZB-H2 drops the optimizer-step synchronisation so its parallelogram tiles, which
// makes that span, not the global makespan, the one that counts. Why the figures below hold:
// - Both schedules run on device d, in order: some warmup forwards, then pairs F, I whose W's are held
//   back, then triples F, I, W, then pairs I, W, then the held W's. ZB-H1 holds d W's after p-d-1
//   warmup forwards, ZB-H2 holds 2d after 2(p-d-1).
// - Memory (§2.3, workers numbered from 1 there): just after each steady forward device d holds its
//   warmup + 1 forwards whose I has not run (full stashes, M_B) and the held W's (M_W each):
//   ZB-H1 (p-d)·M_B + d·M_W, ZB-H2 (2p-2d-1)·M_B + 2d·M_W. ppsim counts M_W as weight_stash_fraction
//   of a stash, so peak_stashed is (p-d) + d·f and (2p-2d-1) + 2d·f.
// - Time (Table 2): with X = T_F+T_B-T_W (ZB-H1, when T_W <= T_F) or T_F+T_B-2T_W (ZB-H2, when
//   T_W <= T_F and T_W <= T_B), device 0 idles (p-1)·X: ZB-H1's device 0 waits (p-1)·T_B for its first I
//   (the gradient climbs p-1 stages of T_B while it runs its p forwards) and the held W's fill all but
//   (p-1)·(T_F-T_W) of the tail. Per device the simulation gives more, pinned here as a regression:
//   device d starts at d·T_F and idles (p-1-d)·X in its own span (the last device never waits), so the
//   makespan is m(T_F+T_B+T_W) + (p-1)·max(T_F, X): ZB-H1's equals the paper's bubble only when
//   T_W <= T_B too, and ZB-H2's parallelogram adds the skew (p-1)·T_F when T_F = T_B = T_W.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/builders.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/golden.hpp"
#include "support/invariants.hpp"

using Catch::Matchers::WithinAbs;
using ppsim::Action;
using ppsim::Op;

namespace {

using ppsim::read_schedule_csv;
using ppsim::read_text;
using ppsim::to_csv;

// Per-op times in the paper's notation: I's time is t_b, ppsim's full backward is t_b + t_w.
struct PaperCosts {
  double t_f;
  double t_b;
  double t_w;
};

enum class Kind { kH1, kH2 };

const char* name_of(Kind kind) { return kind == Kind::kH1 ? "zb-h1" : "zb-h2"; }

ppsim::Program build(Kind kind, int p, int m) {
  const ppsim::ScheduleParams params{p, m, 1};
  REQUIRE_FALSE((kind == Kind::kH1 ? ppsim::check_zero_bubble_h1(params) : ppsim::check_zero_bubble_h2(params)));
  return kind == Kind::kH1 ? ppsim::build_zero_bubble_h1(params) : ppsim::build_zero_bubble_h2(params);
}

int min_microbatches(Kind kind, int p) { return kind == Kind::kH1 ? p : 2 * p - 1; }

ppsim::UniformCostModel uniform(PaperCosts c, double fraction = 0.5, std::int64_t activation_bytes = 0) {
  ppsim::UniformCosts costs;
  costs.forward = ppsim::Duration{c.t_f};
  costs.backward = ppsim::Duration{c.t_b + c.t_w};
  costs.weight = ppsim::Duration{c.t_w};
  costs.weight_stash_fraction = fraction;
  costs.activation_bytes = ppsim::ByteCount{activation_bytes};
  return ppsim::UniformCostModel(costs);
}

// X of the file comment: device 0's bubble is (p-1)·X.
double bubble_per_stage(Kind kind, PaperCosts c) {
  return kind == Kind::kH1 ? c.t_f + c.t_b - c.t_w : c.t_f + c.t_b - 2 * c.t_w;
}

bool in_regime(Kind kind, PaperCosts c) { return c.t_w <= c.t_f && (kind == Kind::kH1 || c.t_w <= c.t_b); }

double own_idle(const ppsim::DeviceFigures& device) { return device.end - device.start - device.busy; }

// Full stashes and the stashes only W still needs, at device d's peak (file comment).
double expected_peak_stashed(Kind kind, int p, int d, double fraction) {
  return kind == Kind::kH1 ? (p - d) + d * fraction : (2 * p - 2 * d - 1) + 2 * d * fraction;
}

// From the action order alone: forwards before the first I, and the most micro-batches whose
// forward has run but whose W has not.
struct RowShape {
  int forwards_before_first_input = 0;
  int max_in_flight = 0;
};

RowShape shape_of(const std::vector<Action>& row) {
  RowShape shape;
  bool seen_input = false;
  int in_flight = 0;
  for (const Action& a : row) {
    if (a.op == Op::kBackwardInput) seen_input = true;
    if (a.op == Op::kForward && !seen_input) ++shape.forwards_before_first_input;
    in_flight += a.op == Op::kForward ? 1 : (a.op == Op::kBackwardWeight ? -1 : 0);
    shape.max_in_flight = std::max(shape.max_in_flight, in_flight);
  }
  return shape;
}

}  // namespace

TEST_CASE("ZB-H1 and ZB-H2 match their hand-written golden CSV schedules action for action", "[zero-bubble-h]") {
  struct Golden {
    Kind kind;
    int p;
    int m;
  };
  const Golden golden =
      GENERATE(values<Golden>({{Kind::kH1, 4, 8}, {Kind::kH1, 3, 6}, {Kind::kH2, 4, 8}, {Kind::kH2, 3, 6}}));
  const std::string path = std::string(PPSIM_GOLDEN_DIR) + "/" + name_of(golden.kind) + "_p" +
                           std::to_string(golden.p) + "_m" + std::to_string(golden.m) + ".csv";
  INFO(path);
  const auto rows = read_schedule_csv(path);
  const ppsim::Program program = build(golden.kind, golden.p, golden.m);

  REQUIRE(rows.size() == static_cast<std::size_t>(golden.p));
  REQUIRE(program.actions.size() == rows.size());
  for (std::size_t d = 0; d < rows.size(); ++d) {
    INFO("device " << d);
    CHECK(program.actions[d] == rows[d]);
    CHECK(program.stage_device[d] == static_cast<int>(d));
  }
  CHECK(to_csv(program) == read_text(path));

  // The golden files on their own are valid and have the shape the paper describes.
  ppsim::Program from_file;
  from_file.num_devices = golden.p;
  from_file.num_microbatches = golden.m;
  from_file.stage_device = ppsim::loop_stage_mapping(golden.p, 1);
  from_file.actions = rows;
  const auto problem = ppsim::validate_program(from_file);
  INFO((problem ? problem->message : std::string()));
  CHECK_FALSE(problem.has_value());
  for (int d = 0; d < golden.p; ++d) {
    INFO("device " << d);
    const RowShape shape = shape_of(rows[static_cast<std::size_t>(d)]);
    if (golden.kind == Kind::kH1) {
      // 1F1B's warmup plus one forward; every device keeps p micro-batches in flight (§2.1).
      CHECK(shape.forwards_before_first_input == golden.p - d);
      CHECK(shape.max_in_flight == golden.p);
    } else {
      // Extra warmup forwards fill the wait for the first I; 2p-1 in flight (§2.2).
      CHECK(shape.forwards_before_first_input == 2 * golden.p - 2 * d - 1);
      CHECK(shape.max_in_flight == 2 * golden.p - 1);
    }
  }
}

TEST_CASE("ZB-H1 and ZB-H2 refuse v != 1 with the reason and accept every m", "[zero-bubble-h]") {
  const auto h1_chunks = ppsim::check_zero_bubble_h1({4, 8, 2});
  REQUIRE(h1_chunks.has_value());
  CHECK(h1_chunks->find("v = 1") != std::string::npos);
  const auto h2_chunks = ppsim::check_zero_bubble_h2({4, 8, 2});
  REQUIRE(h2_chunks.has_value());
  CHECK(h2_chunks->find("v = 1") != std::string::npos);

  const int p = GENERATE(range(1, 9));
  for (int m = 1; m <= 2 * p; ++m) {
    CHECK_FALSE(ppsim::check_zero_bubble_h1({p, m, 1}).has_value());
    CHECK_FALSE(ppsim::check_zero_bubble_h2({p, m, 1}).has_value());
  }
}

// Below their thresholds the goldens come from the zero-bubble repository: ZB-H1 from its hand-written
// schedule (branch zb-h1-quick-start: Megatron's 1F1B warmup min(p-d-1, m), device d's W's held d
// back), ZB-H2 from its scheduler (zerobubble/scheduler/zb.py at memory limit 2p, sail-sg 39f2c186),
// both through Python ports of that code.
TEST_CASE("ZB-H1 below m = p and ZB-H2 below m = 2p-1 are the zero-bubble repository's orders", "[zero-bubble-h]") {
  const auto [name, p, m] = GENERATE(table<std::string, int, int>({{"zb-h1", 8, 4},
                                                                   {"zb-h1", 4, 3},
                                                                   {"zb-h2", 8, 7},
                                                                   {"zb-h2", 4, 5},
                                                                   {"zb-h2", 8, 12}}));
  const std::string path =
      std::string(PPSIM_GOLDEN_DIR) + "/" + name + "_p" + std::to_string(p) + "_m" + std::to_string(m) + ".csv";
  INFO(path);
  const ppsim::Program program = ppsim::find_schedule(name)->build({p, m, 1});
  CHECK(program.actions == ppsim::read_schedule_csv(path));
  // With m = p or fewer nothing is left to hold back on device 0; ZB-H2 short of 2p-1 holds
  // 2d - (2p-1-m) W's, the most its first I leaves time for.
  if (name == "zb-h2") {
    const ppsim::Program h1 = ppsim::find_schedule("zb-h1")->build({p, m, 1});
    const ppsim::UniformCostModel costs = uniform({1, 1, 1});
    ppsim::Engine engine;
    const auto h2_run = engine.run(program, costs).result;
    const auto h1_run = engine.run(h1, costs).result;
    REQUIRE(h2_run.has_value());
    REQUIRE(h1_run.has_value());
    CHECK(h2_run->makespan <= h1_run->makespan);
  }
}

TEST_CASE("ZB-H1 and ZB-H2 idle the paper's (p-1)(T_F+T_B-T_W) and (p-1)(T_F+T_B-2T_W) inside their regimes",
          "[zero-bubble-h]") {
  const Kind kind = GENERATE(Kind::kH1, Kind::kH2);
  // The paper's T_F = T_B = T_W, its transformer ratio T_W < T_F < T_B with T_B + T_W = 2T_F, and others.
  const PaperCosts c = GENERATE(values<PaperCosts>(
      {{1, 1, 1}, {1, 1.25, 0.75}, {1, 2, 1}, {1.3, 2.1, 0.7}, {2, 1, 0.5}, {1, 1, 0.25}, {3, 0.5, 0.5}}));
  REQUIRE(in_regime(kind, c));
  const double x = bubble_per_stage(kind, c);
  ppsim::Engine engine;
  const ppsim::UniformCostModel costs = uniform(c);
  for (int p = 2; p <= 8; ++p) {
    for (int m = min_microbatches(kind, p); m <= 4 * p; ++m) {
      INFO(name_of(kind) << " p=" << p << " m=" << m << " T_F=" << c.t_f << " T_B=" << c.t_b << " T_W=" << c.t_w);
      const auto outcome = engine.run(build(kind, p, m), costs);
      REQUIRE(outcome.result.has_value());
      const ppsim::Result& result = *outcome.result;
      const double busy = m * (c.t_f + c.t_b + c.t_w);
      // Table 2: the critical device's bubble.
      CHECK_THAT(own_idle(result.per_device.front()), WithinAbs((p - 1) * x, 1e-12));
      for (int d = 0; d < p; ++d) {
        const ppsim::DeviceFigures& device = result.per_device[static_cast<std::size_t>(d)];
        INFO("device " << d);
        CHECK_THAT(device.busy, WithinAbs(busy, 1e-12));
        CHECK_THAT(device.start, WithinAbs(d * c.t_f, 1e-12));
        CHECK_THAT(own_idle(device), WithinAbs((p - 1 - d) * x, 1e-12));
      }
      CHECK_THAT(result.makespan, WithinAbs(busy + (p - 1) * std::max(c.t_f, x), 1e-12));
    }
  }
}

TEST_CASE("At T_F = T_B = T_W ZB-H1 idles a third of 1F1B and ZB-H2 runs every device without a gap",
          "[zero-bubble-h]") {
  const PaperCosts c{1, 1, 1};
  ppsim::Engine engine;
  const ppsim::UniformCostModel costs = uniform(c);
  for (int p = 2; p <= 8; ++p) {
    for (int m = 2 * p - 1; m <= 4 * p; ++m) {
      INFO("p=" << p << " m=" << m);
      const auto one_f_one_b = engine.run(ppsim::build_one_f_one_b({p, m, 1}), costs).result;
      const auto h1 = engine.run(build(Kind::kH1, p, m), costs).result;
      const auto h2 = engine.run(build(Kind::kH2, p, m), costs).result;
      REQUIRE(one_f_one_b.has_value());
      REQUIRE(h1.has_value());
      REQUIRE(h2.has_value());
      const double busy = 3.0 * m;
      CHECK_THAT(3 * (h1->makespan - busy), WithinAbs(one_f_one_b->makespan - busy, 1e-12));
      // The parallelogram: no device ever waits between its first and last op.
      for (const auto& device : h2->per_device) CHECK_THAT(own_idle(device), WithinAbs(0, 1e-12));
    }
  }
}

TEST_CASE("ZB-H1 and ZB-H2 stash (p-d)M_B + d·M_W and (2p-2d-1)M_B + 2d·M_W on device d", "[zero-bubble-h]") {
  const Kind kind = GENERATE(Kind::kH1, Kind::kH2);
  const double fraction = GENERATE(0.0, 0.25, 0.5, 1.0);
  constexpr std::int64_t kActivation = std::int64_t{3} << 20;  // divisible by 4: M_W is exact in bytes
  const auto kept = static_cast<std::int64_t>(fraction * static_cast<double>(kActivation));
  const ppsim::UniformCostModel costs = uniform({1, 1, 1}, fraction, kActivation);
  ppsim::Engine engine;
  for (int p = 1; p <= 8; ++p) {
    for (int m = min_microbatches(kind, p); m <= 4 * p; ++m) {
      INFO(name_of(kind) << " p=" << p << " m=" << m << " fraction=" << fraction);
      const auto outcome = engine.run(build(kind, p, m), costs);
      REQUIRE(outcome.result.has_value());
      std::int64_t peak_bytes = 0;
      for (int d = 0; d < p; ++d) {
        const ppsim::DeviceFigures& device = outcome.result->per_device[static_cast<std::size_t>(d)];
        INFO("device " << d);
        const int full = kind == Kind::kH1 ? p - d : 2 * p - 2 * d - 1;
        const int held = kind == Kind::kH1 ? d : 2 * d;
        CHECK_THAT(device.peak_stashed, WithinAbs(expected_peak_stashed(kind, p, d, fraction), 1e-12));
        CHECK(device.peak_activation_bytes == full * kActivation + held * kept);
        peak_bytes = std::max(peak_bytes, device.peak_activation_bytes);
      }
      // Table 2's peak over the devices: p·M_B and (2p-1)·M_B, on device 0, since M_W <= M_B.
      CHECK(peak_bytes == (kind == Kind::kH1 ? p : 2 * p - 1) * kActivation);
    }
  }
}

TEST_CASE("ZB-H1 stashes exactly 1F1B's min(p-d, m) full micro-batches, the W's holding only their part",
          "[zero-bubble-h]") {
  // With weight_stash_fraction 0, I frees the whole stash, so peak_stashed counts full stashes only.
  const ppsim::UniformCostModel costs = uniform({1, 1, 1}, 0.0);
  ppsim::Engine engine;
  for (int p = 1; p <= 8; ++p) {
    for (int m = p; m <= 4 * p; ++m) {
      INFO("p=" << p << " m=" << m);
      const auto h1 = engine.run(build(Kind::kH1, p, m), costs).result;
      const auto one_f_one_b = engine.run(ppsim::build_one_f_one_b({p, m, 1}), costs).result;
      REQUIRE(h1.has_value());
      REQUIRE(one_f_one_b.has_value());
      for (int d = 0; d < p; ++d) {
        INFO("device " << d);
        const auto i = static_cast<std::size_t>(d);
        CHECK(h1->per_device[i].peak_stashed == std::min(p - d, m));
        CHECK(h1->per_device[i].peak_stashed == one_f_one_b->per_device[i].peak_stashed);
      }
    }
  }
}

TEST_CASE("Outside their regimes (T_W > T_F) ZB-H1 and ZB-H2 still run, only off the paper's bubble",
          "[zero-bubble-h]") {
  const Kind kind = GENERATE(Kind::kH1, Kind::kH2);
  const PaperCosts c = GENERATE(values<PaperCosts>({{1, 1, 2}, {1, 0.5, 1.5}, {0.5, 2, 1}}));
  REQUIRE_FALSE(in_regime(kind, c));
  const ppsim::UniformCostModel costs = uniform(c);
  for (int p = 2; p <= 6; ++p) {
    for (int m : {min_microbatches(kind, p), 3 * p}) {
      INFO(name_of(kind) << " p=" << p << " m=" << m << " T_F=" << c.t_f << " T_B=" << c.t_b << " T_W=" << c.t_w);
      const ppsim::Result result = ppsim::run_checked(build(kind, p, m), costs);
      // The W's held back no longer fit in the tail: device 0 idles more than the formula says.
      CHECK(own_idle(result.per_device.front()) > (p - 1) * bubble_per_stage(kind, c) + 1e-9);
    }
  }
}

TEST_CASE("Every ZB-H1 and ZB-H2 size accepted for p <= 8, m <= 4p is valid and keeps the engine invariants",
          "[zero-bubble-h]") {
  const Kind kind = GENERATE(Kind::kH1, Kind::kH2);
  const auto comm = GENERATE(ppsim::CommMode::kOverlap, ppsim::CommMode::kBlocking);
  // The registry test's model: slow links, so messages queue and latency shifts every op.
  const ppsim::UniformCostModel model(ppsim::slow_link_costs());
  int simulated = 0;
  for (int p = 1; p <= 8; ++p) {
    for (int v = 1; v <= 3; ++v) {
      for (int m = 1; m <= 4 * p; ++m) {
        const ppsim::ScheduleParams params{p, m, v};
        const auto why = kind == Kind::kH1 ? ppsim::check_zero_bubble_h1(params) : ppsim::check_zero_bubble_h2(params);
        CHECK(why.has_value() == (v != 1));
        if (why) continue;
        INFO(name_of(kind) << " p=" << p << " m=" << m);
        const ppsim::Program program = build(kind, p, m);
        const auto problem = ppsim::validate_program(program);
        INFO((problem ? problem->message : std::string()));
        REQUIRE_FALSE(problem.has_value());
        CHECK(program.num_stages() == p);
        ppsim::run_checked(program, model, comm);
        ++simulated;
      }
    }
  }
  CHECK(simulated == 144);  // every m from 1 to 4p, for p = 1..8
}
