// SPDX-License-Identifier: Apache-2.0
// ppsim merge against damaged, incomplete and foreign shard files (issue 31, item 1): every shard
// file records its study, its shard I/N, its point count and a checksum, and merge checks all of it
// and every row's shape before it writes anything. Also: a sweep asked for more threads than the
// machine has (item 4).
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <thread>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "study/errors.hpp"
#include "study/sweep_merge.hpp"
#include "study/sweep_runner.hpp"
#include "study/sweep_shard_record.hpp"
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
  refused(dir, merge(dir, files), "shard-1.csv: holds 1 rows where its record says shard 1/2 has 2");
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
