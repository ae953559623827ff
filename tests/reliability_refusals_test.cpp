// SPDX-License-Identifier: Apache-2.0
// Figures a run reports are numbers or the run is refused (issue 31, items 6 to 8): a training run
// whose checkpoint, restart or step dwarfs the MTBF, a profile whose CRC32 rate or variability is
// absurd, a baseline holding null figures, and the standard deviation of equal samples.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/statistics.hpp"
#include "study/common/errors.hpp"
#include "support/cli_run.hpp"

using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::TempDir;

namespace {

// Every number in `value`, however deep, is finite (nlohmann writes NaN and inf as null).
bool all_finite(const nlohmann::json& value) {
  if (value.is_null()) return false;
  if (value.is_number_float()) return std::isfinite(value.get<double>());
  if (value.is_structured()) {
    for (const auto& child : value) {
      if (!all_finite(child)) return false;
    }
  }
  return true;
}

// The H100 preset with `changes` applied, written to `dir`.
std::string h100_with(const TempDir& dir, const nlohmann::json& changes) {
  nlohmann::json profile;
  std::ifstream(std::string(PPSIM_SOURCE_DIR) + "/configs/hardware/h100-sxm5-80gb.json") >> profile;
  profile["name"] = "H100 edited";
  profile.merge_patch(changes);
  const std::string path = dir.file("h100-edited.json");
  std::ofstream(path) << profile.dump();
  return path;
}

const std::vector<std::string> kRun = {"run", "--model", "llama3.1-8b", "-p", "4", "-m", "8"};

std::vector<std::string> run_with(std::vector<std::string> extra) {
  std::vector<std::string> args = kRun;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("a checkpoint far longer than the system MTBF is refused by its flag, not printed as nan", "[reliability]") {
  const CliRun run = cli(run_with({"--mtbf", "100h", "--train-time", "1d", "--checkpoint-time", "1e9s"}));
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.out.empty());
  CHECK(run.err.starts_with("ppsim: error: --checkpoint-time: a checkpoint of 1e+09 s against a system MTBF of "));
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK(run.err.find("nan") == std::string::npos);
}

TEST_CASE("durations and rates of a training run beyond any machine are refused where they are given", "[reliability]") {
  const auto [extra, expected] = GENERATE(table<std::vector<std::string>, std::string>({
      {{"--mtbf", "100h", "--train-time", "1d", "--checkpoint-time", "1e14s"},
       "ppsim: error: --checkpoint-time: is absurdly long (1e14s; at most 1e12 s)\n"},
      {{"--mtbf", "1e13 s", "--train-time", "1d"}, "ppsim: error: --mtbf: is absurdly long (1e13 s; at most 1e12 s)\n"},
      {{"--mtbf", "100h", "--train-time", "1d", "--restart-time", "-1 s"},
       "ppsim: error: --restart-time: must not be negative, got -1\n"},
      {{"--mtbf", "100h", "--train-time", "1d", "--storage-bandwidth", "1 B/s"},
       "ppsim: error: --storage-bandwidth: must be from 1 kB/s to 1 PB/s, got '1 B/s'\n"},
  }));
  const CliRun run = cli(run_with(extra));
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err == expected);
}

TEST_CASE("a training time shorter than one step is refused rather than reported as 0 steps", "[reliability]") {
  const CliRun run = cli(run_with({"--mtbf", "1000h", "--train-time", "1 ms"}));
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err.starts_with("ppsim: error: --train-time: 0.001 s is shorter than one step of "));
}

TEST_CASE("a checksum so slow that no step trains is blamed on the profile's crc32_rate", "[reliability]") {
  TempDir dir("slow-crc");
  const std::string profile = h100_with(dir, nlohmann::json::parse(R"({"crc32_rate": 1000})"));
  const CliRun run =
      cli(run_with({"--hardware", profile, "--mtbf", "1000h", "--train-time", "7d", "--checksum", "crc32", "-d", "64"}));
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err.starts_with("ppsim: error: --hardware: H100 edited's crc32_rate: a checkpoint of "));
  CHECK(run.err.ends_with("(not one whole step would train)\n"));
}

TEST_CASE("a profile's crc32_rate and variability have the flags' floors and ceilings", "[reliability]") {
  TempDir dir("profile-bounds");
  const auto [changes, expected] = GENERATE(table<std::string, std::string>({
      {R"({"crc32_rate": 1e-300})", "$.crc32_rate: must be a number from 1000.0 to 1e+15, got 1e-300"},
      {R"({"variability": {"F": 1e300}})", "$.variability.F: must be a number from 0.0 to 10.0, got 1e+300"},
      {R"({"host_link": {"bandwidth": 1e300}})", "$.host_link.bandwidth: must be a number from 1000.0 to 1e+15"},
  }));
  const std::string profile = h100_with(dir, nlohmann::json::parse(changes));
  const CliRun run = cli(run_with({"--hardware", profile}));
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err.find(expected) != std::string::npos);
}

TEST_CASE("every figure of a run with failures, samples and checksums is a finite number", "[reliability]") {
  TempDir dir("finite-figures");
  const std::string profile = h100_with(dir, nlohmann::json::parse(R"({"crc32_rate": 4e9,
      "variability": {"F": 0.02, "B": 0.03, "I": 0.03, "W": 0.04, "link": 0.05}})"));
  const std::string mtbf = GENERATE(std::string("1 h"), std::string("1000 h"), std::string("1e6 h"));
  const CliRun run = cli(run_with({"--hardware", profile, "--mtbf", mtbf, "--train-time", "7 d", "--checksum", "crc32",
                                   "--samples", "20", "--jitter", "measured", "--format", "json"}));
  REQUIRE(run.status == ppsim::kExitOk);
  const nlohmann::json result = nlohmann::json::parse(run.out);
  CHECK(all_finite(result["reliability"]));
  CHECK(result["reliability"]["goodput"].get<double>() > 0);
}

TEST_CASE("check does not pass a baseline whose figures are null", "[reliability][check]") {
  TempDir dir("null-baseline");
  const CliRun base = cli({"run", "-s", "1f1b", "-p", "4", "-m", "8", "--format", "json"});
  REQUIRE(base.status == ppsim::kExitOk);
  nlohmann::ordered_json result = nlohmann::ordered_json::parse(base.out);
  result["bubble_ratio"] = nullptr;  // what a NaN becomes in JSON
  std::ofstream(dir.file("b.json")) << result.dump();
  const CliRun check = cli({"check", dir.file("b.json")});
  CHECK(check.status == ppsim::kExitFailure);
  CHECK(check.out.find("bubble_ratio") != std::string::npos);
  CHECK(check.out.find("not a number") != std::string::npos);
}

TEST_CASE("the standard deviation of equal samples is exactly 0, and of noisy long steps keeps its digits", "[reliability]") {
  const std::vector<double> equal(20, 0.1 + 0.2);
  const ppsim::Distribution d = ppsim::distribution_of(equal);
  CHECK(d.stdev == 0);
  CHECK(d.mean == 0.1 + 0.2);
  // Steps of about 1e9 with noise of 1e-3: a sum of squares about a rounded mean loses it all.
  std::vector<double> long_steps;
  for (int i = 0; i < 1000; ++i) long_steps.push_back(1e9 + (i % 2 == 0 ? 1e-3 : -1e-3) * 64);
  CHECK(ppsim::distribution_of(long_steps).stdev == Approx(0.064).epsilon(1e-3));
  const CliRun run = cli({"run", "-s", "1f1b", "-p", "4", "-m", "8", "--jitter", "0", "--samples", "20", "--format", "json"});
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(nlohmann::json::parse(run.out)["samples"]["makespan"]["stdev"] == 0.0);
}
