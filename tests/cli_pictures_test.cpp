// SPDX-License-Identifier: Apache-2.0
// The picture options of the command line, driven in-process: --svg, --html and --trace write
// their files atomically, leave stdout as it was, and name the flag when a file cannot be written.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "study/common/errors.hpp"
#include "study/output/pictures.hpp"
#include "support/cli_run.hpp"
#include "support/xml_check.hpp"
#include "tools/ppsim/cli.hpp"

namespace {

using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::TempDir;

namespace fs = std::filesystem;
using ppsim::test::count_of;
using ppsim::test::xml_error;

std::string read(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("run --svg --html --trace writes all three files and leaves stdout as without them", "[cli][pictures]") {
  const TempDir dir("cli-pictures");
  const std::vector<std::string> base = {"run", "-s", "1f1b", "-p", "4", "-m", "8"};
  std::vector<std::string> args = base;
  for (const std::string flag : {"--svg", "--html", "--trace"}) {
    args.push_back(flag);
    args.push_back(dir.file("out" + flag.substr(2)));
  }
  const CliRun with = cli(args);
  const CliRun without = cli(base);
  REQUIRE(with.status == ppsim::kExitOk);
  CHECK(with.err.empty());
  CHECK(with.out == without.out);

  const std::string svg = read(dir.file("outsvg"));
  const std::string html = read(dir.file("outhtml"));
  const std::string trace = read(dir.file("outtrace"));
  CHECK_FALSE(xml_error(svg));
  CHECK_FALSE(xml_error(html));
  CHECK(count_of(svg, "<rect class=\"op ") == 64);
  CHECK(count_of(html, "<g class=\"lane\"") == 4);
  const auto json = nlohmann::json::parse(trace);
  CHECK(json.at("otherData").at("schedules").at(0).at("schedule") == "1f1b");
  // Nothing is left beside them.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path)) ++files;
  CHECK(files == 3);
}

TEST_CASE("compare --html writes each schedule's closed form beside its simulated bubble", "[cli][pictures]") {
  const TempDir dir("cli-html");
  const CliRun run = cli({"compare", "-s", "gpipe,1f1b,zb-h1", "--html", dir.file("report.html")});
  REQUIRE(run.status == ppsim::kExitOk);
  const std::string html = read(dir.file("report.html"));
  REQUIRE_FALSE(xml_error(html));
  CHECK(count_of(html, "<svg class=\"ppsim-figure\"") == 3);
  CHECK(html.find("closed form: bubble_ratio (p-1)/(m+p-1) = 0.272727 (agrees)") != std::string::npos);
  CHECK(html.find("bubble_ratio (p-1)/(m+p-1), the same as GPipe = 0.272727 (agrees)") != std::string::npos);
  // ZB-H1 has no closed form of the pipeline's bubble ratio; its per-device bubble is shown instead.
  CHECK(html.find("closed form: device_bubble d0 (p-1-d)(T_F+T_B-T_W)") != std::string::npos);
}

TEST_CASE("the svg of compare stacks every schedule on one axis and matches across runs", "[cli][pictures]") {
  const TempDir dir("cli-svg");
  REQUIRE(cli({"compare", "-s", "gpipe,1f1b", "--svg", dir.file("a.svg")}).status == ppsim::kExitOk);
  REQUIRE(cli({"compare", "-s", "gpipe,1f1b", "--svg", dir.file("b.svg")}).status == ppsim::kExitOk);
  const std::string svg = read(dir.file("a.svg"));
  CHECK(svg == read(dir.file("b.svg")));
  CHECK_FALSE(xml_error(svg));
  CHECK(count_of(svg, "<svg class=\"ppsim-figure\"") == 2);
  CHECK(count_of(svg, "<g class=\"lane\"") == 8);
}

TEST_CASE("an unwritable picture path is one line naming the flag, exit 2, nothing on stdout", "[cli][pictures]") {
  const TempDir dir("cli-unwritable");
  for (const std::string flag : {"--svg", "--html", "--trace"}) {
    const std::string path = dir.file("missing/dir/out");
    const CliRun run = cli({"run", "-s", "1f1b", flag, path});
    CHECK(run.status == ppsim::kExitBadInput);
    CHECK(run.out.empty());
    CHECK(run.err == "ppsim: error: " + flag + ": cannot write " + path + ": No such file or directory\n");
  }
}

TEST_CASE("pictures are written all or none: one unwritable path leaves every other file as it was",
          "[cli][pictures][regression]") {
  const TempDir dir("cli-all-or-none");
  const std::string existing = dir.file("keep.svg");
  std::ofstream(existing) << "old";
  const std::string fresh = dir.file("fresh.trace.json");
  fs::create_directories(dir.path / "SOMEDIR");
  const CliRun run =
      cli({"run", "-p", "2", "-m", "2", "--svg", existing, "--trace", fresh, "--html", dir.file("SOMEDIR")});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.out.empty());
  CHECK(run.err == "ppsim: error: --html: cannot write " + dir.file("SOMEDIR") + ": it is a directory\n");
  CHECK(read(existing) == "old");
  CHECK_FALSE(fs::exists(fresh));
  std::size_t entries = 0;  // no temporary left behind: keep.svg and SOMEDIR only
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path)) ++entries;
  CHECK(entries == 2);
}

TEST_CASE("ppsim without arguments writes ppsim-report.html and says where on stderr", "[cli][pictures]") {
  const TempDir dir("cli-default");
  const fs::path previous = fs::current_path();
  fs::current_path(dir.path);
  const CliRun run = cli({});
  fs::current_path(previous);
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(run.err == "ppsim: wrote the report to ppsim-report.html\n");
  const std::string html = read(dir.path / ppsim::kDefaultReportPath);
  CHECK_FALSE(xml_error(html));
  CHECK(count_of(html, "<g class=\"lane\"") == 8);
  CHECK(html.find("<th>gpipe</th><th>1f1b</th>") != std::string::npos);
}

TEST_CASE("ppsim without arguments still prints its tables where it cannot write the report", "[cli][pictures]") {
  const TempDir dir("cli-default-blocked");
  fs::create_directories(dir.path / ppsim::kDefaultReportPath);  // a directory where the report would go
  const fs::path previous = fs::current_path();
  fs::current_path(dir.path);
  const CliRun run = cli({});
  fs::current_path(previous);
  CHECK(run.status == ppsim::kExitOk);
  CHECK(run.out.find("== gpipe ==") != std::string::npos);
  CHECK(run.err.starts_with("ppsim: note: cannot write ppsim-report.html in this directory"));
}

// --trace, and --timeline --format json, stream to disk as the engine runs; with --svg they come
// from the stored timeline. Both must write the same bytes, whatever the schedule does: links that
// queue, paired sends, overlapped pairs, a V's turn on one device, several schedules, seconds.
TEST_CASE("a trace and a JSON timeline streamed as the engine runs have the bytes of stored ones",
          "[cli][pictures]") {
  using Args = std::vector<std::string>;
  const Args args = GENERATE(Args{"run", "-s", "1f1b", "-p", "4", "-m", "8", "--latency", "0.25",
                                  "--message-bytes", "50", "--bandwidth", "100"},
                             Args{"run", "-s", "1f1b", "-p", "4", "-m", "8", "--comm", "blocking", "--latency", "0.5"},
                             Args{"run", "-s", "dualpipev", "-p", "4", "-m", "10"},
                             Args{"run", "-s", "zbv", "-p", "3", "-m", "7", "--latency", "0.1"},
                             Args{"compare", "-s", "gpipe,interleaved-1f1b,zb-h2", "-p", "3", "-m", "6"},
                             Args{"run", "--model", "llama2-7b", "-s", "1f1b", "-p", "4", "-m", "8", "-d", "2"},
                             Args{"run", "--model", "zb-gpt-1.5b", "-s", "interleaved-1f1b", "-p", "2", "-m", "4"},
                             Args{"run", "--model", "qwen3-30b-a3b", "-s", "dualpipev", "-p", "2", "-m", "4", "-d",
                                  "8", "-e", "8", "--recompute", "full"},
                             Args{"run", "--model", "qwen3-30b-a3b", "-s", "combined-1f1b", "-p", "2", "-v", "2",
                                  "-m", "4", "-d", "8", "-e", "8"});
  const bool json_timeline = GENERATE(false, true);
  INFO(args[2] << " " << args[3] << (json_timeline ? " with --timeline --format json" : ""));
  const TempDir dir("cli-streamed-trace");
  Args streamed = args;
  streamed.insert(streamed.end(), {"--trace", dir.file("streamed.json")});
  Args stored = args;
  stored.insert(stored.end(), {"--trace", dir.file("stored.json"), "--svg", dir.file("stored.svg")});
  if (json_timeline) {
    for (Args* run : {&streamed, &stored}) run->insert(run->end(), {"--timeline", "--format", "json"});
  }
  const CliRun a = cli(streamed);
  const CliRun b = cli(stored);
  REQUIRE(a.status == ppsim::kExitOk);
  REQUIRE(b.status == ppsim::kExitOk);
  CHECK(a.out == b.out);
  if (json_timeline) CHECK(a.out.find("\"spans\": [") != std::string::npos);
  const std::string bytes = read(dir.file("streamed.json"));
  CHECK(bytes.size() > 1000);
  CHECK(bytes == read(dir.file("stored.json")));
  CHECK_NOTHROW(nlohmann::json::parse(bytes));
  std::size_t files = 0;  // the spool became the trace; nothing else is left
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path)) ++files;
  CHECK(files == 3);
}

TEST_CASE("an MoE run's all-to-alls get their own thread in the trace, a strip in the SVG and a list in the JSON",
          "[cli][pictures]") {
  const TempDir dir("cli-exchanges");
  const CliRun run = cli({"run", "--model", "qwen3-30b-a3b", "-s", "dualpipev", "-p", "2", "-m", "4", "-d", "8", "-e",
                          "8", "--trace", dir.file("t.json"), "--svg", dir.file("t.svg"), "--timeline", "--format",
                          "json"});
  REQUIRE(run.status == ppsim::kExitOk);
  const auto timeline = nlohmann::json::parse(run.out).at("timeline");
  // Qwen3-30B-A3B's 48 MoE layers on 2 devices, 4 stages of 12: per micro-batch and stage an F and
  // a B (alone or in a pair), each with a dispatch and a combine per layer.
  REQUIRE(timeline.at("exchanges").size() == 4 * 4 * 2 * 12 * 2);
  const auto& first = timeline.at("exchanges").at(0);
  CHECK(first.at("device") == 0);
  CHECK(first.at("action") == "0F0");
  CHECK(first.at("exchange") == "dispatch");
  CHECK(first.at("recomputed") == false);
  const std::string trace = read(dir.file("t.json"));
  CHECK(count_of(trace, "\"args\":{\"name\":\"expert all-to-all\"}") == 2);  // one thread per device
  CHECK(count_of(trace, "\"cat\":\"all-to-all\"") == 4 * 4 * 2 * 12 * 2);
  CHECK(trace.find("{\"name\":\"dispatch 0F0\",\"cat\":\"all-to-all\",\"ph\":\"X\",\"pid\":1,") !=
        std::string::npos);
  const std::string svg = read(dir.file("t.svg"));
  CHECK_FALSE(xml_error(svg).has_value());
  CHECK(count_of(svg, "<rect class=\"a2a dispatch\"") == 4 * 4 * 2 * 12 + 1);  // and the legend's swatch
  CHECK(count_of(svg, "<rect class=\"a2a combine\"") == 4 * 4 * 2 * 12 + 1);
  CHECK(count_of(svg, "<g class=\"all-to-all\"") == 2);
  // A dense run's outputs say nothing of all-to-alls.
  const CliRun dense = cli({"run", "--model", "llama2-7b", "-s", "1f1b", "-p", "2", "-m", "4", "--timeline",
                            "--format", "json", "--svg", dir.file("d.svg")});
  REQUIRE(dense.status == ppsim::kExitOk);
  CHECK_FALSE(nlohmann::json::parse(dense.out).at("timeline").contains("exchanges"));
  CHECK(read(dir.file("d.svg")).find("class=\"a2a") == std::string::npos);
}

TEST_CASE("an MoE timeline counts its all-to-alls against the timeline limits", "[cli][pictures][regression]") {
  // Qwen3-30B-A3B on two stages: 24 MoE layers each, so 48 all-to-alls beside every op.
  const TempDir dir("cli-exchange-limit");
  const CliRun refused = cli({"run", "--model", "qwen3-30b-a3b", "-s", "1f1b", "-p", "2", "-d", "8", "-e", "8", "-m",
                              "200000", "--trace", dir.file("t.json")});
  CHECK(refused.status == ppsim::kExitBadInput);
  CHECK(refused.err ==
        "ppsim: error: -m: p=2, v=1, m=200000 would record up to 1.2e+06 ops and 48 expert all-to-alls per op, as "
        "many as 1.56e+07 ops (four all-to-alls weigh one), above the limit of 10000000 per run with a timeline "
        "(--timeline, --trace, --svg or --html)\n");
  CHECK_FALSE(fs::exists(dir.file("t.json")));
  // Up to 300,000 ops and their all-to-alls weigh 3.9 million: drawn from digests, the strips as busy share.
  const CliRun digested = cli({"run", "--model", "qwen3-30b-a3b", "-s", "1f1b", "-p", "2", "-d", "8", "-e", "8", "-m",
                               "50000", "--svg", dir.file("t.svg")});
  REQUIRE(digested.status == ppsim::kExitOk);
  const std::string svg = read(dir.file("t.svg"));
  CHECK(svg.find("200000 ops: bars show busy share per 2 px") != std::string::npos);  // 1F1B: an F and a B
  CHECK(svg.find("<path class=\"bin a2a dispatch\"") != std::string::npos);
}

TEST_CASE("pictures of a run too large to keep are drawn from digests as it runs", "[cli][pictures]") {
  // 3·p·m = 2,000,001 ops at most, one above what the pictures keep (1,333,334 ops run).
  const TempDir dir("cli-digested");
  const CliRun run = cli({"run", "-s", "gpipe", "-p", "1", "-m", "666667", "--svg", dir.file("t.svg"), "--timeline"});
  REQUIRE(run.status == 0);
  CHECK(run.err.empty());
  CHECK(run.out.find("1 column = ") != std::string::npos);
  CHECK(run.out.find("(scaled to fit; each cell shows the op at its midpoint)") != std::string::npos);
  CHECK(run.out.find("d0 |F52631  F157894") != std::string::npos);  // the ops at the columns' midpoints
  const std::string svg = read(dir.file("t.svg"));
  CHECK(svg.find("1333334 ops: bars show busy share per 2 px") != std::string::npos);
  CHECK(svg.size() < 100'000);
}

TEST_CASE("a timeline may have ten million ops whichever file draws it, and no more", "[cli][pictures]") {
  const TempDir dir("cli-streamed-limit");
  const CliRun pictures = cli({"run", "-p", "4", "-m", "900000", "--svg", dir.file("t.svg"), "--timeline"});
  CHECK(pictures.status == ppsim::kExitBadInput);
  CHECK(pictures.err ==
        "ppsim: error: -m: p=4, v=1, m=900000 would simulate up to 1.08e+07 ops, above the limit of 10000000 per run "
        "with a timeline (--timeline, --trace, --svg or --html)\n");
  CHECK(pictures.out.empty());
  CHECK_FALSE(fs::exists(dir.file("t.svg")));
  const CliRun streamed = cli({"run", "-p", "4", "-m", "900000", "--trace", dir.file("t.json")});
  CHECK(streamed.status == ppsim::kExitBadInput);
  CHECK(streamed.err ==
        "ppsim: error: -m: p=4, v=1, m=900000 would simulate up to 1.08e+07 ops, above the limit of 10000000 per run "
        "with a timeline (--timeline, --trace, --svg or --html)\n");
  CHECK_FALSE(fs::exists(dir.file("t.json")));
  std::size_t files = 0;  // the refused run left no spool behind
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path)) ++files;
  CHECK(files == 0);
}

TEST_CASE("compare's JSON timelines streamed alone have the bytes of stored ones", "[cli][pictures]") {
  const TempDir dir("cli-streamed-json");
  const std::vector<std::string> args = {"compare", "-s", "gpipe,zbv", "-p", "3", "-m", "4", "--latency", "0.5",
                                         "--timeline", "--format", "json"};
  std::vector<std::string> stored = args;
  stored.insert(stored.end(), {"--svg", dir.file("stored.svg")});
  const CliRun a = cli(args);
  const CliRun b = cli(stored);
  REQUIRE(a.status == ppsim::kExitOk);
  REQUIRE(b.status == ppsim::kExitOk);
  CHECK(a.out == b.out);
  const auto json = nlohmann::json::parse(a.out);
  REQUIRE(json.size() == 2);
  CHECK(json.at(1).at("timeline").at("spans").size() == 3 * 2 * 3 * 4);  // zbv: F, I, W of 2 stages
}

TEST_CASE("a TMPDIR that does not exist does not stop a streamed JSON timeline", "[cli][pictures][regression]") {
  const char* saved = std::getenv("TMPDIR");
  const std::string previous = saved != nullptr ? saved : "";
  ::setenv("TMPDIR", "/nonexistent/ppsim-test", 1);
  const CliRun run = cli({"run", "-p", "2", "-m", "2", "--timeline", "--format", "json"});
  if (saved != nullptr) {
    ::setenv("TMPDIR", previous.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  CHECK(run.status == ppsim::kExitOk);
  CHECK(run.err.empty());
  CHECK(nlohmann::json::parse(run.out).at("timeline").at("spans").size() == 8);
}

TEST_CASE("The figures take the width --width gives, and a width out of range is refused naming it", "[cli][pictures]") {
  const ppsim::test::TempDir dir("width");
  const CliRun run = cli({"compare", "-s", "gpipe,1f1b", "--svg", dir.file("a.svg"), "--html", dir.file("a.html"),
                          "--width", "2400"});
  REQUIRE(run.status == 0);
  CHECK(read(dir.file("a.svg")).find("width=\"2400\"") != std::string::npos);
  CHECK(read(dir.file("a.html")).find("width=\"2400\"") != std::string::npos);
  const CliRun bad = cli({"run", "--svg", dir.file("b.svg"), "--width", "90"});
  CHECK(bad.status == 2);
  CHECK(bad.err == "ppsim: error: --width: must be a width from 400 to 20000 px, got '90'\n");
  CHECK_FALSE(std::filesystem::exists(dir.file("b.svg")));
}
