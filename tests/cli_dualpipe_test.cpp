// SPDX-License-Identifier: Apache-2.0
// DualPipe through the study layer: each device holds the parameters of both stages it runs, the
// replicas sum their gradients after the step, per-stage settings describe the p stages that both
// directions share, and its refusals.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "study/common/errors.hpp"
#include "support/cli_run.hpp"
#include "tools/ppsim/cli.hpp"

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::TempDir;

namespace {

nlohmann::json run_json(const std::string& schedule, const std::vector<std::string>& more) {
  std::vector<std::string> args{"run", "-s", schedule, "--format", "json"};
  args.insert(args.end(), more.begin(), more.end());
  const CliRun run = cli(args);
  INFO(run.err);
  REQUIRE(run.status == ppsim::kExitOk);
  return nlohmann::json::parse(run.out);
}

const std::vector<std::string> kLlama = {"--model", "llama3.1-70b", "-p", "8", "-t", "8", "-d", "4", "-m", "32",
                                         "--distributed-optimizer"};

}  // namespace

TEST_CASE("DualPipe's devices hold both their stages' parameters, gradients and optimizer state", "[cli][dualpipe]") {
  const nlohmann::json dualpipe = run_json("dualpipe", kLlama);
  const nlohmann::json one_f_one_b = run_json("1f1b", kLlama);
  const auto& twice = dualpipe["training"]["memory"];
  const auto& once = one_f_one_b["training"]["memory"];
  REQUIRE(twice.size() == 8);
  for (std::size_t d = 0; d < 8; ++d) {
    INFO("device " << d);
    // Device d runs stage d of one direction and stage 7-d of the other: 1F1B's devices d and 7-d.
    for (const char* part : {"parameters", "gradients", "optimizer"}) {
      CHECK_THAT(twice[d][part].get<double>(),
                 WithinAbs(once[d][part].get<double>() + once[7 - d][part].get<double>(), 1));
    }
  }
  // The stage table lists both directions' 16 stages, each the replica of a stage of the first.
  const auto& stages = dualpipe["training"]["stages"];
  REQUIRE(stages.size() == 16);
  for (std::size_t j = 0; j < 8; ++j) {
    CHECK(stages[j]["layers"] == stages[8 + j]["layers"]);
    CHECK(stages[j]["forward"] == stages[8 + j]["forward"]);
    CHECK(stages[8 + j]["device"] == 7 - static_cast<int>(j));
  }
}

TEST_CASE("DualPipe's replicas all-reduce their gradients before the optimizer step", "[cli][dualpipe]") {
  const nlohmann::json dualpipe = run_json("dualpipe", kLlama);
  const auto& training = dualpipe["training"];
  REQUIRE(training.contains("replica_reduce_time"));
  const double replica = training["replica_reduce_time"].get<double>();
  CHECK(replica > 0);
  // It follows the data-parallel reductions, so the step holds it beside the pipeline and the optimizer.
  CHECK(training["step_time"].get<double>() >=
        training["pipeline_time"].get<double>() + replica + training["optimizer_time"].get<double>() - 1e-12);
  // A schedule of one pipeline has no replicas, and says nothing of them.
  CHECK_FALSE(run_json("1f1b", kLlama)["training"].contains("replica_reduce_time"));
}

TEST_CASE("DualPipe's per-stage costs name the p stages both directions run", "[cli][dualpipe]") {
  const nlohmann::json result =
      run_json("dualpipe", {"-p", "4", "-m", "8", "--forward", "1,2,3,4", "--backward", "2,4,6,8", "--weight", "1"});
  // Each of the 8 micro-batches passes every stage once, in one direction or the other: m * sum(F + B).
  CHECK(result["total_busy"].get<double>() == 8 * (3 + 6 + 9 + 12));
  // Device 0 runs stage 0 (F=1, B=2) and stage 3 (F=4, B=8) for 4 micro-batches each.
  CHECK(result["per_device"][0]["busy"].get<double>() == 4 * (3 + 12));
}

TEST_CASE("DualPipe's refusals name the flag: odd p or m, m below 2p, --fsdp and torch's CSV", "[cli][dualpipe]") {
  const CliRun odd_p = cli({"run", "-s", "dualpipe", "-p", "3", "-m", "12"});
  CHECK(odd_p.status == ppsim::kExitBadInput);
  CHECK(odd_p.err.starts_with("ppsim: error: --schedule: dualpipe needs p even"));
  const CliRun short_m = cli({"run", "-s", "dualpipe", "-p", "4", "-m", "6"});
  CHECK(short_m.status == ppsim::kExitBadInput);
  CHECK(short_m.err.starts_with("ppsim: error: -m: dualpipe needs m even and m >= 2p"));
  const CliRun fsdp = cli({"run", "-s", "dualpipe", "--model", "llama3.1-8b", "-p", "4", "-m", "8", "--fsdp", "-d", "2"});
  CHECK(fsdp.status == ppsim::kExitBadInput);
  CHECK(fsdp.err.starts_with("ppsim: error: --fsdp: models torch.distributed.pipelining's FSDP actions"));
  const CliRun csv = cli({"export", "-s", "dualpipe", "-p", "4", "-m", "8"});
  CHECK(csv.status == ppsim::kExitBadInput);
  CHECK(csv.out.empty());
}

TEST_CASE("A JSON schedule states its pipelines, a whole number from 1", "[cli][dualpipe][schedule-file]") {
  const TempDir dir("dualpipe-json");
  const std::string path = dir.file("dualpipe.json");
  REQUIRE(cli({"export", "-s", "dualpipe", "-p", "2", "-m", "4", "-o", path}).status == ppsim::kExitOk);
  std::ifstream file(path);
  nlohmann::json document = nlohmann::json::parse(file);
  CHECK(document["pipelines"] == 2);
  CHECK(document["microbatches"] == 2);  // per pipeline
  // The file replays as the registry's schedule, m counted over both directions.
  const nlohmann::json direct = run_json("dualpipe", {"-p", "2", "-m", "4"});
  const nlohmann::json replayed = run_json("custom", {"--schedule-file", path, "-m", "4"});
  CHECK(replayed["makespan"] == direct["makespan"]);
  CHECK(replayed["m"] == 4);
  for (const auto& bad : {nlohmann::json(0), nlohmann::json("two"), nlohmann::json(1.5)}) {
    document["pipelines"] = bad;
    const std::string bad_path = dir.file("bad.json");
    std::ofstream(bad_path) << document.dump();
    const CliRun run = cli({"run", "--schedule-file", bad_path});
    INFO(run.err);
    CHECK(run.status == ppsim::kExitBadInput);
    CHECK(run.err.find("$.pipelines: must be a whole number from 1") != std::string::npos);
  }
}
