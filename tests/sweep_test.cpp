// SPDX-License-Identifier: Apache-2.0
// ppsim sweep and ppsim merge: studies read and refused with their JSON path, constraints that
// derive d and m, skipped and unfit points counted, output bytes independent of threads and shards.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sim/report/format.hpp"
#include "study/api.hpp"
#include "study/common/errors.hpp"
#include "study/sweep/sweep_output.hpp"
#include "study/sweep/sweep_runner.hpp"
#include "study/sweep/sweep_study.hpp"
#include "study/sweep/sweep_summary.hpp"
#include "support/cli_run.hpp"
#include "tools/ppsim/cli.hpp"

namespace fs = std::filesystem;

namespace {

using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::TempDir;

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.file(name)) << text;
  return dir.file(name);
}

std::string read(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

ppsim::Study study_of(const std::string& json) {
  return ppsim::parse_study(nlohmann::ordered_json::parse(json), "study.json");
}

// 2 schedules x 3 p x 6 m, with interleaved points that its m % p rule skips and a memory limit that
// GPipe's large m exceed.
const char* kMixedStudy = R"({
  "fixed": {"forward": 1, "backward": 2, "activation-bytes": "1 GiB", "latency": 0.05},
  "axes": {"schedule": ["gpipe", "interleaved-1f1b"], "p": [2, 3, 4], "m": {"from": 2, "to": 12, "step": 2}},
  "memory_limit": "8 GiB"
})";

std::string source_path(const std::string& relative) { return std::string(PPSIM_SOURCE_DIR) + "/" + relative; }

}  // namespace

TEST_CASE("a study's axes enumerate in file order with the last axis varying fastest", "[sweep]") {
  const ppsim::Study study = study_of(kMixedStudy);
  REQUIRE(study.points == 36);
  const ppsim::PreparedPoint first = ppsim::prepare_point(study, 0);
  CHECK(first.schedule == "gpipe");
  CHECK(first.scenario.params.p == 2);
  CHECK(first.scenario.params.m == 2);
  const ppsim::PreparedPoint seventh = ppsim::prepare_point(study, 7);
  CHECK(seventh.scenario.params.p == 3);
  CHECK(seventh.scenario.params.m == 4);
  const ppsim::PreparedPoint last = ppsim::prepare_point(study, 35);
  CHECK(last.schedule == "interleaved-1f1b");
  CHECK(last.v == 2);
  CHECK(last.scenario.params.m == 12);
}

TEST_CASE("ranges step by adding or multiplying and include their end", "[sweep]") {
  const auto [range, expected] = GENERATE(table<std::string, std::vector<int>>({
      {R"({"from": 2, "to": 64, "times": 2})", {2, 4, 8, 16, 32, 64}},
      {R"({"from": 4, "to": 14, "step": 4})", {4, 8, 12}},
      {R"({"from": 3, "to": 3, "step": 1})", {3}},
  }));
  const ppsim::Study study = study_of(R"({"axes": {"p": )" + range + "}}");
  REQUIRE(study.points == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(ppsim::prepare_point(study, i).scenario.params.p == expected[i]);
}

TEST_CASE("gpus derives d from t*p and skips the points t*p does not divide", "[sweep]") {
  const ppsim::Study study = study_of(R"({
    "fixed": {"model": "llama3.1-8b", "global-batch": 64},
    "gpus": 16,
    "axes": {"t": [1, 2, 4], "p": [2, 3, 4], "micro-batch": [1, 2]}
  })");
  CHECK(study.derive_d);
  // t=2, p=4, b=2: d = 16 / 8 = 2 and m = 64 / (2*2) = 16.
  const ppsim::PreparedPoint point = ppsim::prepare_point(study, 1 * 6 + 2 * 2 + 1);
  CHECK(point.skipped.empty());
  CHECK(point.scenario.layout.data_parallel == 2);
  CHECK(point.scenario.params.m == 16);
  // p = 3 does not divide 16.
  CHECK(ppsim::prepare_point(study, 1 * 2).skipped == "t*p does not divide the 16 GPUs");
}

TEST_CASE("gpus counts the context-parallel ranks: d = gpus / (t*c*p)", "[sweep]") {
  const ppsim::Study study = study_of(R"({
    "fixed": {"model": "llama3.1-8b", "global-batch": 64, "seq": 8192, "p": 2},
    "gpus": 16,
    "axes": {"context-parallel": [1, 2, 4, 3]}
  })");
  CHECK(ppsim::prepare_point(study, 0).scenario.layout.data_parallel == 8);
  CHECK(ppsim::prepare_point(study, 1).scenario.layout.data_parallel == 4);
  const ppsim::PreparedPoint four = ppsim::prepare_point(study, 2);
  CHECK(four.scenario.layout.data_parallel == 2);
  CHECK(four.scenario.params.m == 32);  // the global batch over b * d: CP takes no sequences
  CHECK(ppsim::prepare_point(study, 3).skipped == "t*c*p does not divide the 16 GPUs");
}

TEST_CASE("FSDP's unit and reshard policy are study axes, and a stage alone gathers less per block", "[sweep]") {
  const ppsim::Study study = study_of(R"({
    "fixed": {"model": "llama3.1-8b", "global-batch": 8, "seq": 8192, "p": 1, "d": 8, "fsdp": true},
    "axes": {"fsdp-unit": ["block", "stage"], "reshard-after-forward": ["default", "never"]}
  })");
  CHECK(ppsim::prepare_point(study, 0).scenario.layout.fsdp_unit == "block");
  CHECK(ppsim::prepare_point(study, 1).scenario.layout.reshard_after_forward == "never");
  CHECK(ppsim::prepare_point(study, 2).scenario.layout.fsdp_unit == "stage");
  ppsim::SweepOptions options;
  const auto results = ppsim::run_sweep(study, options);
  REQUIRE(results.size() == 4);
  for (std::size_t k = 0; k < 3; ++k) REQUIRE(results[k].run);
  // A whole stage is gathered once anyway: the policy is refused there, and the point skipped.
  CHECK_FALSE(results[3].run);
  CHECK_THAT(results[3].skipped, Catch::Matchers::Contains("applies to blocks"));
  // Per block the whole model is never gathered at once, and its gathers hide behind the compute.
  CHECK(results[0].figures.peak_memory_bytes < results[2].figures.peak_memory_bytes);
  CHECK(results[0].figures.step_time < results[2].figures.step_time);
  // Kept gathered (never), the blocks are gathered once, in the forward: more memory, no less time.
  CHECK(results[1].figures.peak_memory_bytes > results[0].figures.peak_memory_bytes);
}

TEST_CASE("a global batch that b*d does not divide skips the point", "[sweep]") {
  const ppsim::Study study = study_of(R"({
    "fixed": {"model": "llama3.1-8b", "global-batch": 12, "p": 2},
    "axes": {"micro-batch": [1, 5]}
  })");
  CHECK(ppsim::prepare_point(study, 0).scenario.params.m == 12);
  CHECK(ppsim::prepare_point(study, 1).skipped == "the global batch is not a multiple of b*d");
}

TEST_CASE("skipped and unfit points are counted, and skips are grouped by reason", "[sweep]") {
  const ppsim::Study study = study_of(kMixedStudy);
  ppsim::SweepOptions options;
  const auto results = ppsim::run_sweep(study, options);
  REQUIRE(results.size() == 36);
  std::size_t run = 0, skipped = 0, unfit = 0;
  for (const auto& point : results) {
    if (!point.run) {
      ++skipped;
      CHECK(point.schedule == "interleaved-1f1b");
      CHECK(point.skipped == "interleaved-1f1b needs m to be a multiple of max(1, floor(m/p))");
    } else {
      ++run;
      if (!point.figures.fits) ++unfit;
      CHECK(point.figures.fits == (point.figures.peak_memory_bytes <= (std::int64_t{8} << 30)));
    }
  }
  CHECK(skipped > 0);
  CHECK(unfit > 0);  // GPipe holds all m stashes: m = 10, 12 exceed 8 GiB
  const std::string summary = ppsim::sweep_summary(study, results, 0, 1);
  CHECK(summary.find("run " + std::to_string(run) + ", skipped " + std::to_string(skipped) + ", not fitting " +
                     std::to_string(unfit)) != std::string::npos);
  CHECK(summary.find(std::to_string(skipped) + "  interleaved-1f1b needs m to be a multiple") != std::string::npos);
}

TEST_CASE("the choose-m table finds the smallest m under the bubble target", "[sweep]") {
  // 1F1B, F=1, B=2, free links: bubble (p-1)/(m+p-1) <= 0.05 first at m = 19(p-1).
  const ppsim::Study study = study_of(R"({
    "fixed": {"schedule": "1f1b"}, "axes": {"p": [2, 4], "m": {"from": 1, "to": 80, "step": 1}}
  })");
  const auto results = ppsim::run_sweep(study, {});
  const auto rows = ppsim::choose_m(study, results);
  REQUIRE(rows.size() == 2);
  REQUIRE(rows[0].reached);
  CHECK(results[rows[0].found].m == 19);
  REQUIRE(rows[1].reached);
  CHECK(results[rows[1].found].m == 57);
}

TEST_CASE("the Pareto front keeps only points that no cheaper point outruns", "[sweep]") {
  const ppsim::Study study = study_of(kMixedStudy);
  const auto results = ppsim::run_sweep(study, {});
  const auto front = ppsim::pareto_front(study, results);
  REQUIRE(!front.empty());
  for (std::size_t i = 1; i < front.size(); ++i) {
    CHECK(results[front[i]].figures.peak_memory_bytes > results[front[i - 1]].figures.peak_memory_bytes);
    CHECK(results[front[i]].figures.throughput > results[front[i - 1]].figures.throughput);
  }
  for (const auto& point : results) {
    if (!point.run || !point.figures.fits) continue;
    for (std::size_t f : front) {
      const auto& best = results[f].figures;
      CHECK_FALSE((point.figures.peak_memory_bytes < best.peak_memory_bytes &&
                   point.figures.throughput > best.throughput));
    }
  }
}

TEST_CASE("the output file has the same bytes for any number of threads, with or without the closed forms",
          "[sweep]") {
  TempDir dir("threads");
  const std::string study = write(dir, "study.json", kMixedStudy);
  const std::string extension = GENERATE(std::string(".csv"), std::string(".jsonl"));
  const CliRun one = cli({"sweep", study, "-j", "1", "-o", dir.file("one" + extension)});
  const CliRun four = cli({"sweep", study, "-j", "4", "-o", dir.file("four" + extension)});
  const CliRun every = cli({"sweep", study, "-j", "0", "--simulate-all", "-o", dir.file("every" + extension)});
  REQUIRE(every.status == ppsim::kExitOk);
  CHECK(read(dir.file("every" + extension)) == read(dir.file("one" + extension)));
  CHECK(every.out == one.out);
  REQUIRE(one.status == ppsim::kExitOk);
  REQUIRE(four.status == ppsim::kExitOk);
  CHECK(one.err.empty());  // no progress bar unless stderr is a terminal
  const std::string bytes = read(dir.file("one" + extension));
  CHECK(bytes.size() > 1000);
  CHECK(bytes == read(dir.file("four" + extension)));
  CHECK(one.out == four.out);
}

TEST_CASE("shards merged equal the unsharded file byte for byte", "[sweep]") {
  TempDir dir("shards");
  const std::string study = write(dir, "study.json", kMixedStudy);
  const std::string extension = GENERATE(std::string(".csv"), std::string(".jsonl"));
  const int shards = GENERATE(1, 3, 5);
  REQUIRE(cli({"sweep", study, "-j", "2", "-o", dir.file("all" + extension)}).status == ppsim::kExitOk);
  std::vector<std::string> merge = {"merge", "-o", dir.file("merged" + extension)};
  for (int i = shards - 1; i >= 0; --i) {  // any order
    const std::string part = dir.file("part" + std::to_string(i) + extension);
    const CliRun run = cli({"sweep", study, "--shard", std::to_string(i) + "/" + std::to_string(shards), "-o", part});
    REQUIRE(run.status == ppsim::kExitOk);
    merge.push_back(part);
  }
  const CliRun merged = cli(merge);
  REQUIRE(merged.status == ppsim::kExitOk);
  CHECK(read(dir.file("merged" + extension)) == read(dir.file("all" + extension)));
}

TEST_CASE("merge refuses a missing shard and a shard given twice", "[sweep]") {
  TempDir dir("merge_refusals");
  const std::string study = write(dir, "study.json", kMixedStudy);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(cli({"sweep", study, "--shard", std::to_string(i) + "/3", "-o", dir.file("p" + std::to_string(i) + ".csv")})
                .status == ppsim::kExitOk);
  }
  const CliRun missing = cli({"merge", "-o", dir.file("m.csv"), dir.file("p0.csv"), dir.file("p2.csv")});
  CHECK(missing.status == ppsim::kExitBadInput);
  CHECK(missing.err == "ppsim: error: merge: shard 1/3 is missing; give every shard's file\n");
  const CliRun twice =
      cli({"merge", "-o", dir.file("m.csv"), dir.file("p0.csv"), dir.file("p1.csv"), dir.file("p2.csv"), dir.file("p1.csv")});
  CHECK(twice.status == ppsim::kExitBadInput);
  CHECK(twice.err.find("shard 1/3 is also in") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.file("m.csv")));
}

TEST_CASE("bad studies exit 2 with the JSON path", "[sweep]") {
  TempDir dir("bad");
  const auto [json, expected] = GENERATE(table<std::string, std::string>({
      {R"({"axes": {"p": []}})", "study.json: $.axes.p: must not be empty"},
      {R"({"axes": {"p": [2]}, "objectve": "bubble"})", "study.json: $.objectve: unknown key (did you mean \"objective\"?)"},
      {R"({"fixed": {"forwrd": 1}, "axes": {"p": [2]}})", "study.json: $.fixed.forwrd: unknown key (did you mean \"forward\"?)"},
      {R"({"axes": {"p": [2, "x"]}})", "study.json: $.axes.p[1]: must be a positive integer"},
      {R"({"axes": {"p": {"from": 8, "to": 2, "step": 1}}})", "study.json: $.axes.p: \"from\" (8) is above \"to\" (2)"},
      {R"({"axes": {"p": {"from": 2, "to": 8, "step": 0}}})", "study.json: $.axes.p.step: must be positive"},
      {R"({"axes": {"bandwith": [1, 2]}})", "study.json: $.axes.bandwith[0]: must be an object of settings"},
      {R"({"axes": {"schedule": ["1f1b", "1f1c"]}})", "study.json: $.axes.schedule[1]: unknown schedule '1f1c'"},
      {R"({"axes": {}})", "study.json: $.axes: must name at least one axis"},
      {R"({"fixed": {"p": 4}, "axes": {"p": [2]}})", "study.json: $.axes.p: p is also set at $.fixed.p"},
      {R"({"axes": {"p": [2], "t": [2]}})", "study.json: $.axes.t: t needs a model"},
      {R"({"gpus": 8, "axes": {"p": [2]}})", "study.json: $.gpus: needs a model study"},
      {R"({"fixed": {"model": "llama3.1-8b"}, "gpus": 64, "axes": {"t": [3], "p": [5]}})",
       "study.json: $.gpus: no point of the study satisfies the constraints"},
      {R"({"fixed": {"model": "llama3.1-8b", "global-batch": 7}, "axes": {"micro-batch": [2, 4]}})",
       "study.json: $.fixed.global-batch: no point of the study satisfies the constraints"},
      {R"({"fixed": {"model": "llama3.1-8b", "global-batch": 8}, "axes": {"m": [2, 4]}})",
       "study.json: $.axes.m: m is derived from the global batch"},
      {R"({"axes": {"p": [2]}, "objective": "fast"})", "study.json: $.objective: must be throughput, bubble, memory, time or p99_step_time"},
  }));
  std::ofstream(dir.file("study.json")) << json;
  const CliRun run = cli({"sweep", dir.file("study.json")});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.out.empty());
  INFO(run.err);
  CHECK(run.err.find(expected) != std::string::npos);
}

TEST_CASE("sweep refuses a bad shard, thread count or output name", "[sweep]") {
  const std::string study = source_path("configs/studies/schedule_shootout.json");
  CHECK(cli({"sweep", study, "--shard", "3/3"}).status == ppsim::kExitBadInput);
  CHECK(cli({"sweep", study, "--shard", "x"}).status == ppsim::kExitBadInput);
  CHECK(cli({"sweep", study, "-j", "-1"}).status == ppsim::kExitBadInput);
  const CliRun too_many = cli({"sweep", study, "-j", "5000"});
  CHECK(too_many.status == ppsim::kExitBadInput);
  CHECK(too_many.err == "ppsim: error: --jobs: Value 5000 not in range 0 to 4096\n");
  const CliRun bad_name = cli({"sweep", study, "-o", "results.txt"});
  CHECK(bad_name.status == ppsim::kExitBadInput);
  CHECK(bad_name.err.find("must end in .csv or .jsonl") != std::string::npos);
}

TEST_CASE("every shipped study runs and prints its summary", "[sweep]") {
  const std::string name = GENERATE(std::string("m_vs_p_bubble"), std::string("schedule_shootout"),
                                    std::string("llama3_70b_64xh100"), std::string("bandwidth_links"));
  TempDir dir("shipped_" + name);
  const CliRun run = cli({"sweep", source_path("configs/studies/" + name + ".json"), "-o", dir.file("out.csv")});
  INFO(run.err);
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(run.out.find("top ") != std::string::npos);
  CHECK(run.out.find("choose m") != std::string::npos);
  CHECK(read(dir.file("out.csv")).starts_with("point,status,schedule,p,v,m,"));
}

TEST_CASE("Every cell of a sweep's CSV is the value its JSONL row holds, in the header's order", "[sweep]") {
  // The CSV is written straight from the points; the JSON rows are the reference it must agree with:
  // a string as it is (quoted when it holds a comma or a quote), a real number exactly, null empty.
  const std::string text = GENERATE(std::string(kMixedStudy),
                                    std::string(R"({"fixed": {"model": "llama3.1-8b", "seq": 2048, "p": 2, "t": 2,
                                      "global-batch": 16, "schedule": "1f1b", "samples": 3, "jitter": 0.05},
                                      "axes": {"gpu": [{"name": "h100,\"sxm\"", "hardware": "h100-sxm5-80gb"},
                                                       {"name": "a100", "hardware": "a100-sxm4-80gb"}],
                                               "micro-batch": [1, 2, 3], "recompute": ["none", "full"]},
                                      "objective": "p99_step_time"})"));
  ppsim::Study study;
  try {
    study = study_of(text);
  } catch (const ppsim::InputError& error) {
    FAIL(error.what());
  }
  const std::vector<ppsim::PointResult> points = ppsim::run_sweep(study, ppsim::SweepOptions{});
  std::istringstream csv(ppsim::sweep_csv(study, points));
  std::string header;
  std::getline(csv, header);
  for (const ppsim::PointResult& point : points) {
    const nlohmann::ordered_json row = ppsim::point_row(study, point);
    std::string columns;
    std::string expected;
    for (const auto& [key, value] : row.items()) {
      columns += (columns.empty() ? "" : ",") + key;
      std::string cell = value.is_null()           ? ""
                         : value.is_string()       ? value.get<std::string>()
                         : value.is_number_float() ? ppsim::format_exact(value.get<double>())
                                                   : value.dump();
      if (cell.find_first_of(",\"") != std::string::npos) {
        std::string quoted = "\"";
        for (const char c : cell) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
        cell = quoted + "\"";
      }
      expected += (expected.empty() ? "" : ",") + cell;
    }
    std::string line;
    REQUIRE(std::getline(csv, line));
    CHECK(header == columns);
    CHECK(line == expected);
  }
  CHECK(points.size() > 10);
}

TEST_CASE("the bubble table study answered from its closed forms writes the simulated bytes", "[sweep]") {
  TempDir dir("closed_forms");
  const std::string study = source_path("configs/studies/m_vs_p_bubble.json");
  const CliRun fast = cli({"sweep", study, "-j", "2", "-o", dir.file("fast.csv")});
  const CliRun simulated = cli({"sweep", study, "-j", "2", "--simulate-all", "-o", dir.file("simulated.csv")});
  REQUIRE(fast.status == ppsim::kExitOk);
  REQUIRE(simulated.status == ppsim::kExitOk);
  const std::string bytes = read(dir.file("fast.csv"));
  CHECK(bytes.size() > 100000);  // 1,600 points
  CHECK(bytes == read(dir.file("simulated.csv")));
  CHECK(fast.out == simulated.out);
}

TEST_CASE("A sweep's result as data holds its points and the summary's rows, copied from the same points") {
  // Regression: the rows were referenced inside the result while keys were added after them (an
  // ordered_json object keeps its keys in a vector), which left the references dangling.
  const ppsim::Study study = study_of(kMixedStudy);
  ppsim::SweepOptions options;
  options.threads = 2;
  const std::vector<ppsim::PointResult> points = ppsim::run_sweep(study, options);
  const nlohmann::ordered_json result = ppsim::sweep_result_json(study, points);
  REQUIRE(result["points"].size() == points.size());
  for (std::size_t i = 0; i < points.size(); ++i) CHECK(result["points"][i] == ppsim::point_row(study, points[i]));
  const std::vector<std::size_t> top = ppsim::top_points(study, points);
  REQUIRE(result["top"].size() == top.size());
  for (std::size_t i = 0; i < top.size(); ++i) CHECK(result["top"][i] == result["points"][top[i]]);
  const std::vector<std::size_t> front = ppsim::pareto_front(study, points);
  REQUIRE(result["pareto_front"].size() == front.size());
  for (std::size_t i = 0; i < front.size(); ++i) CHECK(result["pareto_front"][i] == result["points"][front[i]]);
  CHECK(result["choose_m"].size() == ppsim::choose_m(study, points).size());
  CHECK(result["summary"] == ppsim::sweep_summary(study, points, 0, 1));
}

TEST_CASE("sweep --summary writes the summary's tables as JSON, the same bytes for any -j") {
  TempDir dir("sweep-summary");
  const std::string study_path = write(dir, "study.json", kMixedStudy);
  const CliRun one = cli({"sweep", study_path, "-j", "1", "--summary", dir.file("one.json")});
  REQUIRE(one.status == 0);
  REQUIRE(cli({"sweep", study_path, "-j", "3", "--summary", dir.file("three.json")}).status == 0);
  CHECK(read(dir.file("one.json")) == read(dir.file("three.json")));
  const nlohmann::ordered_json tables = nlohmann::ordered_json::parse(read(dir.file("one.json")));
  CHECK_FALSE(tables.contains("points"));
  CHECK(tables["summary"] == one.out);  // the text it printed
  const ppsim::Study study = ppsim::load_study(study_path);  // the summary names the study's file
  ppsim::SweepOptions options;
  const auto points = ppsim::run_sweep(study, options);
  CHECK(tables == ppsim::sweep_result_json(study, points, 0, 1, false));
  REQUIRE(!tables["top"].empty());
  CHECK(tables["top"][0] == ppsim::point_row(study, points[ppsim::top_points(study, points).front()]));
}

TEST_CASE("sweep -o - writes the points file's bytes to stdout and the tables to stderr", "[sweep]") {
  TempDir dir("stdout_points");
  const std::string study = write(dir, "study.json", kMixedStudy);
  const CliRun to_file = cli({"sweep", study, "-j", "2", "-o", dir.file("points.csv")});
  REQUIRE(to_file.status == ppsim::kExitOk);
  const CliRun to_stdout = cli({"sweep", study, "-j", "2", "-o", "-"});
  REQUIRE(to_stdout.status == ppsim::kExitOk);
  CHECK(to_stdout.out == read(dir.file("points.csv")));
  CHECK(to_stdout.err == to_file.out);  // the summary, now on stderr
  CHECK(!fs::exists("-"));

  // merge -o - too: the shards joined, as the file would hold them.
  std::vector<std::string> merge = {"merge", "-o", "-"};
  for (int i = 0; i < 2; ++i) {
    const std::string part = dir.file("part" + std::to_string(i) + ".csv");
    REQUIRE(cli({"sweep", study, "--shard", std::to_string(i) + "/2", "-o", part}).status == ppsim::kExitOk);
    merge.push_back(part);
  }
  const CliRun merged = cli(merge);
  REQUIRE(merged.status == ppsim::kExitOk);
  CHECK(merged.out == read(dir.file("points.csv")));
}

TEST_CASE("without a model a sweep's throughput counts samples: m * b / makespan", "[sweep]") {
  // The same step cut into micro-batches of b = 4 and of b = 1: four quarter-size micro-batches
  // carry what one whole one does, at a quarter of its cost each.
  TempDir dir("samples");
  const std::string study = write(dir, "study.json", R"({
    "fixed": {"schedule": "1f1b", "p": 4},
    "axes": {"group": [
      {"m": 8, "micro-batch": 4, "forward": 4, "backward": 8},
      {"m": 32, "micro-batch": 1, "forward": 1, "backward": 2}]}
  })");
  const CliRun run = cli({"sweep", study, "-o", dir.file("points.jsonl")});
  REQUIRE(run.status == ppsim::kExitOk);
  std::istringstream lines(read(dir.file("points.jsonl")));
  std::vector<double> throughput;
  for (std::string line; std::getline(lines, line);) {
    throughput.push_back(nlohmann::json::parse(line).at("throughput").get<double>());
  }
  REQUIRE(throughput.size() == 2);
  // 1F1B: makespan (m + p - 1)(F + B): 11 * 12 = 132 for 32 samples; 35 * 3 = 105 for 32 samples.
  CHECK(throughput[0] == Approx(32.0 / 132));
  CHECK(throughput[1] == Approx(32.0 / 105));
  CHECK(run.out.find("samples per time unit, m * b / makespan") != std::string::npos);
}

TEST_CASE("a sampled study ranks by p99 step time, the same bytes on one thread or two", "[sweep][noise]") {
  const TempDir dir("sweep-noise");
  const std::string study = write(dir, "noise.json", R"({
    "fixed": {"p": 4, "m": 8, "samples": 100, "seed": 1},
    "axes": {"schedule": ["gpipe", "1f1b", "zbv"], "jitter": [0, 0.2]},
    "objective": "p99_step_time"
  })");
  const CliRun one = cli({"sweep", study, "-o", dir.file("one.csv"), "-j", "1"});
  const CliRun two = cli({"sweep", study, "-o", dir.file("two.csv"), "-j", "2"});
  REQUIRE(one.status == ppsim::kExitOk);
  REQUIRE(two.status == ppsim::kExitOk);
  const std::string csv = read(dir.file("one.csv"));
  CHECK(csv == read(dir.file("two.csv")));
  CHECK(csv.substr(0, csv.find('\n')).ends_with(",fits,mean_step_time,p99_step_time,reason"));
  CHECK_THAT(one.out, Catch::Matchers::Contains("top 6 by p99 of the sampled makespan (lowest first):"));
  // Without noise p99 is the makespan itself: ZB-V's 25.5 leads, then the noisy ZB-V.
  const std::string top = one.out.substr(one.out.find("rank"));
  CHECK(top.find("zbv") < top.find("1f1b"));
  const ppsim::Study sampled = study_of(R"({"fixed": {"samples": 10}, "axes": {"m": [4, 8]}})");
  CHECK(sampled.sampled);
  // Ranking by p99 needs samples to rank.
  const TempDir other("sweep-noise-refused");
  const std::string plain = write(other, "plain.json", R"({"axes": {"m": [4, 8]}, "objective": "p99_step_time"})");
  const CliRun refused = cli({"sweep", plain});
  CHECK(refused.status == ppsim::kExitBadInput);
  CHECK_THAT(refused.err, Catch::Matchers::Contains(
                              "$.objective: p99_step_time ranks by the samples' p99: give \"samples\" in fixed or an axis"));
}
