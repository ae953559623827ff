// SPDX-License-Identifier: Apache-2.0
// ppsim sweep --html: a well-formed, self-contained page with one bubble series per schedule and p,
// the summary's Pareto front as a staircase, the same bytes for any number of threads, and the
// usual one-line error for a path that cannot be written.
#include "study/sweep/sweep_html.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "study/common/errors.hpp"
#include "study/sweep/sweep_runner.hpp"
#include "study/sweep/sweep_study.hpp"
#include "study/sweep/sweep_summary.hpp"
#include "support/cli_run.hpp"
#include "support/xml_check.hpp"

namespace {

using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::count_of;
using ppsim::test::TempDir;
using ppsim::test::xml_error;

// 2 schedules x 2 p x 5 m (m spans 16x: a log2 axis), GPipe's largest m over the memory limit.
const char* kSmallStudy = R"({
  "description": "GPipe & 1F1B <small>",
  "fixed": {"forward": 1, "backward": 2, "activation-bytes": "1 GiB"},
  "axes": {"schedule": ["gpipe", "1f1b"], "p": [2, 4], "m": [2, 4, 8, 16, 32]},
  "memory_limit": "16 GiB",
  "top": 5
})";

ppsim::Study study_of(const std::string& json) {
  return ppsim::parse_study(nlohmann::ordered_json::parse(json), "study.json");
}

std::string read(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// The value of the first `name="..."` after `from`.
std::string attribute(const std::string& text, const std::string& name, std::size_t from = 0) {
  const std::string key = " " + name + "=\"";
  const std::size_t start = text.find(key, from);
  if (start == std::string::npos) return "";
  const std::size_t begin = start + key.size();
  return text.substr(begin, text.find('"', begin) - begin);
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

}  // namespace

TEST_CASE("the sweep page is well-formed and needs nothing from the network", "[sweep][html]") {
  const ppsim::Study study = study_of(kSmallStudy);
  const std::string html = ppsim::render_sweep_html(study, ppsim::run_sweep(study, {}));
  const auto error = xml_error(html);
  INFO(error.value_or(""));
  REQUIRE_FALSE(error);
  CHECK(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
  for (const char* outside : {"<script", "<link", "<img", "src=", "href=", "http:", "https:", "@import", "url("}) {
    INFO(outside);
    CHECK(html.find(outside) == std::string::npos);
  }
  CHECK(html.find("GPipe &amp; 1F1B &lt;small&gt;") != std::string::npos);
  CHECK(html.find("20 points · run 20, skipped 0, not fitting 2") != std::string::npos);
  CHECK(count_of(html, "<svg class=\"sweep-chart\"") == 2);
}

TEST_CASE("the bubble chart draws one series per schedule and p", "[sweep][html]") {
  const ppsim::Study study = study_of(kSmallStudy);
  const std::string html = ppsim::render_sweep_html(study, ppsim::run_sweep(study, {}));
  CHECK(count_of(html, "<g class=\"series\"") == 4);
  for (const char* schedule : {"gpipe", "1f1b"}) {
    for (const char* p : {"2", "4"}) {
      INFO(schedule << " p=" << p);
      CHECK(count_of(html,
                     std::string("<g class=\"series\" data-schedule=\"") + schedule + "\" data-p=\"" + p + "\"") == 1);
    }
  }
  CHECK(count_of(html, "class=\"mark\"") == 20);  // one marker per m of each series
  CHECK(count_of(html, "<polyline class=\"closed-form\"") == 2);
  CHECK(count_of(html, "<line class=\"target\"") == 1);
  CHECK(html.find("m, micro-batches (log scale)") != std::string::npos);
  CHECK(count_of(html, "<line class=\"limit\"") == 1);
}

TEST_CASE("A bubble chart of more lines than one chart holds is faceted by schedule, on shared axes", "[sweep][html]") {
  // 3 schedules x 5 p, GPipe and 1F1B at v = 1 and interleaved 1F1B at v = 2 (its v = 1 points are
  // skipped): 15 lines, more than one chart holds (12); one chart per schedule, 5 lines each.
  const ppsim::Study study = study_of(R"({"axes": {"schedule": ["gpipe", "1f1b", "interleaved-1f1b"],
      "p": [2, 4, 8, 16, 32], "v": [1, 2], "m": [16, 32, 64]}})");
  const std::string html = ppsim::render_sweep_html(study, ppsim::run_sweep(study, {}));
  REQUIRE_FALSE(xml_error(html));
  CHECK(count_of(html, "<h3 class=\"facet\">") == 3);
  CHECK(count_of(html, "id=\"bubble-chart\"") == 0);
  for (int f = 0; f < 3; ++f) {
    const std::size_t chart = html.find("id=\"bubble-chart-" + std::to_string(f) + "\"");
    REQUIRE(chart != std::string::npos);
    const std::string one = html.substr(chart, html.find("</svg>", chart) - chart);
    CHECK(count_of(one, "<g class=\"series\"") == 5);
    CHECK(one.find("m, micro-batches") != std::string::npos);
  }
  CHECK(count_of(html, "<g class=\"series\"") == 15);
  CHECK(html.find("one chart per schedule, on the same axes") != std::string::npos);
}

TEST_CASE("the Pareto staircase's points are exactly the summary's Pareto front", "[sweep][html]") {
  // GPipe alone trades memory (m stashes) for throughput; the shoot-out ranks by step time.
  const bool shootout = GENERATE(false, true);
  const ppsim::Study study =
      shootout ? ppsim::load_study(std::string(PPSIM_SOURCE_DIR) + "/configs/studies/schedule_shootout.json")
               : study_of(R"({
    "fixed": {"schedule": "gpipe", "forward": 1, "backward": 2, "activation-bytes": "1 GiB"},
    "axes": {"p": [2, 4], "m": [2, 4, 8, 16, 32]}, "memory_limit": "16 GiB"
  })");
  const auto results = ppsim::run_sweep(study, {});
  const std::vector<std::size_t> front = ppsim::pareto_front(study, results);
  REQUIRE(front.size() > 1);
  const std::string html = ppsim::render_sweep_html(study, results);
  REQUIRE(count_of(html, "<polyline class=\"front\"") == 1);
  const std::size_t line = html.find("<polyline class=\"front\"");

  std::vector<std::string> expected;
  for (const std::size_t position : front) expected.push_back(std::to_string(results[position].index));
  CHECK(words(attribute(html, "data-points", line)) == expected);

  // Its corners alternate: a front point, then the step to the next point's memory at the same speed.
  const std::vector<std::string> vertices = words(attribute(html, "points", line));
  REQUIRE(vertices.size() == 2 * front.size() - 1);
  REQUIRE(count_of(html, "<circle class=\"front-point\"") == front.size());
  std::size_t from = 0;
  for (std::size_t k = 0; k < front.size(); ++k) {
    from = html.find("<circle class=\"front-point\"", from + 1);
    CHECK(attribute(html, "data-point", from) == expected[k]);
    CHECK(vertices[2 * k] == attribute(html, "cx", from) + "," + attribute(html, "cy", from));
  }
}

TEST_CASE("the page's tables hold the summary's rows", "[sweep][html]") {
  const ppsim::Study study = study_of(kSmallStudy);
  const auto results = ppsim::run_sweep(study, {});
  const std::string html = ppsim::render_sweep_html(study, results);
  auto rows_of = [&](const std::string& id) {
    const std::size_t start = html.find("<table id=\"" + id + "\">");
    REQUIRE(start != std::string::npos);
    return count_of(std::string_view(html).substr(start, html.find("</table>", start) - start), "<tr>");
  };
  CHECK(rows_of("top-table") == 1 + ppsim::top_points(study, results).size());
  CHECK(rows_of("choose-m-table") == 1 + ppsim::choose_m(study, results).size());
  // The first choose-m row as the terminal prints it: gpipe, p=2, smallest m 32 at bubble 1/33.
  const ppsim::SummaryTable choose = ppsim::choose_m_cells(study, results);
  std::string row = "<tr>";
  for (std::size_t c = 0; c < choose.rows[0].size(); ++c) {
    row += std::string(c == 0 ? "<td class=\"l\">" : "<td>") + choose.rows[0][c] + "</td>";
  }
  CHECK(html.find(row + "</tr>") != std::string::npos);
  CHECK(choose.rows[0][3] == "32");
}

TEST_CASE("a study with one m says so instead of drawing the bubble chart", "[sweep][html]") {
  const ppsim::Study study = study_of(R"({"fixed": {"m": 8}, "axes": {"schedule": ["gpipe", "1f1b"], "p": [2, 4]}})");
  const std::string html = ppsim::render_sweep_html(study, ppsim::run_sweep(study, {}));
  REQUIRE_FALSE(xml_error(html));
  CHECK(html.find("id=\"bubble-chart\"") == std::string::npos);
  CHECK(html.find("Every point of the study has m = 8") != std::string::npos);
  CHECK(html.find("id=\"memory-chart\"") != std::string::npos);
}

TEST_CASE("ppsim sweep --html writes the same bytes for one and two threads, and for a shard its points",
          "[sweep][html]") {
  TempDir dir("sweep_html");
  const std::string study = dir.file("study.json");
  std::ofstream(study) << kSmallStudy;
  const CliRun one = cli({"sweep", study, "-j", "1", "--html", dir.file("one.html")});
  const CliRun two = cli({"sweep", study, "-j", "2", "--html", dir.file("two.html"), "-o", dir.file("two.csv")});
  REQUIRE(one.status == ppsim::kExitOk);
  REQUIRE(two.status == ppsim::kExitOk);
  CHECK(one.out == two.out);
  const std::string bytes = read(dir.file("one.html"));
  CHECK(bytes.size() > 5000);
  CHECK(bytes == read(dir.file("two.html")));
  CHECK(std::filesystem::exists(dir.file("two.csv")));

  REQUIRE(cli({"sweep", study, "--shard", "1/2", "--html", dir.file("shard.html")}).status == ppsim::kExitOk);
  const std::string shard = read(dir.file("shard.html"));
  REQUIRE_FALSE(xml_error(shard));
  CHECK(shard.find("20 points; shard 1/2 has 10 · run 10") != std::string::npos);
}

TEST_CASE("an --html path that cannot be written exits 2 with one line and writes nothing", "[sweep][html]") {
  TempDir dir("sweep_html_unwritable");
  const std::string study = dir.file("study.json");
  std::ofstream(study) << kSmallStudy;
  const std::string path = dir.file("missing/page.html");
  const CliRun run = cli({"sweep", study, "--html", path, "-o", dir.file("points.csv")});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.out.empty());
  CHECK(run.err == "ppsim: error: --html: cannot write " + path + ": No such file or directory\n");
  CHECK_FALSE(std::filesystem::exists(dir.file("points.csv")));
  std::size_t entries = 0;  // no temporary of points.csv left behind: study.json only
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path)) ++entries;
  CHECK(entries == 1);
}

TEST_CASE("peak memory spanning more than 10x is charted on a log axis by powers of two, a narrow span linearly",
          "[sweep][html]") {
  // GPipe stashes all m micro-batches: m = 2..64 spans 32x.
  const ppsim::Study wide = study_of(R"({"fixed": {"schedule": "gpipe", "p": 2, "activation-bytes": "1 GiB"},
                                          "axes": {"m": [2, 4, 8, 16, 32, 64]}})");
  const std::string log_page = ppsim::render_sweep_html(wide, ppsim::run_sweep(wide, {}));
  REQUIRE_FALSE(xml_error(log_page));
  CHECK(count_of(log_page, "peak memory of the busiest device (log scale)") == 1);
  for (const char* tick : {"middle\">2 GiB<", "middle\">8 GiB<", "middle\">64 GiB<"}) {
    CHECK(count_of(log_page, tick) == 1);  // an x tick (text-anchor middle), not a table cell
  }
  // 1F1B stashes min(p, m): 2 GiB at every m, so one linear axis that ends just past it.
  const ppsim::Study narrow = study_of(R"({"fixed": {"schedule": "1f1b", "p": 2, "activation-bytes": "1 GiB"},
                                            "axes": {"m": [2, 4, 8]}})");
  const std::string linear_page = ppsim::render_sweep_html(narrow, ppsim::run_sweep(narrow, {}));
  CHECK(count_of(linear_page, "(log scale)</text>") == 0);
  CHECK(count_of(linear_page, "middle\">2 GiB<") == 1);
  CHECK(count_of(linear_page, "middle\">2.5 GiB<") == 0);  // the axis ends at 2.08 GiB, not at a round 2.5 or 4
}
