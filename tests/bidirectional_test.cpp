// SPDX-License-Identifier: Apache-2.0
// Chimera and BitPipe (schedules/bidirectional/): their orders against the references', rank for rank,
// their size rules, and what runs of them show: two pipelines over replicated stages, the closed
// forms of closed_forms.cpp, and the replicas' all-reduce of a model's gradients.
//
// The goldens are the references' own output, run here with torch and the framework stubbed out
// (nothing of their code is in this repository):
// - tests/golden/chimera_p*_m*.txt: Ascend/MindSpeed's ChimeraBidirectionalPipelineScheduleManager
//   (mindspeed/core/pipeline_parallel/chimera/chimera_scheduler.py, branch core_r0.8.0 at 46f6ca8),
//   get_schedule(rank) for each rank with two pipelines, in its notation: `<id>f` and `<id>b`, ids
//   0..m/2-1 the down pipeline's micro-batches and m/2..m-1 the up pipeline's; `ar0` and `ar1` where
//   its run() starts each direction's gradient all-reduce, and `[warmup=K]` its compute_warmup. The
//   authors' main_with_runtime_direct.py (Shigangli/Chimera, ChimeraBk at 052379b) gives the same ops.
// - tests/golden/bitpipe_p*_m*.txt: wuhouming/BitPipe's forward_backward_pipelining_with_BitPipe
//   (megatron/core/pipeline_parallel/bitpipe_schedule.py at 6fb0e22), one line per logical rank in
//   its notation: `F<id>` and `B<id>`, id < m micro-batch id's first pass (chunk 0 or 1) and m + b
//   micro-batch b's second (chunk 2 or 3); `S<c>` where it all-reduces chunk c with its replica.
// The all-reduce markers are the references' eager gradient sync; ppsim sums the replicas after the
// step (models/transformer/training_step.cpp), so the order comparison leaves them out.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/closed_forms.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/golden.hpp"
#include "study/common/errors.hpp"
#include "study/run/formulas.hpp"
#include "support/cli_run.hpp"
#include "tools/ppsim/cli.hpp"

using ppsim::Action;
using ppsim::Op;

namespace {


// A golden row's compute ops, its label ("rank0 [warmup=1]:") and all-reduce markers left out.
std::vector<std::string> compute_tokens(const std::string& row, char allreduce_marker) {
  std::istringstream words(row.substr(row.find(':') == std::string::npos ? 0 : row.find(':') + 1));
  std::vector<std::string> tokens;
  for (std::string word; words >> word;) {
    if (word.front() != allreduce_marker) tokens.push_back(word);
  }
  return tokens;
}

// MindSpeed's id of a Chimera action: the down pipeline's micro-batches first, then the up one's.
std::string chimera_token(const Action& a, int p, int m) {
  const int id = a.stage < p ? a.microbatch : m / 2 + a.microbatch;
  return std::to_string(id) + (a.op == Op::kForward ? "f" : "b");
}

// bitpipe_schedule.py's id of a BitPipe action: micro-batch b goes down when b mod p < p/2, its
// first pass (stage < p of its V) is id b and its second id m + b.
std::string bitpipe_token(const Action& a, int p, int m) {
  const int h = p / 2;
  const int pipeline = a.stage / (2 * p);
  const int stage = a.stage % (2 * p);
  const int b = (a.microbatch / h) * p + a.microbatch % h + (pipeline == 1 ? h : 0);
  return std::string(a.op == Op::kForward ? "F" : "B") + std::to_string(stage < p ? b : m + b);
}

template <typename Token>
void check_against_golden(const std::string& schedule, int p, int m, char marker, Token token) {
  const std::string name = schedule + "_p" + std::to_string(p) + "_m" + std::to_string(m) + ".txt";
  INFO(name);
  const ppsim::ScheduleInfo& info = *ppsim::find_schedule(schedule);
  const ppsim::Program program = info.build({p, m, info.default_v});
  REQUIRE_FALSE(ppsim::validate_program(program).has_value());
  const std::vector<std::string> golden = ppsim::read_golden_lines(name);
  REQUIRE(golden.size() == static_cast<std::size_t>(p));
  for (std::size_t r = 0; r < golden.size(); ++r) {
    INFO("rank " << r);
    std::vector<std::string> ours;
    for (const Action& a : program.actions[r]) ours.push_back(token(a, p, m));
    CHECK(ours == compute_tokens(golden[r], marker));
  }
}

ppsim::Result simulate(const ppsim::Program& program, double forward, double backward) {
  ppsim::UniformCosts costs;
  costs.forward = ppsim::Duration{forward};
  costs.backward = ppsim::Duration{backward};
  ppsim::Engine engine;
  ppsim::SimulationOutcome outcome = engine.run(program, ppsim::UniformCostModel(costs));
  REQUIRE(outcome.result.has_value());
  return std::move(*outcome.result);
}

nlohmann::json run_json(const std::vector<std::string>& args) {
  const ppsim::test::CliRun run = ppsim::test::cli(args);
  INFO(run.err);
  REQUIRE(run.status == ppsim::kExitOk);
  return nlohmann::json::parse(run.out);
}

}  // namespace

TEST_CASE("Chimera's orders are MindSpeed's, rank for rank and micro-batch for micro-batch") {
  const auto [p, m] = GENERATE(table<int, int>({{2, 2}, {4, 4}, {4, 8}, {8, 8}, {8, 16}, {8, 32}}));
  check_against_golden("chimera", p, m, 'a', chimera_token);
}

TEST_CASE("BitPipe's orders are bitpipe_schedule.py's, logical rank for logical rank") {
  const auto [p, m] = GENERATE(table<int, int>({{2, 2}, {2, 4}, {4, 4}, {4, 8}, {6, 12}, {8, 8}, {8, 16}, {8, 32}}));
  check_against_golden("bitpipe", p, m, 'S', bitpipe_token);
}

TEST_CASE("Chimera and BitPipe run two pipelines in opposite directions over replicated stages") {
  const ppsim::Program chimera = ppsim::find_schedule("chimera")->build({4, 8, 1});
  CHECK(chimera.num_pipelines == 2);
  CHECK(chimera.num_microbatches == 4);
  // The down pipeline's stage j on device j, the up pipeline's (program stage 4 + j) on device 3 - j.
  CHECK(chimera.stage_device == std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0});
  const ppsim::Program bitpipe = ppsim::find_schedule("bitpipe")->build({4, 8, 2});
  CHECK(bitpipe.num_pipelines == 2);
  CHECK(bitpipe.num_microbatches == 4);
  // Two Vs of 2p stages: the down V's ends both on rank 0, the up V's both on rank p-1.
  CHECK(bitpipe.stage_device == std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0, 3, 2, 1, 0, 0, 1, 2, 3});
  for (const auto* name : {"chimera", "bitpipe"}) CHECK(ppsim::find_schedule(name)->pipelines == 2);
}

TEST_CASE("Chimera and BitPipe refuse what their references refuse, naming the parameter") {
  const auto& chimera = *ppsim::find_schedule("chimera");
  const auto& bitpipe = *ppsim::find_schedule("bitpipe");
  const auto starts = [](const std::optional<std::string>& why, std::string_view prefix) {
    REQUIRE(why.has_value());
    CHECK(why->starts_with(prefix));
  };
  starts(chimera.check({3, 6, 1}), "needs p even");
  starts(chimera.check({4, 6, 1}), "needs m a multiple of p");
  starts(chimera.check({4, 2, 1}), "needs m a multiple of p");
  starts(chimera.check({4, 8, 2}), "needs v = 1");
  starts(bitpipe.check({3, 6, 2}), "needs p even");
  starts(bitpipe.check({4, 6, 2}), "needs m a multiple of p");
  starts(bitpipe.check({4, 8, 1}), "needs v = 2");
  CHECK_FALSE(chimera.check({4, 8, 1}).has_value());
  CHECK_FALSE(bitpipe.check({4, 8, 2}).has_value());
  // The CLI names the flag at fault.
  const ppsim::test::CliRun odd = ppsim::test::cli({"run", "-s", "chimera", "-p", "4", "-m", "6"});
  CHECK(odd.status == ppsim::kExitBadInput);
  CHECK(odd.err ==
        "ppsim: error: -m: chimera needs m a multiple of p: MindSpeed's Chimera schedules units of p "
        "micro-batches, p/2 each way (got m = 6 for p = 4)\n");
  const ppsim::test::CliRun chunks = ppsim::test::cli({"run", "-s", "bitpipe", "-p", "4", "-m", "8", "-v", "3"});
  CHECK(chunks.status == ppsim::kExitBadInput);
  CHECK(chunks.err.starts_with("ppsim: error: -v: bitpipe needs v = 2"));
}

TEST_CASE("Chimera at equal forward and backward idles the paper's D-2 slots of 2N+D-2") {
  const int p = GENERATE(2, 4, 6, 8);
  const int units = GENERATE(1, 2, 4);
  const int m = p * units;
  const ppsim::Result result = simulate(ppsim::find_schedule("chimera")->build({p, m, 1}), 1, 1);
  CHECK(result.makespan == 2 * m + p - 2);
  CHECK(result.bubble_ratio == Approx(static_cast<double>(p - 2) / (2 * m + p - 2)).epsilon(1e-12));
  for (int d = 0; d < p; ++d) {
    // From D/2 + 1 stashes at the ends to D in the middle, whatever m.
    CHECK(result.per_device[static_cast<std::size_t>(d)].peak_stashed == p / 2 + 1 + std::min(d, p - 1 - d));
  }
}

TEST_CASE("Each further unit of p micro-batches opens (p-2)(B-F) of bubble in Chimera and BitPipe") {
  // B = 2F: the first unit idles (p-2)B, as at F = B, and each concatenated unit adds (p-2)(B-F) where one
  // direction's backwards meet the next unit's forwards: the paper's reason for forward doubling.
  const int p = GENERATE(4, 8);
  for (const auto* name : {"chimera", "bitpipe"}) {
    const ppsim::ScheduleInfo& info = *ppsim::find_schedule(name);
    INFO(name << " p=" << p);
    const double one = simulate(info.build({p, p, info.default_v}), 1, 2).makespan;
    const double two = simulate(info.build({p, 2 * p, info.default_v}), 1, 2).makespan;
    const double busy_per_unit = info.default_v * p * 3.0;
    CHECK(one == busy_per_unit + (p - 2) * 2);
    CHECK(two - one == busy_per_unit + (p - 2) * 1);
  }
}

TEST_CASE("Chimera's and BitPipe's closed forms hold wherever formulas --check puts them") {
  std::size_t checked = 0;
  for (const auto& form : ppsim::closed_forms()) {
    if (form.schedule != "chimera" && form.schedule != "bitpipe") continue;
    ++checked;
  }
  CHECK(checked == 8);
  std::ostringstream out;
  ppsim::FormulaGrid grid;
  grid.schedules = {"chimera", "bitpipe"};
  CHECK(ppsim::check_formulas(out, grid));
  CHECK(out.str().find("chimera: 4 closed forms") != std::string::npos);
  CHECK(out.str().find("bitpipe: 4 closed forms") != std::string::npos);
  CHECK(out.str().find("DEVIATION") == std::string::npos);
}

TEST_CASE("Chimera and BitPipe sum the replicas' gradients as DualPipe does, each device holding two stages") {
  const std::vector<std::string> llama = {
      "--model",  "llama3.1-70b", "-p", "8", "-t", "8", "-d", "4", "-m", "32", "--distributed-optimizer",
      "--format", "json"};
  auto run = [&](const char* schedule) {
    std::vector<std::string> args{"run", "-s", schedule};
    args.insert(args.end(), llama.begin(), llama.end());
    return run_json(args)["training"];
  };
  const nlohmann::json dualpipe = run("dualpipe");
  for (const auto* schedule : {"chimera", "bitpipe"}) {
    INFO(schedule);
    const nlohmann::json training = run(schedule);
    REQUIRE(training.contains("replica_reduce_time"));
    // Rank r and rank p-1-r hold the same layers (twice a 1F1B stage's: Chimera's 2 M_theta), so they
    // all-reduce what DualPipe's pair does.
    CHECK(training["replica_reduce_time"] == dualpipe["replica_reduce_time"]);
    for (std::size_t d = 0; d < 8; ++d) {
      CHECK(training["memory"][d]["parameters"] == dualpipe["memory"][d]["parameters"]);
    }
  }
}
