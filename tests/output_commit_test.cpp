// SPDX-License-Identifier: Apache-2.0
// Output files and the inputs around them (issue 31, items 3, 9, 10 and 14): a streamed --trace
// interrupted leaves no temporary, two outputs to one path are refused, a long name or a symlink
// loop as target, a TMPDIR that cannot be used, a custom schedule's baseline that check re-runs,
// contradictions refused, and error lines that stay within 400 characters with no note before them.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "study/common/errors.hpp"
#include "study/common/output_file.hpp"
#include "support/cli_run.hpp"

namespace fs = std::filesystem;
using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::read_whole;
using ppsim::test::TempDir;

namespace {

const std::string kScheduleFile = std::string(PPSIM_SOURCE_DIR) + "/tests/data/schedule_files/idle_cells_p2_m2.csv";

// The files in `dir` whose names hold ".ppsim-" or "ppsim-scratch" or "ppsim-spool": temporaries.
std::vector<std::string> temporaries_in(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".ppsim-") != std::string::npos || name.find("ppsim-s") == 0) found.push_back(name);
  }
  return found;
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> before;
  ScopedEnv(std::string key, const std::string& value) : name(std::move(key)) {
    if (const char* old = std::getenv(name.c_str())) before = old;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (before) {
      ::setenv(name.c_str(), before->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
};

}  // namespace

TEST_CASE("a streamed trace interrupted by SIGTERM leaves neither its temporary nor a partial file", "[outputs]") {
  TempDir dir("sigterm-trace");
  const std::string trace = dir.file("t.json");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The executable's own set-up, then a run long enough to be interrupted while its trace streams.
    ppsim::remove_temporaries_on_signals();
    std::ostringstream out, err;
    ppsim::run_cli({"run", "-s", "1f1b", "-p", "16", "-m", "50000", "--trace", trace}, out, err);
    ::_exit(0);
  }
  // Wait for the temporary to exist (the run has started streaming), then interrupt it.
  bool streaming = false;
  for (int i = 0; i < 2000 && !streaming; ++i) {
    streaming = !temporaries_in(dir.path).empty();
    if (!streaming) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(child, SIGTERM);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(streaming);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(temporaries_in(dir.path).empty());
  CHECK_FALSE(fs::exists(trace));
}

TEST_CASE("two outputs of one run to the same file are refused before anything is written", "[outputs]") {
  TempDir dir("same-target");
  const auto [first, second] = GENERATE(table<std::string, std::string>({
      {"--svg", "--html"}, {"--svg", "--trace"}, {"--html", "--trace"}}));
  const std::string path = dir.file("picture");
  const CliRun run = cli({"run", "-s", "1f1b", "-p", "2", "-m", "2", first, path, second, dir.file("./picture")});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err.find(" is also " + first + "'s file; give each output its own") != std::string::npos);
  CHECK(run.out.empty());
  CHECK_FALSE(fs::exists(path));
  // A sweep's points and its page too.
  std::ofstream(dir.file("s.json")) << R"({"fixed": {"forward": 1, "backward": 2, "m": 4}, "axes": {"p": [2, 3]}})";
  const CliRun sweep = cli({"sweep", dir.file("s.json"), "-o", dir.file("x.csv"), "--summary", dir.file("x.csv")});
  CHECK(sweep.status == ppsim::kExitBadInput);
  CHECK(sweep.err.find("--summary: ") != std::string::npos);
}

TEST_CASE("an output name of 245 to 255 bytes is written, its temporary named to fit", "[outputs]") {
  TempDir dir("long-name");
  const std::size_t length = GENERATE(245u, 250u, 255u);
  const std::string path = dir.file(std::string(length - 4, 'n') + ".svg");
  const CliRun run = cli({"run", "-s", "1f1b", "-p", "2", "-m", "2", "--svg", path});
  CHECK(run.status == ppsim::kExitOk);
  CHECK(fs::file_size(path) > 0);
  CHECK(temporaries_in(dir.path).empty());
}

TEST_CASE("a symlink loop as target is refused and stays a pair of links", "[outputs]") {
  TempDir dir("symlink-loop");
  fs::create_symlink("b.svg", dir.file("a.svg"));
  fs::create_symlink("a.svg", dir.file("b.svg"));
  const CliRun run = cli({"run", "-s", "1f1b", "-p", "2", "-m", "2", "--svg", dir.file("a.svg")});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err.find("--svg: cannot write ") != std::string::npos);
  CHECK(run.err.find(": a loop of symbolic links") != std::string::npos);
  CHECK(fs::is_symlink(dir.file("a.svg")));
  CHECK(fs::is_symlink(dir.file("b.svg")));
}

TEST_CASE("a TMPDIR where no temporary can be made is named in one line, not an internal error", "[outputs]") {
  // /proc is a directory that not even root can create files in: a read-only or full TMPDIR alike.
  const ScopedEnv tmpdir("TMPDIR", "/proc");
  const CliRun run = cli({"run", "-s", "1f1b", "-p", "2", "-m", "2", "--trace", "/dev/null"});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err.starts_with("ppsim: error: TMPDIR: cannot use /proc for a temporary file: "));
  CHECK(run.err.find("internal error") == std::string::npos);
}

TEST_CASE("check re-runs the baseline of a custom schedule, finding its file beside the baseline", "[outputs][check]") {
  TempDir dir("custom-baseline");
  fs::copy_file(kScheduleFile, dir.file("f.csv"));
  const CliRun run = cli({"run", "--schedule-file", dir.file("f.csv"), "--format", "json"});
  REQUIRE(run.status == ppsim::kExitOk);
  nlohmann::ordered_json result = nlohmann::ordered_json::parse(run.out);
  CHECK(result["scenario"]["schedule-file"] == dir.file("f.csv"));
  std::ofstream(dir.file("b.json")) << result.dump();
  const CliRun check = cli({"check", dir.file("b.json")});
  CHECK(check.err.empty());
  CHECK(check.status == ppsim::kExitOk);
  // Named relative to where it ran: found beside the baseline, wherever check runs.
  result["scenario"]["schedule-file"] = "f.csv";
  std::ofstream(dir.file("relative.json")) << result.dump();
  CHECK(cli({"check", dir.file("relative.json")}).status == ppsim::kExitOk);
  // A model file that is nowhere is named by the baseline's JSON path.
  result["scenario"]["model"] = "mymodel.json";
  std::ofstream(dir.file("missing.json")) << result.dump();
  const CliRun missing = cli({"check", dir.file("missing.json")});
  CHECK(missing.status == ppsim::kExitBadInput);
  CHECK(missing.err == "ppsim: error: " + dir.file("missing.json") + ": $.scenario.model: cannot read mymodel.json\n");
}

TEST_CASE("check refuses an empty tolerance instead of reading it as 0", "[outputs][check]") {
  TempDir dir("empty-rtol");
  const CliRun run = cli({"run", "-s", "1f1b", "-p", "2", "-m", "2", "--format", "json"});
  std::ofstream(dir.file("b.json")) << run.out;
  const std::string flag = GENERATE(std::string("--rtol"), std::string("--atol"));
  const CliRun check = cli({"check", dir.file("b.json"), flag, ""});
  CHECK(check.status == ppsim::kExitBadInput);
  CHECK(check.err.find(flag) != std::string::npos);
  CHECK(check.err.find("must be a number, got ''") != std::string::npos);
}

TEST_CASE("a registry schedule beside a schedule file is refused, on the command line and in a config", "[outputs]") {
  TempDir dir("schedule-contradiction");
  const CliRun flags = cli({"run", "-s", "1f1b", "--schedule-file", kScheduleFile});
  CHECK(flags.status == ppsim::kExitBadInput);
  CHECK(flags.err.find("--schedule-file: ") != std::string::npos);
  CHECK(flags.err.find(" runs as schedule custom, but --schedule names 1f1b; give -s custom, or only one of the two") !=
        std::string::npos);
  std::ofstream(dir.file("c.json")) << nlohmann::json{{"schedule", "1f1b"}, {"schedule-file", kScheduleFile}}.dump();
  const CliRun config = cli({"run", "-c", dir.file("c.json")});
  CHECK(config.status == ppsim::kExitBadInput);
  CHECK(config.err.find("runs as schedule custom, but") != std::string::npos);
  // -s custom with the file, and compare with custom among others, still run.
  CHECK(cli({"run", "-s", "custom", "--schedule-file", kScheduleFile}).status == ppsim::kExitOk);
  // A study that sweeps schedules over a fixed schedule file.
  std::ofstream(dir.file("s.json")) << nlohmann::json{{"fixed", {{"schedule-file", kScheduleFile}}},
                                                      {"axes", {{"schedule", {"custom", "1f1b"}}}}}.dump();
  const CliRun study = cli({"sweep", dir.file("s.json")});
  CHECK(study.status == ppsim::kExitBadInput);
  CHECK(study.err.find("a schedule file cannot sweep schedules") != std::string::npos);
}

TEST_CASE("an error line is at most 400 characters, escapes and prefix included, with no note before it", "[outputs]") {
  for (const std::string& message : {std::string(1000, 'x'), std::string(500, '\n'), std::string(300, 'y') + "\x01\x02"}) {
    const std::string line = "ppsim-calibrate: error: " + ppsim::one_line(message);
    CHECK(line.size() <= ppsim::kMaxErrorChars);
    CHECK(line.find('\n') == std::string::npos);
  }
  // A family name makes a note; a bad -p then ends the run with its one line alone.
  const CliRun run = cli({"run", "--model", "llama3.1-8b", "--hardware", "h100", "-p", "0"});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK(run.err.find("note") == std::string::npos);
  // The note still comes with a run that succeeds.
  CHECK(cli({"run", "--model", "llama3.1-8b", "--hardware", "h100", "-p", "2", "-m", "4"}).err.find("note") !=
        std::string::npos);
}
