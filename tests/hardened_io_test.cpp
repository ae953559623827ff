// SPDX-License-Identifier: Apache-2.0
// Regression tests for hostile input and special output paths (issue 12): each names what it
// protects. The generated sweep over many hostile inputs is in hostile_input_test.cpp.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "schedules/schedule_file.hpp"
#include "study/common/errors.hpp"
#include "study/run/schedule_loader.hpp"
#include "study/sweep/sweep_study.hpp"
#include "tests/support/cli_run.hpp"

namespace fs = std::filesystem;
using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::read_whole;
using ppsim::test::TempDir;

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A refusal as the README promises it: exit 2, nothing on stdout, one short line on stderr.
void check_one_line_refusal(const CliRun& run) {
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.out.empty());
  CHECK(run.err.starts_with("ppsim: error: "));
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK(run.err.size() <= 16 + ppsim::kMaxErrorChars + 4);
}

}  // namespace

TEST_CASE("comma-separated string values in a config are read while their string is alive", "[config][regression]") {
  const TempDir dir("uaf-config");
  const std::string config = dir.file("cfg.json");
  write(config, R"({"p":4,"m":8,"forward":"1 ms, 1 ms, 1 ms, 1.5 ms","backward":"2 ms,2 ms,2 ms,3 ms",)"
                R"("activation-bytes":"1 GiB,1 GiB,1 GiB,2 GiB","static-bytes":"1 GiB,1 GiB,1 GiB,1 GiB"})");
  const CliRun from_file = cli({"run", "-c", config, "--format", "json"});
  const CliRun from_flags = cli({"run", "-p", "4", "-m", "8", "--forward", "1 ms, 1 ms, 1 ms, 1.5 ms", "--backward",
                                 "2 ms,2 ms,2 ms,3 ms", "--activation-bytes", "1 GiB,1 GiB,1 GiB,2 GiB",
                                 "--static-bytes", "1 GiB,1 GiB,1 GiB,1 GiB", "--format", "json"});
  REQUIRE(from_file.status == ppsim::kExitOk);
  REQUIRE(from_flags.status == ppsim::kExitOk);
  CHECK(from_file.out == from_flags.out);
  CHECK(from_file.out.find("\"forward\": [\n") != std::string::npos);
}

TEST_CASE("a long comma-separated string in a study's fixed settings sweeps like its list", "[sweep][regression]") {
  const TempDir dir("uaf-study");
  std::string forward;
  for (int s = 0; s < 64; ++s) forward += (s ? ", " : "") + std::string("1.000000000000 ms");
  write(dir.file("s.json"), R"({"fixed": {"p": 64, "forward": ")" + forward + R"("}, "axes": {"m": [64, 128]}})");
  const CliRun run = cli({"sweep", dir.file("s.json"), "-j", "2"});
  CHECK(run.status == ppsim::kExitOk);
  CHECK(run.err.empty());
}

TEST_CASE("a number beyond a double in any JSON input is bad input naming the file", "[config][regression]") {
  const TempDir dir("overflow");
  const std::string file =
      dir.file(GENERATE(as<std::string>{}, "cfg.json", "schedule.json", "study.json", "model.json", "hardware.json"));
  write(file, file.ends_with("schedule.json") ? R"({"actions": [["0F0"]], "microbatches": 1e309})" : R"({"p": 1e309})");
  std::vector<std::string> args;
  if (file.ends_with("cfg.json")) args = {"run", "-c", file};
  if (file.ends_with("schedule.json")) args = {"run", "--schedule-file", file};
  if (file.ends_with("study.json")) args = {"sweep", file};
  if (file.ends_with("model.json")) args = {"run", "--model", file};
  if (file.ends_with("hardware.json")) args = {"run", "--model", "llama3.1-8b", "--hardware", file};
  const CliRun run = cli(args);
  INFO(run.err);
  check_one_line_refusal(run);
  CHECK(run.err == "ppsim: error: " + file + ": malformed JSON: number overflow parsing '1e309'\n");
}

TEST_CASE("JSON nested 100,000 deep is refused at the depth limit, never recursed into", "[config][regression]") {
  const TempDir dir("deep");
  const std::string file =
      dir.file(GENERATE(as<std::string>{}, "cfg.json", "schedule.json", "study.json", "model.json"));
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  write(file, R"({"p": )" + deep + "}");
  std::vector<std::string> args;
  if (file.ends_with("cfg.json")) args = {"run", "-c", file};
  if (file.ends_with("schedule.json")) args = {"run", "--schedule-file", file};
  if (file.ends_with("study.json")) args = {"sweep", file};
  if (file.ends_with("model.json")) args = {"run", "--model", file};
  const CliRun run = cli(args);
  check_one_line_refusal(run);
  CHECK(run.err == "ppsim: error: " + file + ": malformed JSON: nested deeper than 64 arrays and objects at byte 70\n");
}

TEST_CASE("an error echoes at most 80 characters of a giant value and suggests nothing for a giant key",
          "[config][regression]") {
  const TempDir dir("giant");
  const std::string giant(10'000'000, 'x');
  write(dir.file("key.json"), "{\"" + giant + "\": 1}");
  const CliRun key = cli({"run", "-c", dir.file("key.json")});
  check_one_line_refusal(key);
  CHECK(key.err == "ppsim: error: " + dir.file("key.json") + ": $." + std::string(80, 'x') +
                       "...: unknown key (see ppsim run --help for the keys)\n");
  const CliRun value = cli({"run", "-p", giant});
  check_one_line_refusal(value);
  CHECK(value.err == "ppsim: error: -p: must be a positive integer, got '" + std::string(80, 'x') + "...'\n");
  const CliRun control = cli({"run", "-s", "1f1b\n\x01zz"});
  check_one_line_refusal(control);
  CHECK(control.err.find("\\x0a\\x01zz") != std::string::npos);
}

TEST_CASE("an output path that is a device is written in place, never replaced by a file", "[cli][regression]") {
  const CliRun run = cli({"run", "-p", "2", "-m", "2", "--svg", "/dev/null"});
  CHECK(run.status == ppsim::kExitOk);
  struct stat info {};
  REQUIRE(::stat("/dev/null", &info) == 0);
  CHECK(S_ISCHR(info.st_mode));
  const CliRun full = cli({"run", "-p", "2", "-m", "2", "--svg", "/dev/full"});
  check_one_line_refusal(full);
  CHECK(full.err == "ppsim: error: --svg: cannot write /dev/full: No space left on device\n");
  REQUIRE(::stat("/dev/full", &info) == 0);
  CHECK(S_ISCHR(info.st_mode));
}

TEST_CASE("an output path that is a FIFO is written into it", "[cli][regression]") {
  const TempDir dir("fifo");
  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = read_whole(fifo); });
  const CliRun run = cli({"export", "-s", "1f1b", "-p", "2", "-m", "3", "-o", fifo});
  reader.join();
  CHECK(run.status == ppsim::kExitOk);
  CHECK(received == "0F0,0F1,0B0,0F2,0B1,0B2\r\n1F0,1B0,1F1,1B1,1F2,1B2\r\n");
  struct stat info {};
  REQUIRE(::stat(fifo.c_str(), &info) == 0);
  CHECK(S_ISFIFO(info.st_mode));
}

TEST_CASE("an output path that is a symlink replaces its target and keeps the link", "[cli][regression]") {
  const TempDir dir("symlink");
  write(dir.file("real.csv"), "old");
  fs::create_symlink("real.csv", dir.path / "link.csv");
  const CliRun run = cli({"export", "-s", "1f1b", "-p", "2", "-m", "3", "-o", dir.file("link.csv")});
  CHECK(run.status == ppsim::kExitOk);
  CHECK(fs::is_symlink(dir.path / "link.csv"));
  CHECK(read_whole(dir.path / "real.csv") == "0F0,0F1,0B0,0F2,0B1,0B2\r\n1F0,1B0,1F1,1B1,1F2,1B2\r\n");
}

TEST_CASE("an output path that is a dangling symlink creates its target and keeps the link", "[cli][regression]") {
  const TempDir dir("dangling");
  fs::create_symlink("made.csv", dir.path / "link.csv");
  const CliRun run = cli({"export", "-s", "gpipe", "-p", "2", "-m", "2", "-o", dir.file("link.csv")});
  CHECK(run.status == ppsim::kExitOk);
  CHECK(fs::is_symlink(dir.path / "link.csv"));
  CHECK(read_whole(dir.path / "made.csv") == "0F0,0F1,0B0,0B1\r\n1F0,1F1,1B0,1B1\r\n");
}

TEST_CASE("temporary output names are unique: a leftover of the old fixed name does not block a write",
          "[cli][regression]") {
  const TempDir dir("unique-tmp");
  fs::create_directories(dir.path / "out.csv.ppsim-tmp");
  const CliRun run = cli({"export", "-s", "gpipe", "-p", "2", "-m", "2", "-o", dir.file("out.csv")});
  CHECK(run.status == ppsim::kExitOk);
  CHECK(read_whole(dir.path / "out.csv") == "0F0,0F1,0B0,0B1\r\n1F0,1F1,1B0,1B1\r\n");
  // Written files get the usual mode, not mkstemp's 0600.
  struct stat info {};
  REQUIRE(::stat(dir.file("out.csv").c_str(), &info) == 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK((info.st_mode & 0777) == (0666 & ~mask));
}

TEST_CASE("schedule files above the size limit are refused before they are read", "[schedule-file][regression]") {
  const TempDir dir("big-schedule");
  const auto [name, limit] = GENERATE(table<std::string, std::size_t>(
      {{"big.csv", ppsim::kMaxCsvScheduleFileBytes}, {"big.json", ppsim::kMaxJsonScheduleFileBytes}}));
  const std::string path = dir.file(name);
  { std::ofstream(path) << "0F0"; }
  fs::resize_file(path, limit + 1);  // sparse: costs no disk
  const CliRun run = cli({"run", "--schedule-file", path});
  check_one_line_refusal(run);
  CHECK(run.err == "ppsim: error: " + path + ": the schedule file is too large (" + std::to_string(limit + 1) +
                       " bytes; at most " + std::to_string(limit) + ")\n");
}

TEST_CASE("a schedule file with more cells than the op limit is refused without storing them",
          "[schedule-file][regression]") {
  const TempDir dir("many-rows");
  const std::string path = dir.file("newlines.csv");
  write(path, std::string(ppsim::kMaxScheduleFileCells + 1, '\n'));
  const CliRun run = cli({"run", "--schedule-file", path});
  check_one_line_refusal(run);
  CHECK(run.err == "ppsim: error: " + path + ": the schedule file holds more than 50000000 cells and rows, above " +
                       "the op limit of one run\n");
}

TEST_CASE("export of a deadlocking schedule file exits 3 with the grid, like run", "[cli][regression]") {
  const std::string file = std::string(PPSIM_SOURCE_DIR) + "/tests/data/schedule_files/deadlock_p2_m2.csv";
  const CliRun run = cli({"export", "--schedule-file", file});
  const CliRun replay = cli({"run", "--schedule-file", file});
  CHECK(run.status == ppsim::kExitBadSchedule);
  CHECK(run.out.empty());
  CHECK(run.err == replay.err);
  CHECK(run.err.find("<-- here") != std::string::npos);
}

TEST_CASE("a study above the documented point count is refused before it runs", "[sweep][regression]") {
  const TempDir dir("huge-study");
  write(dir.file("s.json"),
        R"({"axes": {"p": {"from": 1, "to": 1000, "step": 1}, "m": {"from": 1, "to": 10000, "step": 1}}})");
  const CliRun run = cli({"sweep", dir.file("s.json")});
  check_one_line_refusal(run);
  CHECK(run.err == "ppsim: error: " + dir.file("s.json") + ": $.axes: has more than " +
                       std::to_string(ppsim::kMaxStudyPoints) + " points; narrow a range\n");
}

TEST_CASE("sweep with --progress prints progress lines when stderr is not a terminal", "[sweep][regression]") {
  const TempDir dir("progress");
  write(dir.file("s.json"), R"({"axes": {"schedule": ["gpipe", "1f1b"], "m": {"from": 1, "to": 50, "step": 1}}})");
  const CliRun quiet = cli({"sweep", dir.file("s.json"), "-j", "1"});
  CHECK(quiet.err.empty());
  const CliRun run = cli({"sweep", dir.file("s.json"), "-j", "1", "--progress"});
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(run.out == quiet.out);
  // Lines at each tenth passed when the bar was polled (every 200 ms), and always the closing one.
  std::istringstream lines(run.err);
  std::vector<std::string> seen;
  for (std::string line; std::getline(lines, line);) seen.push_back(line);
  REQUIRE_FALSE(seen.empty());
  CHECK(seen.size() <= 10);
  for (const std::string& line : seen) CHECK(line.starts_with("ppsim sweep: "));
  CHECK(seen.back().starts_with("ppsim sweep: 100 points in "));
}

TEST_CASE("a JSON schedule's declared counts beyond an int are refused, not converted", "[schedule-file][regression]") {
  // Found by fuzz_schedule_json: nlohmann's get<int>() of 6.7e22 is undefined behaviour.
  const TempDir dir("declared-counts");
  const auto [document, expected] = GENERATE(table<std::string, std::string>({
      {R"({"microbatches": 66666660000000000033843, "actions": [["0F0", "0B0"]]})",
       "$.microbatches: must be a whole number from 1 to 1000000000, got number 6.666666e+22"},
      {R"({"microbatches": 2.5, "actions": [["0F0", "0B0"]]})",
       "$.microbatches: must be a whole number from 1 to 1000000000, got number 2.5"},
      {R"({"stage_device": [0, 1e29], "actions": [["0F0", "0B0"]]})",
       "$.stage_device[1]: must be a whole number from 0 to 1000000000, got number 1e+29"},
      {R"({"stage_device": {"0": 0}, "actions": [["0F0", "0B0"]]})",
       "$.stage_device: must be a list of device numbers, got object {\"0\":0}"},
  }));
  const std::string path = dir.file("s.json");
  write(path, document);
  const CliRun run = cli({"run", "--schedule-file", path});
  check_one_line_refusal(run);
  CHECK(run.err == "ppsim: error: " + path + ": " + expected + "\n");
}

TEST_CASE("absurd times and bandwidths are refused before they overflow the clock", "[config][regression]") {
  // F = B = 1e308 once summed to infinity, which the engine could only report as a deadlock.
  const auto [flag, value, expected] = GENERATE(table<std::string, std::string, std::string>({
      {"--forward", "1e308", "--forward: is absurdly large (1e+308; the limit is 1e+15)"},
      {"--latency", "1e16 s", "--latency: is absurdly large (1e+16; the limit is 1e+15)"},
      {"--bandwidth", "1e-320", "--bandwidth: is absurdly small (9.99989e-321; the limit is 0.001)"},
  }));
  const CliRun run = cli({"run", "-p", "2", "-m", "2", flag, value});
  check_one_line_refusal(run);
  CHECK(run.err == "ppsim: error: " + expected + "\n");
}

TEST_CASE("a hardware file whose peak makes an op take forever is bad input, not a deadlock", "[model][regression]") {
  const TempDir dir("slow-hardware");
  std::string hardware = read_whole(fs::path(PPSIM_SOURCE_DIR) / "configs/hardware/h100-sxm5-80gb.json");
  const std::string peak = "\"bf16\": 9.894e+14";
  REQUIRE(hardware.find(peak) != std::string::npos);
  hardware.replace(hardware.find(peak), peak.size(), "\"bf16\": 1e-300");
  write(dir.file("hw.json"), hardware);
  const CliRun run = cli({"run", "--model", "llama3.1-8b", "--hardware", dir.file("hw.json"), "-p", "2", "-m", "2"});
  check_one_line_refusal(run);
  CHECK(run.err.starts_with("ppsim: error: --hardware: stage 0's F takes "));
  CHECK(run.err.ends_with(", beyond the limit of 1e+15 (check the model's and the hardware's numbers)\n"));
}

TEST_CASE("a path that is not UTF-8 is written into JSON output as U+FFFD, not an internal error",
          "[cli][regression]") {
  const TempDir dir("not-utf8");
  const std::string model = dir.file("m\xff.json");
  fs::copy_file(fs::path(PPSIM_SOURCE_DIR) / "configs/models/llama3.1-8b.json", model);
  const std::string trace = dir.file("t.json");
  const CliRun run = cli({"run", "--model", model, "-p", "2", "-m", "2", "--format", "json", "--trace", trace});
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(nlohmann::json::accept(run.out));
  CHECK(run.out.find("m\xef\xbf\xbd.json") != std::string::npos);
  CHECK(nlohmann::json::accept(read_whole(trace)));
}
