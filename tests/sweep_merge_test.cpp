// SPDX-License-Identifier: Apache-2.0
// ppsim merge against damaged, incomplete and foreign shard files (issue 31, item 1): every shard
// file records its study, its shard I/N, its point count and a checksum, and merge checks all of it
// and every row's shape before it writes anything. Also: a sweep asked for more threads than the
// machine has (item 4).
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <thread>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <system_error>
#include <sstream>
#include <string>
#include <vector>

#include "study/common/errors.hpp"
#include "study/sweep/sweep_merge.hpp"
#include "study/sweep/sweep_runner.hpp"
#include "study/sweep/sweep_shard_record.hpp"
#include "study/sweep/sweep_study.hpp"
#include "support/cli_run.hpp"

namespace fs = std::filesystem;

namespace {

using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::read_whole;
using ppsim::test::TempDir;

const char* kFourPoints = R"({"fixed": {"forward": 1, "backward": 2, "m": 8}, "axes": {"p": [2, 3, 4, 5]}})";

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.file(name), std::ios::binary) << text;
  return dir.file(name);
}

// The study's four points sharded `count` ways, as shard-I.EXT files; returns their paths.
std::vector<std::string> shards(const TempDir& dir, int count, const std::string& extension = ".csv",
                                const char* study_text = kFourPoints) {
  const std::string study = write(dir, "study.json", study_text);
  std::vector<std::string> files;
  for (int i = 0; i < count; ++i) {
    const std::string file = dir.file("shard-" + std::to_string(i) + extension);
    REQUIRE(cli({"sweep", study, "--shard", std::to_string(i) + "/" + std::to_string(count), "-o", file}).status ==
            ppsim::kExitOk);
    files.push_back(file);
  }
  return files;
}

CliRun merge(const TempDir& dir, const std::vector<std::string>& files, const std::string& output = "merged.csv") {
  std::vector<std::string> args = {"merge", "-o", dir.file(output)};
  args.insert(args.end(), files.begin(), files.end());
  return cli(args);
}

// A refusal: exit 2, one line naming what is wrong, and no merged file.
void refused(const TempDir& dir, const CliRun& run, const std::string& expected) {
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err.find(expected) != std::string::npos);
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(dir.file("merged.csv")));
}

}  // namespace

TEST_CASE("a shard file starts with its record: study, shard, points, total and checksum", "[merge]") {
  TempDir dir("merge_record");
  const std::vector<std::string> files = shards(dir, 4);
  const std::string text = read_whole(files[1]);
  const std::string first = text.substr(0, text.find('\n'));
  const ppsim::ShardRecord record = ppsim::parse_shard_record(first, ppsim::SweepFormat::kCsv, "shard-1.csv");
  CHECK(record.index == 1);
  CHECK(record.count == 4);
  CHECK(record.points == 1);
  CHECK(record.total == 4);
  CHECK(record.checksum == ppsim::content_checksum(text.substr(first.size() + 1)));
  CHECK(ppsim::shard_point_count(10, 3, 4) == 2);  // points 3 and 7
  CHECK(ppsim::shard_point_count(2, 3, 4) == 0);
  // A split into more shards than any study has points would size merge's tables by it.
  const std::string huge = "#ppsim-shard study=0123456789abcdef shard=0/2000000 points=1 total=4 checksum=0123456789abcdef";
  CHECK_THROWS_WITH(ppsim::parse_shard_record(huge, ppsim::SweepFormat::kCsv, "f.csv: line 1"),
                    "f.csv: line 1: the shard record is damaged (shard splits into more shards than a study has "
                    "points); rerun that shard");
  CHECK(cli({"sweep", dir.file("study.json"), "--shard", "0/2000000"}).err ==
        "ppsim: error: --shard: at most 1000000 shards (a study's most points), got '0/2000000'\n");
}

TEST_CASE("merge refuses when the last shard of a study is left out", "[merge]") {
  TempDir dir("merge_tail");
  std::vector<std::string> files = shards(dir, 4);
  files.pop_back();  // shards 0-2 hold points 0-2: nothing but the record says a point 3 exists
  refused(dir, merge(dir, files), "merge: shard 3/4 is missing; give every shard's file");
}

TEST_CASE("merge refuses a shard file that lost its last row", "[merge]") {
  TempDir dir("merge_lost_row");
  const std::vector<std::string> files = shards(dir, 2);
  std::string text = read_whole(files[1]);
  text.erase(text.rfind('\n', text.size() - 2) + 1);  // head -n -1
  write(dir, "shard-1.csv", text);
  refused(dir, merge(dir, files), "shard-1.csv: holds 1 row where its record says shard 1/2 has 2");
}

TEST_CASE("merge refuses a row with a missing or an extra cell", "[merge]") {
  TempDir dir("merge_cells");
  const std::vector<std::string> files = shards(dir, 2);
  const std::string text = read_whole(files[0]);
  const std::size_t last_row = text.rfind('\n', text.size() - 2) + 1;
  const std::size_t comma = text.find(',', last_row);
  const auto [damaged, message] = GENERATE_COPY(table<std::string, std::string>({
      {text.substr(0, comma) + text.substr(text.find(',', comma + 1)), "cells where the header has"},
      {text.substr(0, comma) + ",extra" + text.substr(comma), "cells where the header has"},
  }));
  write(dir, "shard-0.csv", damaged);
  refused(dir, merge(dir, files), "shard-0.csv: line 4: ");
  refused(dir, merge(dir, files), message);
}

TEST_CASE("merge refuses a shard file with one flipped byte", "[merge]") {
  TempDir dir("merge_flip");
  const std::string extension = GENERATE(std::string(".csv"), std::string(".jsonl"));
  const std::vector<std::string> files = shards(dir, 2, extension);
  std::string text = read_whole(files[1]);
  const std::size_t at = text.find("bubble") != std::string::npos ? text.rfind('.') : text.size() - 3;
  text[at - 1] = text[at - 1] == '1' ? '2' : '1';  // a digit of a figure: the shape stays right
  write(dir, "shard-1" + extension, text);
  refused(dir, merge(dir, files, "merged" + extension), "shard-1" + extension + ": its bytes do not match its record's checksum");
}

TEST_CASE("merge refuses shards of different studies and files written without --shard", "[merge]") {
  TempDir dir("merge_foreign");
  const std::vector<std::string> files = shards(dir, 2);
  TempDir other("merge_foreign_other");
  const std::vector<std::string> foreign =
      shards(other, 2, ".csv", R"({"fixed": {"forward": 1, "backward": 3, "m": 8}, "axes": {"p": [2, 3, 4, 5]}})");
  refused(dir, merge(dir, {files[0], foreign[1]}), "is from another study than");
  REQUIRE(cli({"sweep", dir.file("study.json"), "-o", dir.file("all.csv")}).status == ppsim::kExitOk);
  refused(dir, merge(dir, {dir.file("all.csv")}), "all.csv: line 1: not a shard's file");
  TempDir split("merge_foreign_split");
  const std::vector<std::string> three = shards(split, 3);
  refused(dir, merge(dir, {files[0], three[1], three[2]}), "merge the shards of one split");
}

TEST_CASE("merge refuses a damaged shard record", "[merge]") {
  TempDir dir("merge_bad_record");
  const std::vector<std::string> files = shards(dir, 2);
  const std::string text = read_whole(files[0]);
  const auto [from, to] = GENERATE(table<std::string, std::string>({
      {"shard=0/2", "shard=2/2"},
      {"points=2", "points=3"},
      {"total=4", "total=x"},
      {" checksum=", " sum="},
  }));
  std::string damaged = text;
  damaged.replace(damaged.find(from), from.size(), to);
  write(dir, "shard-0.csv", damaged);
  refused(dir, merge(dir, files), "shard-0.csv: line 1: the shard record is damaged");
}

TEST_CASE("merge refuses inputs that are not regular files instead of reading them forever", "[merge]") {
  TempDir dir("merge_not_regular");
  const std::vector<std::string> files = shards(dir, 2);
  const std::string fifo = dir.file("fifo.csv");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  refused(dir, merge(dir, {files[0], fifo}), "fifo.csv: cannot read the shard file (not a regular file)");
  // /dev/zero and /dev/urandom by a name merge accepts: a link ending in .csv.
  fs::create_symlink("/dev/zero", dir.file("zero.csv"));
  refused(dir, merge(dir, {files[0], dir.file("zero.csv")}), "zero.csv: cannot read the shard file (not a regular file)");
}

TEST_CASE("the shards of every split merge to the unsharded file, JSON Lines too", "[merge]") {
  TempDir dir("merge_splits");
  const std::string extension = GENERATE(std::string(".csv"), std::string(".jsonl"));
  const int count = GENERATE(1, 2, 4, 6);  // 6 > 4 points: two shards hold none
  const std::vector<std::string> files = shards(dir, count, extension);
  REQUIRE(cli({"sweep", dir.file("study.json"), "-o", dir.file("all" + extension)}).status == ppsim::kExitOk);
  const CliRun run = merge(dir, std::vector<std::string>(files.rbegin(), files.rend()), "merged" + extension);
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(read_whole(dir.file("merged" + extension)) == read_whole(dir.file("all" + extension)));
}

TEST_CASE("a sweep never starts more threads than points or cores, and -j 4096 gives the same bytes", "[merge]") {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  CHECK(ppsim::worker_threads(600, 1'000'000) == cores);
  CHECK(ppsim::worker_threads(40000, 3) == std::min(3u, cores));
  CHECK(ppsim::worker_threads(0, 10) == 1);
  TempDir dir("merge_threads");
  const std::string study = write(dir, "study.json", kFourPoints);
  REQUIRE(cli({"sweep", study, "-j", "1", "-o", dir.file("one.csv")}).status == ppsim::kExitOk);
  REQUIRE(cli({"sweep", study, "-j", "4096", "-o", dir.file("many.csv")}).status == ppsim::kExitOk);
  CHECK(read_whole(dir.file("one.csv")) == read_whole(dir.file("many.csv")));
}

// AddressSanitizer reserves terabytes of address space: an address-space limit cannot be tested
// under it, so these run in the release and debug builds.
#if defined(__SANITIZE_ADDRESS__)
#define PPSIM_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PPSIM_UNDER_ASAN 1
#endif
#endif

#ifndef PPSIM_UNDER_ASAN
namespace {

// The address space this process maps now, in bytes (VmSize in /proc/self/status).
rlim_t mapped_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmSize:")) return static_cast<rlim_t>(std::stoull(line.substr(7))) * 1024;
  }
  return 0;
}

// `ppsim args...` in a child whose address space is limited to what it maps now plus `headroom`:
// its exit status, or 128 + the signal that ended it.
int run_with_address_limit(const std::vector<std::string>& args, rlim_t headroom) {
  const pid_t child = ::fork();
  if (child == 0) {
    const rlim_t limit = mapped_bytes() + headroom;
    const rlimit bound{limit, limit};
    if (::setrlimit(RLIMIT_AS, &bound) != 0) ::_exit(100);
    std::ostringstream out, err;
    ::_exit(ppsim::run_cli(args, out, err));
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("a sweep whose threads the system refuses runs its points on fewer threads, or on the caller's", "[merge]") {
  const ppsim::Study study = ppsim::parse_study(nlohmann::ordered_json::parse(kFourPoints), "study.json");
  ppsim::SweepOptions plain;
  const std::vector<ppsim::PointResult> expected = ppsim::run_sweep(study, plain);
  const int allowed = GENERATE(0, 1);
  ppsim::SweepOptions refusing;
  refusing.threads = 4;
  int started = 0;
  refusing.start_thread = [&](std::function<void()> work) {
    if (started >= allowed) throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
    ++started;
    return std::thread(std::move(work));
  };
  bool progress_ended = false;
  refusing.progress = [&](std::size_t done, std::size_t total) { progress_ended = done == total; };
  const std::vector<ppsim::PointResult> results = ppsim::run_sweep(study, refusing);
  REQUIRE(results.size() == expected.size());
  for (std::size_t i = 0; i < results.size(); ++i) CHECK(results[i].figures.makespan == expected[i].figures.makespan);
  CHECK(progress_ended);
}

TEST_CASE("a sweep with -j 600 under an address-space limit runs instead of aborting", "[merge]") {
  TempDir dir("merge_address_limit");
  const std::string study = write(dir, "study.json", kFourPoints);
  // 4 GiB beyond what the test maps: once 600 threads' stacks would not fit.
  CHECK(run_with_address_limit({"sweep", study, "-j", "600", "-o", dir.file("limited.csv")}, rlim_t{4} << 30) == 0);
  REQUIRE(cli({"sweep", study, "-o", dir.file("free.csv")}).status == ppsim::kExitOk);
  CHECK(read_whole(dir.file("limited.csv")) == read_whole(dir.file("free.csv")));
}
#endif
