// SPDX-License-Identifier: Apache-2.0
// The names people type: schedules in any case and by torch's and Megatron's names, and flags and
// commands that are nearly right.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "schedules/registry.hpp"
#include "support/cli_run.hpp"

using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::TempDir;

TEST_CASE("A schedule resolves in any case and by torch's class names and Megatron's", "[cli][names]") {
  const auto [typed, name] = GENERATE(table<std::string, std::string>({
      {"GPipe", "gpipe"},
      {"ScheduleGPipe", "gpipe"},
      {"1F1B", "1f1b"},
      {"Schedule1F1B", "1f1b"},
      {"Interleaved1F1B", "interleaved-1f1b"},
      {"ScheduleInterleaved1F1B", "interleaved-1f1b"},
      {"interleaved", "interleaved-1f1b"},
      {"LoopedBFS", "looped-bfs"},
      {"ScheduleLoopedBFS", "looped-bfs"},
      {"ZB-H1", "zb-h1"},
      {"zb_h2", "zb-h2"},
      {"ZBVZeroBubble", "zbv"},
      {"ScheduleZBVZeroBubble", "zbv"},
      {"DualPipeV", "dualpipev"},
      {"ScheduleDualPipeV", "dualpipev"},
      {"InterleavedZeroBubble", "interleaved-zb"},
      {"ScheduleInterleavedZeroBubble", "interleaved-zb"},
  }));
  INFO(typed);
  REQUIRE(ppsim::resolve_schedule(typed) == ppsim::find_schedule(name));
  const CliRun canonical = cli({"run", "-s", name, "-p", "4", "-m", "8", "--format", "json"});
  REQUIRE(canonical.status == 0);
  const CliRun run = cli({"run", "-s", typed, "-p", "4", "-m", "8", "--format", "json"});
  CHECK(run.status == 0);
  CHECK(run.out == canonical.out);  // "schedule" says the registry's name
  CHECK(nlohmann::json::parse(run.out)["schedule"] == name);

  // The same in a config file's list and a study's axis.
  TempDir dir("names");
  std::ofstream(dir.file("cfg.json")) << R"({"schedule": [")" << typed << R"(", "GPipe"], "p": 4, "m": 8})";
  const CliRun compare = cli({"compare", "-c", dir.file("cfg.json"), "--format", "json"});
  CHECK(compare.status == 0);
  CHECK(nlohmann::json::parse(compare.out)[0]["schedule"] == name);
  std::ofstream(dir.file("study.json")) << R"({"axes": {"schedule": [")" << typed << R"("], "p": [4], "m": [8]}})";
  CHECK(cli({"sweep", dir.file("study.json"), "-j", "1"}).status == 0);
}

TEST_CASE("A name that is none of them is refused with the registry's names", "[cli][names]") {
  for (const char* typed : {"ZeroBubbleV", "Schedule", "1f1bb", "interleaved-zbv"}) {
    INFO(typed);
    CHECK(ppsim::resolve_schedule(typed) == nullptr);
    const CliRun run = cli({"run", "-s", typed, "-p", "4", "-m", "8"});
    CHECK(run.status == 2);
    CHECK(run.err.find("--schedule: unknown schedule") != std::string::npos);
    CHECK(run.err.find("; known: gpipe, 1f1b,") != std::string::npos);
  }
}

TEST_CASE("A misspelled flag or command names the nearest one", "[cli][names]") {
  const auto [args, message] = GENERATE(table<std::vector<std::string>, std::string>({
      {{"run", "--schedul", "1f1b"}, "unknown flag '--schedul' for run (did you mean --schedule?)"},
      {{"run", "-s", "1f1b", "--activation-byte=1GiB"},
       "unknown flag '--activation-byte' for run (did you mean --activation-bytes?)"},
      {{"compare", "--formt", "json"}, "unknown flag '--formt' for compare (did you mean --format?)"},
      {{"sweep", "study.json", "--job", "2"}, "unknown flag '--job' for sweep (did you mean --jobs?)"},
      {{"run", "--zzzzzzzzzz"}, "unknown flag '--zzzzzzzzzz' for run"},
      {{"rn", "-p", "4"}, "unknown command 'rn' (did you mean run?); see ppsim --help"},
      {{"sweeps", "study.json"}, "unknown command 'sweeps' (did you mean sweep?); see ppsim --help"},
  }));
  const CliRun run = cli(args);
  CHECK(run.status == 2);
  CHECK(run.out.empty());
  CHECK(run.err == "ppsim: error: " + message + "\n");
}
