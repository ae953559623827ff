// SPDX-License-Identifier: Apache-2.0
// Noise, stragglers and failures through the command line: the samples' figures, stragglers
// against per-stage costs, determinism, the reliability figures of a transformer study, and bad
// values, each named by its flag.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "study/common/errors.hpp"
#include "support/cli_run.hpp"
#include "support/xml_check.hpp"

using Catch::Matchers::Contains;

namespace {

using ppsim::test::cli;
using ppsim::test::CliRun;

nlohmann::json json_of(std::vector<std::string> args) {
  args.insert(args.end(), {"--format", "json"});
  const CliRun run = cli(args);
  INFO(run.err);
  REQUIRE(run.status == ppsim::kExitOk);
  return nlohmann::json::parse(run.out);
}

// The figures of a report without its scenario, which says how they were asked for.
nlohmann::json figures(nlohmann::json report) {
  report.erase("scenario");
  return report;
}

}  // namespace

TEST_CASE("Samples report their distributions, a histogram and the critical path, the step itself unchanged",
          "[cli][noise]") {
  const nlohmann::json plain = json_of({"run", "-s", "zbv", "-p", "4", "-m", "8"});
  const nlohmann::json noisy = json_of({"run", "-s", "zbv", "-p", "4", "-m", "8", "--samples", "200", "--jitter",
                                        "F:0.03,B:0.05,W:0.05", "--link-jitter", "0.1", "--latency", "0.05"});
  const nlohmann::json& samples = noisy.at("samples");
  CHECK(samples["n"] == 200);
  CHECK(samples["seed"] == 0);
  for (const char* figure : {"makespan", "bubble_ratio"}) {
    INFO(figure);
    const nlohmann::json& d = samples[figure];
    CHECK(d["min"] <= d["p50"]);
    CHECK(d["p50"] <= d["p90"]);
    CHECK(d["p90"] <= d["p99"]);
    CHECK(d["p99"] <= d["max"]);
    CHECK(d["stdev"].get<double>() > 0);
  }
  CHECK(samples["histogram"]["of"] == "makespan");
  std::int64_t counted = 0;
  for (const auto& count : samples["histogram"]["counts"]) counted += count.get<std::int64_t>();
  CHECK(counted == 200);
  double share = 0;
  for (const auto& s : samples["critical_share"]) share += s.get<double>();
  CHECK(samples["critical_share"].size() == 4);
  CHECK(share > 0.5);
  CHECK(share <= 1.0 + 1e-9);
  // The deterministic step is the one without noise: the same figures.
  const nlohmann::json quiet = json_of({"run", "-s", "zbv", "-p", "4", "-m", "8", "--samples", "3"});
  CHECK(quiet["samples"]["makespan"]["stdev"] == 0);
  CHECK(quiet["samples"]["makespan"]["min"] == plain["makespan"]);
  CHECK(quiet["samples"]["makespan"]["max"] == plain["makespan"]);
  CHECK(quiet["makespan"] == plain["makespan"]);
  nlohmann::json stripped = figures(quiet);
  stripped.erase("samples");
  CHECK(stripped == figures(plain));
  // A run without these flags writes no key of theirs.
  CHECK_FALSE(plain.contains("samples"));
  CHECK_FALSE(plain["scenario"].contains("jitter"));
}

TEST_CASE("Samples are the same bytes for a seed, and other bytes for another", "[cli][noise]") {
  const std::vector<std::string> base{"run", "-s", "1f1b", "--samples", "50", "--jitter", "0.1", "--format", "json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return cli(args).out;
  };
  CHECK(with({"--seed", "7"}) == with({"--seed", "7"}));
  CHECK(with({"--seed", "7"}) != with({"--seed", "8"}));
  // The table says the same as the JSON.
  const CliRun table = cli({"run", "-s", "1f1b", "--samples", "50", "--jitter", "0.1"});
  REQUIRE(table.status == ppsim::kExitOk);
  CHECK_THAT(table.out, Contains("samples: 50 steps, seed 0\n"));
  CHECK_THAT(table.out, Contains("critical path (share of the steps spent in each device's ops): d0 "));
  CHECK_THAT(table.out, Contains("makespan histogram\n"));
}

TEST_CASE("Samples spread over threads are the same bytes as on one, paired sends and models included",
          "[cli][noise]") {
  // Each sample goes to its own slot and the statistics are summed in sample order.
  const std::vector<std::vector<std::string>> studies = {
      {"run", "-s", "zbv", "-p", "4", "-m", "8", "--samples", "40", "--jitter", "0.1", "--link-jitter", "0.2",
       "--latency", "0.1", "--straggler-prob", "0.2:1.5"},
      {"compare", "-s", "1f1b,dualpipev", "-p", "4", "-m", "8", "--samples", "30", "--jitter", "0.05"},
      {"run", "--model", "llama3.1-8b", "-p", "2", "--global-batch", "8", "--seq", "1024", "--samples", "20",
       "--jitter", "0.05"},  // Megatron's 1F1B: paired sends, on the event queue
  };
  for (std::vector<std::string> args : studies) {
    args.insert(args.end(), {"--format", "json", "-j"});
    std::vector<std::string> one = args;
    one.push_back("1");
    std::vector<std::string> three = args;
    three.push_back("3");
    const CliRun single = cli(one);
    INFO(single.err);
    REQUIRE(single.status == ppsim::kExitOk);
    CHECK(cli(three).out == single.out);
  }
}

TEST_CASE("A deterministic straggler is the same stage costs given per stage, exactly", "[cli][noise]") {
  const auto [schedule, forward, backward] = GENERATE(table<std::string, std::string, std::string>({
      {"1f1b", "1,1.5,1,2", "2,3,2,4"},
      // ZB-V's V: device 1 holds stages 1 and 6, device 3 stages 3 and 4 (each a device's half).
      {"zbv", "0.5,0.75,0.5,1,1,0.5,0.75,0.5", "1,1.5,1,2,2,1,1.5,1"},
  }));
  INFO(schedule);
  const nlohmann::json straggled =
      json_of({"run", "-s", schedule, "--straggler", "1:1.5", "--straggler", "3:2"});
  const nlohmann::json staged =
      json_of({"run", "-s", schedule, "--forward", forward, "--backward", backward, "--costs-per", "chunk"});
  CHECK(figures(straggled) == figures(staged));
  CHECK(straggled["scenario"]["straggler"] == nlohmann::json::array({"1:1.5", "3:2"}));
}

TEST_CASE("A straggler drawn with probability 1 slows every sample, with probability 0 none", "[cli][noise]") {
  const nlohmann::json plain = json_of({"run", "-s", "interleaved-1f1b", "-p", "4", "-m", "8"});
  const nlohmann::json always =
      json_of({"run", "-s", "interleaved-1f1b", "-p", "4", "-m", "8", "--samples", "5", "--straggler-prob", "1:2"});
  const nlohmann::json never =
      json_of({"run", "-s", "interleaved-1f1b", "-p", "4", "-m", "8", "--samples", "5", "--straggler-prob", "0:2"});
  CHECK(always["samples"]["makespan"]["min"] == 2 * plain["makespan"].get<double>());
  CHECK(always["samples"]["makespan"]["max"] == 2 * plain["makespan"].get<double>());
  CHECK(never["samples"]["makespan"]["max"] == plain["makespan"]);
}

TEST_CASE("compare says whether the schedules' order by mean holds at p99", "[cli][noise]") {
  const CliRun run = cli({"compare", "-s", "gpipe,zbv", "-p", "4", "-m", "8", "--samples", "100", "--jitter", "0.05"});
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK_THAT(run.out, Contains("samples: 100 steps each, seed 0\n"));
  CHECK_THAT(run.out, Contains("order by mean makespan: zbv < gpipe; the same at p99\n"));
}

TEST_CASE("A transformer study's samples give step time and throughput, and --mtbf the reliability figures",
          "[cli][noise][reliability]") {
  const nlohmann::json report =
      json_of({"run", "-s", "1f1b", "--model", "llama3.1-8b", "-p", "4", "-m", "8", "-d", "8", "--samples", "50",
               "--jitter", "0.05", "--mtbf", "50680 h", "--train-time", "54 d", "--restart-time", "10 min"});
  const nlohmann::json& samples = report["samples"];
  CHECK(samples["histogram"]["of"] == "step_time");
  CHECK(samples["step_time"]["mean"].get<double>() > report["training"]["step_time"].get<double>());
  CHECK(samples["tokens_per_second"]["p99"].get<double>() > 0);
  const nlohmann::json& r = report["reliability"];
  CHECK(r["gpus"] == 32);
  CHECK(r["system_mtbf"] == Approx(50680.0 * 3600 / 32));
  CHECK(r["failures_expected"] == Approx(54.0 * 86400 / (50680.0 * 3600 / 32)));
  CHECK(r["step_time"] == samples["step_time"]["mean"]);  // the noisy steps' mean
  const double shares = r["goodput"].get<double>() + r["checkpoint_overhead"].get<double>() +
                        r["lost_work"].get<double>() + r["restart_overhead"].get<double>();
  CHECK(shares == Approx(1));
  CHECK(r["samples"]["n"] == 50);
  CHECK(r["assumed"] == nlohmann::json::array({"storage-bandwidth"}));
  CHECK(report["scenario"]["mtbf"] == 50680.0 * 3600);
  // Given a checkpoint every N steps, the period is N steps.
  const nlohmann::json fixed = json_of({"run", "-s", "1f1b", "--model", "llama3.1-8b", "-p", "4", "-m", "8",
                                        "--mtbf", "1000h", "--train-steps", "1000", "--checkpoint-every", "100",
                                        "--checkpoint-time", "30"});
  CHECK(fixed["reliability"]["checkpoint_every"] == 100);
  CHECK(fixed["reliability"]["checkpoint_period"] == Approx(100 * fixed["training"]["step_time"].get<double>()));
  CHECK(fixed["reliability"]["checkpoint_time"] == 30);
  CHECK(fixed["reliability"]["steps"] == 1000);
  // An async checkpoint blocks only for the copy to host memory.
  const nlohmann::json async = json_of({"run", "-s", "1f1b", "--model", "llama3.1-8b", "-p", "4", "-m", "8",
                                        "--mtbf", "1000h", "--train-steps", "1000", "--async-checkpoint"});
  CHECK(async["reliability"]["checkpoint_time"] ==
        Approx(async["reliability"]["checkpoint_bytes"].get<double>() / 64e9));
  CHECK(async["reliability"]["checkpoint_write_time"] ==
        Approx(async["reliability"]["checkpoint_bytes"].get<double>() / 125e6));
}

TEST_CASE("Bad noise, straggler and failure settings exit 2 with one line naming the flag", "[cli][noise][errors]") {
  using Args = std::vector<std::string>;
  const auto [args, expected] = GENERATE(table<Args, std::string>({
      {{"run", "--samples", "10", "--jitter", "-0.1"},
       "ppsim: error: --jitter: a coefficient of variation must not be negative, got '-0.1'\n"},
      {{"run", "--samples", "10", "--jitter", "F:0.1,X:0.2"}, "ppsim: error: --jitter: op kind 'X' is not F, B, I or W\n"},
      {{"run", "--samples", "10", "--link-jitter", "nan"},
       "ppsim: error: --link-jitter: must be a coefficient of variation (a number >= 0), got 'nan'\n"},
      {{"run", "--straggler", "1:0"}, "ppsim: error: --straggler: a slowdown factor must be > 0, got '0'\n"},
      {{"run", "--straggler", "9:2"}, "ppsim: error: --straggler: device 9 is not one of the 4 devices (0 to 3)\n"},
      {{"run", "--straggler", "1"}, "ppsim: error: --straggler: must be DEVICE:FACTOR, got '1'\n"},
      {{"run", "--samples", "10", "--straggler-prob", "1.5:2"},
       "ppsim: error: --straggler-prob: a probability must be between 0 and 1, got '1.5'\n"},
      {{"run", "--samples", "10", "--jitter-dist", "cauchy"},
       "ppsim: error: --jitter-dist: must be lognormal, gamma or normal, got 'cauchy'\n"},
      {{"run", "--jitter", "0.1"}, "ppsim: error: --jitter: needs --samples N (the deterministic step has no noise)\n"},
      {{"run", "--samples", "0"}, "ppsim: error: --samples: must be at least 1, got 0\n"},
      {{"run", "-p", "64", "-m", "1024", "--samples", "1000000"},
       "ppsim: error: --samples: 1000000 samples of 131072 ops are 1.31072e+11 op replays, above the limit of 1e+09; "
       "take fewer samples or a smaller m\n"},
      {{"run", "--model", "llama3.1-8b", "--samples", "100000", "--mtbf", "1 h", "--train-time", "1000 d",
        "--checkpoint-every", "1"},
       "ppsim: error: --samples: 100000 simulated training runs of "},
      {{"run", "--model", "llama3.1-8b", "--mtbf", "0", "--train-time", "1 d"},
       "ppsim: error: --mtbf: must be > 0, got '0'\n"},
      {{"run", "--mtbf", "1 h"}, "ppsim: error: --mtbf: needs --model (a transformer study)\n"},
      {{"run", "--model", "llama3.1-8b", "--mtbf", "1 h"},
       "ppsim: error: --mtbf: needs the run's length, --train-time T or --train-steps N\n"},
      {{"run", "--model", "llama3.1-8b", "--train-time", "1 d"},
       "ppsim: error: --train-time: needs --mtbf T, the mean time between failures of one GPU\n"},
      {{"run", "--model", "llama3.1-8b", "--mtbf", "1 h", "--train-time", "1 d", "--train-steps", "5"},
       "ppsim: error: --train-steps: give --train-time or --train-steps, not both\n"},
      {{"run", "--model", "llama3.1-8b", "--mtbf", "1 h", "--train-time", "1 d", "--checksum", "crc32"},
       "ppsim: error: --checksum: H100-SXM5-80GB has no measured crc32_rate in its profile (ppsim-calibrate "
       "measures it)\n"},
      {{"run", "--model", "llama3.1-8b", "--mtbf", "1 h", "--train-time", "1 d", "--checkpoint-every", "often"},
       "ppsim: error: --checkpoint-every: must be an integer, got 'often'\n"},
  }));
  INFO("args: " << Catch::Detail::stringify(args));
  const CliRun run = cli(args);
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.out.empty());
  CHECK(run.err.starts_with(expected));
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
}

TEST_CASE("Noise and failure keys in a config name their JSON path", "[cli][noise][errors]") {
  const ppsim::test::TempDir dir("noise-config");
  const std::string path = dir.file("c.json");
  std::ofstream(path) << R"({"samples": 10, "jitter": {"F": 0.1}})";
  const CliRun run = cli({"run", "-c", path});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err == "ppsim: error: " + path + ": $.jitter: must be a string or a number, got object {\"F\":0.1}\n");
  // Numbers, lists and units read as the flags do.
  std::ofstream(path) << R"({"samples": 10, "jitter": 0.1, "seed": 3, "straggler": ["1:1.5"]})";
  const CliRun ok = cli({"run", "-c", path, "--format", "json"});
  REQUIRE(ok.status == ppsim::kExitOk);
  const auto report = nlohmann::json::parse(ok.out);
  CHECK(report["samples"]["seed"] == 3);
  CHECK(report["scenario"]["straggler"] == nlohmann::json::array({"1:1.5"}));
}

TEST_CASE("Measured jitter and checksums come from a calibrated profile's variability table and CRC32 rate",
          "[cli][noise][reliability]") {
  const ppsim::test::TempDir dir("measured-noise");
  // A profile as ppsim-calibrate writes one: the H100 preset with its measured tables added.
  nlohmann::json profile;
  std::ifstream(std::string(PPSIM_SOURCE_DIR) + "/configs/hardware/h100-sxm5-80gb.json") >> profile;
  profile["name"] = "H100 measured";
  profile["crc32_rate"] = 4e9;
  profile["variability"] = {{"F", 0.02}, {"B", 0.03}, {"I", 0.03}, {"W", 0.04}, {"link", 0.05}};
  const std::string path = dir.file("h100-measured.json");
  std::ofstream(path) << profile.dump();
  const std::vector<std::string> base{"run", "-s", "zbv", "--model", "llama3.1-8b", "--hardware", path, "-p", "4",
                                      "-m", "8", "--samples", "20"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return json_of(args);
  };
  // The same draws as the table's figures given by hand.
  const nlohmann::json measured = with({"--jitter", "measured"});
  const nlohmann::json by_hand = with({"--jitter", "F:0.02,B:0.03,I:0.03,W:0.04", "--link-jitter", "0.05"});
  CHECK(measured["samples"] == by_hand["samples"]);
  CHECK(measured["scenario"]["jitter"] == "measured");
  // The checksum adds the checkpoint's bytes over the measured rate to its write.
  const std::vector<std::string> failures{"--mtbf", "1000 h", "--train-steps", "1000"};
  const nlohmann::json plain = with(failures);
  std::vector<std::string> summed = failures;
  summed.insert(summed.end(), {"--checksum", "crc32"});
  const nlohmann::json checked = with(summed);
  const double bytes = plain["reliability"]["checkpoint_bytes"].get<double>();
  CHECK(checked["reliability"]["checkpoint_time"].get<double>() ==
        Approx(plain["reliability"]["checkpoint_time"].get<double>() + bytes / 4e9));
  // A datasheet preset has no variability to take.
  const CliRun refused = cli({"run", "--model", "llama3.1-8b", "--samples", "5", "--jitter", "measured"});
  CHECK(refused.status == ppsim::kExitBadInput);
  CHECK(refused.err == "ppsim: error: --jitter: H100-SXM5-80GB has no variability table (ppsim-calibrate writes one "
                       "into the profiles it measures)\n");
}

TEST_CASE("The HTML report shows each sampled schedule's percentiles and histogram, well-formed", "[cli][noise]") {
  const ppsim::test::TempDir dir("noise-html");
  const std::string page = dir.file("noise.html");
  const CliRun run = cli({"compare", "-s", "1f1b,zbv", "--samples", "100", "--jitter", "0.1", "--html", page});
  REQUIRE(run.status == ppsim::kExitOk);
  std::ifstream file(page);
  const std::string html((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK_FALSE(ppsim::test::xml_error(html).has_value());
  CHECK(ppsim::test::count_of(html, "<div class=\"samples\"") == 1);
  CHECK(ppsim::test::count_of(html, ": makespan, 100 samples</text>") == 2);
  // 20 bars a histogram, each with its tooltip.
  CHECK(ppsim::test::count_of(html, " samples</title></rect>") == 40);
  // Without samples, no such section.
  const std::string plain = dir.file("plain.html");
  REQUIRE(cli({"compare", "-s", "1f1b,zbv", "--html", plain}).status == ppsim::kExitOk);
  std::ifstream plain_file(plain);
  const std::string plain_html((std::istreambuf_iterator<char>(plain_file)), std::istreambuf_iterator<char>());
  CHECK(ppsim::test::count_of(plain_html, "class=\"samples\"") == 0);
}

TEST_CASE("CI can pin the sampled p99 and the goodput with --expect, and is told when they are not there",
          "[cli][noise][expect]") {
  const CliRun held = cli({"run", "-s", "zbv", "--samples", "100", "--jitter", "0.05", "--expect", "p99_step_time < 30"});
  CHECK(held.status == ppsim::kExitOk);
  const CliRun broken =
      cli({"run", "-s", "zbv", "--samples", "100", "--jitter", "0.05", "--expect", "p99_step_time < 20"});
  CHECK(broken.status == ppsim::kExitFailure);
  CHECK_THAT(broken.err, Contains("--expect \"p99_step_time < 20\" failed: zbv has p99_step_time 2"));
  const CliRun absent = cli({"run", "-s", "zbv", "--expect", "p99_step_time < 30"});
  CHECK(absent.status == ppsim::kExitFailure);
  CHECK_THAT(absent.err,
             Contains("--expect \"p99_step_time < 30\" failed: zbv has no such figure: p99_step_time needs --samples N"));
  const CliRun goodput = cli({"run", "-s", "1f1b", "--model", "llama3.1-8b", "-p", "4", "-m", "8", "--mtbf", "1000 h",
                              "--train-steps", "1000", "--expect", "goodput > 0.5"});
  CHECK(goodput.status == ppsim::kExitOk);
}

TEST_CASE("A report with samples and failures reads back through ppsim check to the same figures", "[cli][noise][check]") {
  const ppsim::test::TempDir dir("noise-check");
  const std::string baseline = dir.file("base.json");
  const CliRun run = cli({"run", "-s", "1f1b", "--model", "llama3.1-8b", "-p", "4", "-m", "8", "-d", "8", "--fsdp",
                          "--mtbf", "1000 h", "--train-steps", "1000", "--samples", "20", "--jitter", "0.02",
                          "--straggler", "2:1.1", "--format", "json"});
  REQUIRE(run.status == ppsim::kExitOk);
  std::ofstream(baseline) << run.out;
  const CliRun check = cli({"check", baseline});
  INFO(check.out << check.err);
  CHECK(check.status == ppsim::kExitOk);
}
