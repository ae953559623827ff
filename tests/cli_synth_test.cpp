// SPDX-License-Identifier: Apache-2.0
// ppsim synth from the command line: its figures, the order it writes and that order replayed, and
// its refusals.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "study/common/errors.hpp"
#include "support/cli_run.hpp"
#include "tools/ppsim/cli.hpp"

using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::TempDir;

namespace {

// The cost settings of both runs: per-stage costs with a slow last stage, latency and stashes.
const std::vector<std::string> kCosts = {"-p", "4", "-m", "8", "--forward", "1,1,1,1.5", "--backward", "2,2,2,3",
                                         "--latency", "0.1", "--activation-bytes", "1GiB"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("synth writes an order that replays through --schedule-file to the same figures", "[cli][synth]") {
  TempDir dir("synth");
  const std::string csv = dir.file("found.csv");
  const CliRun found =
      cli(with(with({"synth"}, kCosts), {"--memory-limit", "4GiB", "-o", csv, "--format", "json"}));
  REQUIRE(found.status == ppsim::kExitOk);
  const auto json = nlohmann::json::parse(found.out);
  CHECK(json["synth"]["memory_limit"] == 4LL << 30);
  CHECK(json["synth"]["placement"] == "loop");
  CHECK(json["synth"]["makespan"] == json["makespan"]);
  for (const auto& device : json["per_device"]) CHECK(device["peak_activation_bytes"].get<std::int64_t>() <= 4LL << 30);
  // It is at least as short as every registry schedule that fits, which it lists.
  REQUIRE_FALSE(json["synth"]["registry_schedules"].empty());
  for (const auto& seed : json["synth"]["registry_schedules"]) {
    CHECK(json["makespan"].get<double>() <= seed["makespan"].get<double>());
  }
  const CliRun replay = cli(with(with({"run"}, kCosts), {"--schedule-file", csv, "--format", "json"}));
  REQUIRE(replay.status == ppsim::kExitOk);
  const auto replayed = nlohmann::json::parse(replay.out);
  CHECK(replayed["makespan"] == json["makespan"]);
  CHECK(replayed["per_device"] == json["per_device"]);
  // The figures are a custom schedule's, as the file's replay reports them.
  CHECK(json["schedule"] == "custom");
  CHECK(replayed["schedule"] == "custom");
  // And the same search gives the same bytes.
  const CliRun again = cli(with(with({"synth"}, kCosts), {"--memory-limit", "4GiB", "--format", "json"}));
  REQUIRE(again.status == ppsim::kExitOk);
  CHECK(nlohmann::json::parse(again.out)["synth"] == json["synth"]);
}

TEST_CASE("synth prints the search, the registry schedules within the limit, and the run's table", "[cli][synth]") {
  const CliRun run = cli({"synth", "-p", "8", "-m", "4", "-v", "2", "--costs-per", "chunk", "--forward", "1",
                          "--backward", "2", "--weight", "1", "--activation-bytes", "1", "--memory-limit", "16"});
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(run.out.starts_with("synth: p=8 m=4 v=2, v placement, at most 16 B of activations per device\n"
                            "found: makespan 39,"));
  CHECK(run.out.find("registry schedules within the limit: zbv 46 (8 B)") != std::string::npos);
  CHECK(run.out.find("makespan         39") != std::string::npos);
}

TEST_CASE("synth refuses bad settings with one line naming the flag, and writes no file", "[cli][synth]") {
  TempDir dir("synth-bad");
  const std::string csv = dir.file("never.csv");
  const auto [args, message] = GENERATE(table<std::vector<std::string>, std::string>({
      {{"--activation-bytes", "1"}, "--memory-limit: synth needs the activation memory each device may hold"},
      {{"--activation-bytes", "1", "--memory-limit", "lots"}, "--memory-limit: "},
      {{"--memory-limit", "8"}, "--memory-limit: the stashes take no memory here"},
      {{"--activation-bytes", "4", "--memory-limit", "3"}, "--memory-limit: no order fits 3 B per device"},
      {{"--activation-bytes", "1", "--memory-limit", "8", "-v", "3"}, "-v: synth searches v = 1 or v = 2"},
      {{"--activation-bytes", "1", "--memory-limit", "8", "--placement", "ring"}, "--placement: loop"},
      {{"--activation-bytes", "1", "--memory-limit", "8", "--placement", "v"}, "--placement: v places two chunks"},
      {{"--activation-bytes", "1", "--memory-limit", "8", "--time-limit", "0"}, "--time-limit: must be above 0"},
      {{"--activation-bytes", "1", "--memory-limit", "8", "-p", "300"}, "-p: synth searches up to 256 stages"},
  }));
  const CliRun run = cli(with(with({"synth", "-o", csv}, {}), args));
  INFO(run.err);
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err.starts_with("ppsim: error: " + message));
  CHECK(run.err.find('\n') == run.err.size() - 1);
  CHECK(run.out.empty());
  CHECK_FALSE(std::filesystem::exists(csv));
}
