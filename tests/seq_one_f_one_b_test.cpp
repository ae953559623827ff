// SPDX-License-Identifier: Apache-2.0
// Seq1F1B (schedules/seq_one_f_one_b.cpp): its order against the reference's, the dependencies its
// slices carry, its closed forms, and --sequence-splits through the CLI. The goldens
// tests/golden/seq1f1b_p*_m*_k*.txt are the output of the zero-bubble repository's
// scheduler/seq1f1b.py create_schedule (sail-sg/zero-bubble at 3fd87fd, run here with its arguments
// given as plain numbers), in its notation: `F<micro-batch>-<slice>` and `BW<micro-batch>-<slice>`
// (B with W fused), one line per rank, stage 0 first. thunlp/Seq1F1B's schedules.py runs the same order.
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/builders.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/golden.hpp"
#include "study/common/errors.hpp"
#include "support/cli_run.hpp"
#include "tools/ppsim/cli.hpp"

using ppsim::Action;
using ppsim::Op;

namespace {

ppsim::Program build(int p, int m, int k) {
  ppsim::ScheduleParams params{p, m, 1};
  params.sequence_splits = k;
  return ppsim::find_schedule("seq1f1b")->build(params);
}

// Each golden line's words.
std::vector<std::vector<std::string>> golden_rows(const std::string& name) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : ppsim::read_golden_lines(name)) {
    std::istringstream words(line);
    rows.emplace_back();
    for (std::string word; words >> word;) rows.back().push_back(word);
  }
  return rows;
}

}  // namespace

TEST_CASE("Seq1F1B's orders are the zero-bubble repository's seq1f1b.py, rank for rank and slice for slice") {
  const auto [p, m, k] = GENERATE(table<int, int, int>({{4, 2, 2}, {4, 4, 2}, {8, 8, 4}}));
  const std::string name =
      "seq1f1b_p" + std::to_string(p) + "_m" + std::to_string(m) + "_k" + std::to_string(k) + ".txt";
  INFO(name);
  const ppsim::Program program = build(p, m, k);
  REQUIRE_FALSE(ppsim::validate_program(program).has_value());
  CHECK(program.num_microbatches == m * k);
  const auto golden = golden_rows(name);
  REQUIRE(golden.size() == static_cast<std::size_t>(p));
  for (std::size_t r = 0; r < golden.size(); ++r) {
    INFO("rank " << r);
    std::vector<std::string> ours;
    for (const Action& a : program.actions[r]) {
      ours.push_back(std::string(a.op == Op::kForward ? "F" : "BW") + std::to_string(a.microbatch / k) + "-" +
                     std::to_string(a.microbatch % k));
    }
    CHECK(ours == golden[r]);
  }
}

TEST_CASE("Seq1F1B runs a slice's forward after the slice before it and its backward after the slice after it") {
  // Slice j attends to the keys and values of slices 0..j (thunlp's kv_cache): its forward needs slice
  // j-1's on the same stage, and its backward hands the prefix's gradients to slice j-1's.
  const int p = GENERATE(1, 3, 8);
  const int k = GENERATE(1, 2, 5);
  const int m = GENERATE(1, 3, 9);
  const ppsim::Program program = build(p, m, k);
  for (const auto& list : program.actions) {
    std::vector<int> forwards(static_cast<std::size_t>(m), 0);
    std::vector<int> backwards(static_cast<std::size_t>(m), k - 1);
    for (const Action& a : list) {
      const auto b = static_cast<std::size_t>(a.microbatch / k);
      const int j = a.microbatch % k;
      if (a.op == Op::kForward) {
        CHECK(j == forwards[b]++);
      } else {
        CHECK(j == backwards[b]--);
        CHECK(forwards[b] == k);  // every slice of its micro-batch went forward first
      }
    }
  }
}

TEST_CASE("Seq1F1B with one slice is 1F1B, and k slices shrink 1F1B's bubble to (p-1)/(mk+p-1)") {
  const int p = GENERATE(2, 4, 8);
  const int m = GENERATE(1, 4, 16);
  CHECK(build(p, m, 1).actions == ppsim::find_schedule("1f1b")->build({p, m, 1}).actions);
  const int k = GENERATE(2, 4);
  ppsim::UniformCosts costs;  // per slice: F = 1, B = 2
  ppsim::Engine engine;
  const auto outcome = engine.run(build(p, m, k), ppsim::UniformCostModel(costs));
  REQUIRE(outcome.result);
  CHECK(outcome.result->makespan == (m * k + p - 1) * 3.0);
  CHECK(outcome.result->bubble_ratio == Approx(static_cast<double>(p - 1) / (m * k + p - 1)).epsilon(1e-12));
  for (int d = 0; d < p; ++d) {
    // p-d+k-1 slices of 1/k each, counted in micro-batches.
    CHECK(outcome.result->per_device[static_cast<std::size_t>(d)].peak_stashed ==
          Approx(std::min(p - d + k - 1, m * k) / static_cast<double>(k)).epsilon(1e-15));
  }
}

TEST_CASE("The sequence-splits setting cuts each micro-batch's costs into slices, and only seq1f1b takes it") {
  using ppsim::test::cli;
  const ppsim::test::CliRun run = cli({"run", "-s", "seq1f1b", "-p", "4", "-m", "8", "--sequence-splits", "2",
                                       "--activation-bytes", "4 GiB", "--format", "json"});
  REQUIRE(run.status == ppsim::kExitOk);
  const auto json = nlohmann::json::parse(run.out);
  CHECK(json["scenario"]["sequence-splits"] == 2);
  // F = 1 and B = 2 per micro-batch: 16 slices of 1.5, and 3 slices of fill and drain.
  CHECK(json["makespan"] == (16 + 3) * 1.5);
  // Device 0 holds p + k - 1 = 5 slices of 2 GiB at its peak.
  CHECK(json["per_device"][0]["peak_memory_bytes"] == 5 * (std::int64_t{2} << 30));
  // The scenario keeps the costs per micro-batch, so it reads back to the same run.
  CHECK(json["scenario"]["forward"] == 1.0);
  const ppsim::test::TempDir dir("seq1f1b-scenario");
  std::ofstream(dir.file("scenario.json")) << json["scenario"].dump();
  const ppsim::test::CliRun again = cli({"run", "-c", dir.file("scenario.json"), "--format", "json"});
  REQUIRE(again.status == ppsim::kExitOk);
  CHECK(nlohmann::json::parse(again.out)["makespan"] == json["makespan"]);
  const ppsim::test::CliRun alias = cli({"run", "-s", "seq1f1b", "-p", "4", "-m", "8", "--format", "json"});
  REQUIRE(alias.status == ppsim::kExitOk);
  CHECK(nlohmann::json::parse(alias.out)["scenario"]["sequence-splits"] == 4);  // thunlp's exp.sh default
  const ppsim::test::CliRun other = cli({"run", "-s", "1f1b", "--sequence-splits", "2"});
  CHECK(other.status == ppsim::kExitBadInput);
  CHECK(other.err ==
        "ppsim: error: --sequence-splits: only seq1f1b cuts micro-batches into sequence slices, and it is not among "
        "the schedules (1f1b)\n");
  // Beside seq1f1b, the other schedules run whole micro-batches: 1F1B's (m+p-1)(F+B) is untouched.
  const ppsim::test::CliRun both =
      cli({"compare", "-s", "1f1b,seq1f1b", "-p", "4", "-m", "8", "--sequence-splits", "2", "--format", "json"});
  REQUIRE(both.status == ppsim::kExitOk);
  const auto pair = nlohmann::json::parse(both.out);
  CHECK(pair[0]["makespan"] == 33.0);
  CHECK_FALSE(pair[0]["scenario"].contains("sequence-splits"));
  CHECK(pair[1]["makespan"] == 28.5);
  const ppsim::test::CliRun model = cli({"run", "-s", "seq1f1b", "--model", "llama3-8b", "-p", "4"});
  CHECK(model.status == ppsim::kExitBadInput);
  CHECK(
      model.err.starts_with("ppsim: error: --model: seq1f1b's sequence slices are not in the transformer cost model"));
}

TEST_CASE("A sweep's throughput counts a step's micro-batches, not Seq1F1B's slices or a direction's half") {
  // Throughput was the program's micro-batches per pipeline over the makespan: k times too high for
  // seq1f1b, half for chimera (and dualpipe). With the study's fixed slices, 1F1B runs whole micro-batches.
  const ppsim::test::TempDir dir("sweep-throughput");
  std::ofstream(dir.file("study.json"))
      << R"({"fixed": {"p": 4, "m": 8, "sequence-splits": 2}, "axes": {"schedule": ["1f1b", "chimera", "seq1f1b"]}})";
  const ppsim::test::CliRun run =
      ppsim::test::cli({"sweep", dir.file("study.json"), "-o", dir.file("out.csv"), "-j", "1"});
  INFO(run.err);
  REQUIRE(run.status == ppsim::kExitOk);
  std::ifstream csv(dir.file("out.csv"));
  std::string header;
  std::getline(csv, header);
  REQUIRE(
      header.starts_with("point,status,schedule,p,v,m,makespan,bubble_ratio,bubble_overhead,comm_ratio,total_busy,"
                         "throughput,"));
  const std::map<std::string, double> makespans{{"1f1b", 33}, {"chimera", 30}, {"seq1f1b", 28.5}};
  int rows = 0;
  for (std::string line; std::getline(csv, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    REQUIRE(cells.size() > 11);
    INFO(line);
    CHECK(cells[1] == "run");
    CHECK(std::stod(cells[6]) == makespans.at(cells[2]));
    CHECK(std::stod(cells[11]) == Approx(8 / makespans.at(cells[2])).epsilon(1e-12));
    ++rows;
  }
  CHECK(rows == 3);
}

TEST_CASE("synth neither seeds with Seq1F1B's slices as whole micro-batches nor takes sequence splits") {
  using ppsim::test::cli;
  const ppsim::test::CliRun run =
      cli({"synth", "-p", "4", "-m", "8", "--activation-bytes", "1GiB", "--memory-limit", "8GiB"});
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(run.out.find("seq1f1b") == std::string::npos);
  const ppsim::test::CliRun sliced = cli({"synth", "-p", "4", "-m", "8", "--sequence-splits", "4", "-s", "seq1f1b"});
  CHECK(sliced.status == ppsim::kExitBadInput);
  CHECK(sliced.err.starts_with("ppsim: error: --sequence-splits: synth searches orders of whole micro-batches"));
}

TEST_CASE("A Seq1F1B trace keeps every slice's message arrow when the timeline is kept too") {
  // The trace written beside a picture keyed its messages by m, dropping the slices numbered m and above.
  using ppsim::test::cli;
  const ppsim::test::TempDir dir("seq1f1b-arrows");
  const std::vector<std::string> base{"run", "-s", "seq1f1b", "-p", "4", "-m", "2", "--sequence-splits", "4"};
  auto arrows = [&](const std::vector<std::string>& more, const std::string& file) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--trace", dir.file(file)});
    args.insert(args.end(), more.begin(), more.end());
    REQUIRE(cli(args).status == ppsim::kExitOk);
    const auto trace = nlohmann::json::parse(std::ifstream(dir.file(file)));
    int starts = 0;
    for (const auto& event : trace["traceEvents"]) starts += event.value("ph", "") == "s" ? 1 : 0;
    return starts;
  };
  // 3 boundaries, 8 slices, activation and gradient.
  CHECK(arrows({}, "streamed.json") == 48);
  CHECK(arrows({"--svg", dir.file("t.svg")}, "kept.json") == 48);
}

TEST_CASE("A sliced schedule file is refused with a model, and its slices must divide its micro-batches") {
  using ppsim::test::cli;
  const ppsim::test::TempDir dir("seq1f1b-file");
  REQUIRE(cli({"export", "-s", "seq1f1b", "-p", "2", "-m", "2", "--sequence-splits", "2", "-o", dir.file("s.json")})
              .status == ppsim::kExitOk);
  const ppsim::test::CliRun model = cli({"run", "--schedule-file", dir.file("s.json"), "--model", "llama3.1-8b"});
  CHECK(model.status == ppsim::kExitBadInput);
  CHECK(model.err.find("runs sequence slices, which the transformer cost model does not price") != std::string::npos);
  // Its trace is refused by ppsim trace, as seq1f1b's is, rather than calibrated per slice.
  REQUIRE(cli({"run", "--schedule-file", dir.file("s.json"), "--trace", dir.file("t.json")}).status == ppsim::kExitOk);
  const ppsim::test::CliRun traced = cli({"trace", dir.file("t.json")});
  CHECK(traced.status == ppsim::kExitBadInput);
  CHECK(traced.err.find("a custom trace's ops are sequence slices") != std::string::npos);
  std::ofstream(dir.file("odd.json"))
      << R"({"stage_device": [0], "microbatches": 4, "sequence-splits": 3, "actions": [["0F0", "0B0"]]})";
  const ppsim::test::CliRun odd = cli({"run", "--schedule-file", dir.file("odd.json")});
  CHECK(odd.status == ppsim::kExitBadInput);
  CHECK(odd.err == "ppsim: error: " + dir.file("odd.json") +
                       ": $.sequence-splits: 3 slices do not divide the 4 units of $.microbatches into whole "
                       "micro-batches\n");
}
