// SPDX-License-Identifier: Apache-2.0
// DualPipeV (dualpipe_v.cpp): its order against golden CSVs written by hand from the step structure
// of deepseek-ai/DualPipe's dualpipev.py, its overlapped pairs, its refusals, the bubble and
// activation figures of DualPipe's README table, and the engine invariants at every small size.
//
// What the README's table means in ppsim's figures (PP = 2p stages on p devices; F, B, W per chunk;
// F&B the time of one overlapped op):
// - "Bubble (PP/2-1)(F&B + B - 3W)" is every device's idle time, makespan - busy, at the proportions
//   of the README's figure: F = I = W = t, B = I + W = 2t and F&B = F + B = 3t (the figure draws an
//   overlapped cell as one F cell plus one B cell). There it is 2(p-1)t: counted by hand on the
//   figure (p = 4, m = 10), device 0 waits 3 + 1 + 1 + 1 = 6 cells = 2(4-1)t. Every device does
//   2m forwards and 2m full backwards' worth of work, 6mt, so makespan = (6m + 2p - 2)t and
//   bubble_ratio = (p-1)/(3m+p-1). Device d starts at d*t and all devices end together, so the
//   idle inside device d's own span is (2p-2-d)t, the README's value on device 0. Away from those
//   proportions the engine's idle differs from the formula (at p = 4, m = 8, F = I = W = 1 it is 1
//   at F&B = 2 and 11 at F&B = 4, against 3 and 9): the README's expression is the figure's count,
//   not a closed form in F, B, W and F&B.
// - "Activation per device PP+1", in stashes of one stage (chunk) for one micro-batch: after step 2
//   device d holds 2(p-1-d) + (d+1) chunk-0 and d+1 chunk-1 forwards, 2p in all; each I W F of step
//   3 keeps that level; the first overlapped op of step 4 allocates its F's stash at its start and
//   frees its B's only at its end, so 2p + 1 = PP + 1 on every device, for any costs and any
//   weight-stash fraction (the order alone fixes it), once m >= 2p.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/builders.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/invariants.hpp"

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using ppsim::Action;
using ppsim::Op;

namespace {

std::size_t at(int i) { return static_cast<std::size_t>(i); }

// A device's list as torch prints it: one cell per op, an overlapped pair as "(0F3;3B1)OVERLAP_F_B".
std::vector<std::string> cells(const std::vector<Action>& list) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].fused_with_next && i + 1 < list.size()) {
      out.push_back("(" + ppsim::to_string(list[i]) + ";" + ppsim::to_string(list[i + 1]) + ")OVERLAP_F_B");
      ++i;
    } else {
      out.push_back(ppsim::to_string(list[i]));
    }
  }
  return out;
}

// One row per device, comma-separated cells: torch.distributed.pipelining's _dump_csv layout.
std::vector<std::vector<std::string>> read_csv_cells(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> row;
    std::stringstream stream(line);
    std::string cell;
    while (std::getline(stream, cell, ',')) row.push_back(cell);
    rows.push_back(std::move(row));
  }
  return rows;
}

ppsim::UniformCostModel costs_of(double forward, double backward, double weight, std::optional<double> overlap,
                                 double weight_stash_fraction = 0.5, std::int64_t bytes = 0) {
  ppsim::UniformCosts costs;
  costs.forward = ppsim::Duration{forward};
  costs.backward = ppsim::Duration{backward};
  costs.weight = ppsim::Duration{weight};
  if (overlap) costs.overlap = ppsim::Duration{*overlap};
  costs.weight_stash_fraction = weight_stash_fraction;
  costs.activation_bytes = ppsim::ByteCount{bytes};
  return ppsim::UniformCostModel(costs);
}

ppsim::Program build(int p, int m) {
  REQUIRE_FALSE(ppsim::check_dualpipev({p, m, 2}).has_value());
  return ppsim::build_dualpipev({p, m, 2});
}

// Overlapped pairs on device d: 2(m-2p+d+1) in step 4 and p-1-d in step 5, less the last device's
// first step-4 pair, which it runs apart.
int expected_pairs(int p, int m, int d) { return 2 * (m - 2 * p + d + 1) + (p - 1 - d) - (d == p - 1 ? 1 : 0); }

}  // namespace

TEST_CASE("DualPipeV accepts v = 2 with m >= 2p and refuses fewer micro-batches or other v, saying why",
          "[dualpipev]") {
  for (int p = 1; p <= 8; ++p) {
    for (int m = 1; m <= 4 * p; ++m) {
      INFO("p=" << p << " m=" << m);
      const auto why = ppsim::check_dualpipev({p, m, 2});
      if (m >= 2 * p) {
        CHECK_FALSE(why.has_value());
      } else {
        REQUIRE(why.has_value());
        CHECK(why->find("m >= 2p") != std::string::npos);
        CHECK(why->find("got m = " + std::to_string(m) + " for p = " + std::to_string(p)) != std::string::npos);
        CHECK(why->find("needs m >= " + std::to_string(2 * p) + ")") != std::string::npos);
      }
    }
  }
  // Odd p and odd m are fine: neither reference asks for an even count (DualPipe without V does).
  CHECK_FALSE(ppsim::check_dualpipev({3, 7, 2}).has_value());
  const int v = GENERATE(1, 3, 4);
  const auto why = ppsim::check_dualpipev({4, 8, v});
  REQUIRE(why.has_value());
  CHECK(why->find("v = 2") != std::string::npos);
  CHECK(why->find("got v = " + std::to_string(v)) != std::string::npos);
}

TEST_CASE("DualPipeV at p=2, m=4 and p=4, m=8 matches its hand-written golden CSV cell for cell", "[dualpipev]") {
  struct Size {
    int p;
    int m;
  };
  const Size size = GENERATE(values<Size>({{2, 4}, {4, 8}}));
  const std::string path =
      std::string(PPSIM_GOLDEN_DIR) + "/dualpipev_p" + std::to_string(size.p) + "_m" + std::to_string(size.m) + ".csv";
  INFO(path);
  const auto golden = read_csv_cells(path);
  const ppsim::Program program = build(size.p, size.m);

  CHECK(program.stage_device == ppsim::v_stage_mapping(size.p));
  REQUIRE(golden.size() == at(size.p));
  REQUIRE(program.actions.size() == golden.size());
  for (int d = 0; d < size.p; ++d) {
    INFO("device " << d);
    CHECK(cells(program.actions[at(d)]) == golden[at(d)]);
    const auto pairs = std::count_if(golden[at(d)].begin(), golden[at(d)].end(),
                                     [](const std::string& cell) { return cell.front() == '('; });
    CHECK(pairs == expected_pairs(size.p, size.m, d));
  }
}

TEST_CASE("DualPipeV's device 0 at p=2, m=4 begins and counts its ops as torch's ScheduleDualPipeV plan",
          "[dualpipev]") {
  // Rank 0's pipeline_order_with_comms for PP=2, 4 stages, 4 micro-batches as torch printed it (recorded
  // in a third-party study of torch's plan), its SEND/RECV/UNSHARD actions left out: the first nine
  // computation cells, and in all 5 F, 3 I, 3 W, 3 OVERLAP_F_B and 2 B outside the pairs.
  const std::vector<std::string> torch_prefix = {
      "0F0", "0F1", "0F2", "3F0", "3I0", "3W0", "3F1", "(0F3;3B1)OVERLAP_F_B", "(3F2;0B0)OVERLAP_F_B"};
  const auto device0 = cells(build(2, 4).actions.front());
  REQUIRE(device0.size() >= torch_prefix.size());
  CHECK(std::vector<std::string>(device0.begin(), device0.begin() + static_cast<std::ptrdiff_t>(torch_prefix.size())) ==
        torch_prefix);
  const auto count = [&](char letter) {
    return std::count_if(device0.begin(), device0.end(),
                         [&](const std::string& cell) { return cell.front() != '(' && cell[1] == letter; });
  };
  CHECK(count('F') == 5);
  CHECK(count('I') == 3);
  CHECK(count('W') == 3);
  CHECK(count('B') == 2);
  CHECK(std::count_if(device0.begin(), device0.end(), [](const std::string& cell) { return cell.front() == '('; }) ==
        3);
}

TEST_CASE("DualPipeV runs F and either B or I and W exactly once for every stage and micro-batch, on its device",
          "[dualpipev]") {
  for (int p = 1; p <= 8; ++p) {
    for (int m = 2 * p; m <= 4 * p; ++m) {
      INFO("p=" << p << " m=" << m);
      const ppsim::Program program = build(p, m);
      REQUIRE(program.stage_device == ppsim::v_stage_mapping(p));
      const int stages = 2 * p;
      std::vector<int> count(at(stages * m * ppsim::kNumOps), 0);
      for (int d = 0; d < p; ++d) {
        for (const Action& a : program.actions[at(d)]) {
          REQUIRE(a.stage >= 0);
          REQUIRE(a.stage < stages);
          REQUIRE(a.microbatch >= 0);
          REQUIRE(a.microbatch < m);
          CHECK(program.stage_device[at(a.stage)] == d);
          ++count[at((a.stage * m + a.microbatch) * ppsim::kNumOps + static_cast<int>(a.op))];
        }
      }
      for (int s = 0; s < stages; ++s) {
        for (int j = 0; j < m; ++j) {
          INFO("stage " << s << " micro-batch " << j);
          const auto n = [&](Op op) { return count[at((s * m + j) * ppsim::kNumOps + static_cast<int>(op))]; };
          CHECK(n(Op::kForward) == 1);
          CHECK(n(Op::kBackwardInput) == n(Op::kBackwardWeight));
          CHECK(n(Op::kBackward) + n(Op::kBackwardInput) == 1);
        }
      }
      const auto problem = ppsim::validate_program(program);
      INFO((problem ? problem->message : std::string()));
      CHECK_FALSE(problem.has_value());
    }
  }
}

TEST_CASE("DualPipeV overlaps only a forward with the full backward of the other chunk on the same device",
          "[dualpipev]") {
  for (int p = 1; p <= 8; ++p) {
    for (int m = 2 * p; m <= 4 * p; ++m) {
      INFO("p=" << p << " m=" << m);
      const ppsim::Program program = build(p, m);
      for (int d = 0; d < p; ++d) {
        INFO("device " << d);
        const auto& list = program.actions[at(d)];
        int pairs = 0;
        for (std::size_t i = 0; i < list.size(); ++i) {
          if (!list[i].fused_with_next) continue;
          INFO("step " << i << ": " << ppsim::to_string(list[i]));
          ++pairs;
          CHECK(list[i].op == Op::kForward);
          REQUIRE(i + 1 < list.size());
          const Action& partner = list[i + 1];
          CHECK_FALSE(partner.fused_with_next);
          CHECK(partner.op == Op::kBackward);  // the references overlap full backwards only
          // The other chunk of this device: stages d and 2p-1-d.
          CHECK(partner.stage == 2 * p - 1 - list[i].stage);
        }
        CHECK(pairs == expected_pairs(p, m, d));
      }
    }
  }
}

TEST_CASE("DualPipeV at the README figure's proportions idles (PP/2-1)(F&B+B-3W) = 2(p-1)t on every device",
          "[dualpipev]") {
  const int p = GENERATE(range(1, 9));
  const double t = GENERATE(1.0, 0.7);
  // F = I = W = t, B = 2t, F&B = F + B: one overlapped cell is an F cell and a B cell in the figure.
  const double forward = t, backward = 2 * t, weight = t, overlap = 3 * t;
  const auto costs = costs_of(forward, backward, weight, overlap);
  const double readme_bubble = (2.0 * p / 2 - 1) * (overlap + backward - 3 * weight);
  ppsim::Engine engine;
  for (int m = 2 * p; m <= 4 * p + 4; ++m) {
    INFO("p=" << p << " m=" << m << " t=" << t);
    const auto outcome = engine.run(build(p, m), costs);
    REQUIRE(outcome.result.has_value());
    const ppsim::Result& result = *outcome.result;
    CHECK_THAT(result.makespan, WithinRel((6 * m + 2 * p - 2) * t, 1e-12));
    CHECK_THAT(result.total_busy, WithinRel(6.0 * p * m * t, 1e-12));
    const double ratio = static_cast<double>(p - 1) / (3 * m + p - 1);
    CHECK_THAT(result.bubble_ratio, WithinRel(ratio, 1e-12) || WithinAbs(ratio, 1e-13));
    for (int d = 0; d < p; ++d) {
      INFO("device " << d);
      const ppsim::DeviceFigures& device = result.per_device[at(d)];
      CHECK_THAT(device.busy, WithinRel(6 * m * t, 1e-12));
      CHECK_THAT(device.idle, WithinAbs(readme_bubble, 1e-9));
      CHECK_THAT(device.idle, WithinAbs(2 * (p - 1) * t, 1e-9));
      // Device d starts after the d forwards above it and every device ends with the step, so the
      // idle inside its own span (the zero-bubble papers' bubble) is (2p-2-d)t: the README's on device 0.
      CHECK_THAT(device.start, WithinAbs(d * t, 1e-9));
      CHECK_THAT(device.end, WithinRel(result.makespan, 1e-12));
      CHECK_THAT(device.end - device.start - device.busy, WithinAbs((2 * p - 2 - d) * t, 1e-9));
    }
  }
}

TEST_CASE("DualPipeV stashes PP+1 = 2p+1 stages on every device once m >= 2p, whatever the costs", "[dualpipev]") {
  const double fraction = GENERATE(0.0, 0.3, 0.5, 1.0);
  struct Ratio {
    double forward;
    double backward;
    double weight;
    std::optional<double> overlap;
  };
  const Ratio ratio = GENERATE(values<Ratio>({{1, 2, 1, std::nullopt}, {1, 2, 1, 2.0}, {0.7, 2.6, 1.9, 1.5}}));
  constexpr std::int64_t kStageBytes = 1000;
  const auto costs = costs_of(ratio.forward, ratio.backward, ratio.weight, ratio.overlap, fraction, kStageBytes);
  ppsim::Engine engine;
  for (int p = 1; p <= 8; ++p) {
    for (int m = 2 * p; m <= 4 * p; ++m) {
      INFO("p=" << p << " m=" << m << " weight_stash_fraction=" << fraction);
      const auto outcome = engine.run(build(p, m), costs);
      REQUIRE(outcome.result.has_value());
      for (int d = 0; d < p; ++d) {
        INFO("device " << d);
        const ppsim::DeviceFigures& device = outcome.result->per_device[at(d)];
        CHECK(device.peak_stashed == 2 * p + 1);
        CHECK(device.peak_activation_bytes == (2 * p + 1) * kStageBytes);
      }
    }
  }
}

TEST_CASE("DualPipeV at every accepted p <= 8, m <= 4p and other cost ratios finishes and keeps the invariants",
          "[dualpipev]") {
  struct Ratio {
    double forward;
    double backward;
    double weight;
    std::optional<double> overlap;
    double latency;
  };
  // No overlap gain; the figure's; a real gain (F&B < F + B); a slow W; and a slow link.
  const Ratio ratio = GENERATE(values<Ratio>({{1, 2, 1, std::nullopt, 0},
                                              {1, 2, 1, 2.0, 0},
                                              {1, 3, 0.5, 3.2, 0},
                                              {0.7, 2.6, 1.9, 2.5, 0},
                                              {1, 2, 1, 2.5, 0.25}}));
  const auto comm = GENERATE(ppsim::CommMode::kOverlap, ppsim::CommMode::kBlocking);
  ppsim::UniformCosts settings;
  settings.forward = ppsim::Duration{ratio.forward};
  settings.backward = ppsim::Duration{ratio.backward};
  settings.weight = ppsim::Duration{ratio.weight};
  if (ratio.overlap) settings.overlap = ppsim::Duration{*ratio.overlap};
  settings.latency = ppsim::Duration{ratio.latency};
  settings.activation_bytes = ppsim::ByteCount{1000};
  settings.message_bytes = ppsim::ByteCount{50};
  settings.bandwidth = ppsim::Bandwidth{100};
  const ppsim::UniformCostModel costs(settings);
  for (int p = 1; p <= 8; ++p) {
    for (int m = 2 * p; m <= 4 * p; ++m) {
      INFO("p=" << p << " m=" << m << " F=" << ratio.forward << " B=" << ratio.backward << " W=" << ratio.weight
                << " F&B=" << ratio.overlap.value_or(ratio.forward + ratio.backward) << " latency=" << ratio.latency);
      const ppsim::Program program = build(p, m);
      const auto problem = ppsim::validate_program(program);
      INFO((problem ? problem->message : std::string()));
      REQUIRE_FALSE(problem.has_value());
      const ppsim::Result result = ppsim::run_checked(program, costs, comm);
      // The V's turn (stages p-1 and p) stays on device p-1: every other boundary sends both ways.
      std::int64_t messages = 0;
      for (const auto& link : result.per_link) messages += link.messages;
      CHECK(messages == 2 * m * (2 * p - 2));
    }
  }
}
