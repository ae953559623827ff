// SPDX-License-Identifier: Apache-2.0
// Pictures of runs too large to keep are drawn from digests the engine fills as it runs
// (study/output/streamed_pictures.hpp). They must be the pictures of the kept timeline byte for
// byte: the same SVG, the same HTML page, the same ASCII timeline, on every kind of lane (one box
// per op cannot be digested, so the figures here are all above the 20,000 ops that aggregate them).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/report/ascii_timeline.hpp"
#include "sim/report/figure_digest.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/svg_timeline.hpp"
#include "study/output/pictures.hpp"
#include "study/output/streamed_pictures.hpp"
#include "study/run/study.hpp"

namespace {

constexpr std::size_t kWidth = 160;  // characters of an ASCII timeline's row, as into a file

struct Case {
  const char* schedules;  // comma-separated
  int p;
  int m;
  double latency;  // with message bytes and a bandwidth when not 0: the links get lanes
  bool bytes;      // activation and static bytes: memory curves in bytes, not stashed micro-batches
};

ppsim::Scenario scenario_of(const Case& c) {
  ppsim::Scenario scenario;
  scenario.schedules.clear();
  std::string names = c.schedules;
  for (std::size_t at = 0; at != std::string::npos;) {
    const std::size_t comma = names.find(',', at);
    scenario.schedules.push_back(names.substr(at, comma == std::string::npos ? comma : comma - at));
    at = comma == std::string::npos ? comma : comma + 1;
  }
  scenario.params = {c.p, c.m, 1};
  scenario.forward = {ppsim::Duration{1}};
  scenario.backward = {ppsim::Duration{2.5}};
  if (c.latency > 0) {
    scenario.latency = ppsim::Duration{c.latency};
    scenario.message_bytes = {ppsim::ByteCount{1 << 20}};
    scenario.bandwidth = ppsim::Bandwidth{1e7};
  }
  if (c.bytes) {
    scenario.activation_bytes = {ppsim::ByteCount{3 << 20}};
    scenario.static_bytes = {ppsim::ByteCount{12345}};
  }
  return scenario;
}

// The two ways the CLI draws: timelines kept, or a first run for the scale and grids and a second
// into the digests.
std::vector<ppsim::Report> kept(const ppsim::Scenario& scenario) { return ppsim::simulate_all(scenario, true); }

std::vector<ppsim::Report> digested(const ppsim::Scenario& scenario, bool figures, bool ascii) {
  ppsim::GridFinderStreamer finder(kWidth);
  // As the CLI does: without an ASCII timeline, the scale comes from summaries alone.
  const std::vector<ppsim::Report> first = ppsim::simulate_all(scenario, false, ascii ? &finder : nullptr);
  ppsim::PictureDigestStreamer digests(
      figures ? std::optional<ppsim::FigureScale>(ppsim::figure_scale(first)) : std::nullopt,
      ascii ? finder.grids() : std::vector<ppsim::GridFinderStreamer::Found>{});
  return ppsim::simulate_all(scenario, false, &digests);
}

std::string ascii_of(const ppsim::Report& report) {
  return ppsim::render_ascii_timeline(report, ppsim::timeline_columns_for_width(report, kWidth));
}

}  // namespace

TEST_CASE("Figures and pages drawn from digests are the ones drawn from kept timelines, byte for byte") {
  const Case c = GENERATE(Case{"1f1b,gpipe", 4, 3000, 0, false},           // memory curves as envelopes
                          Case{"1f1b", 32, 400, 0, true},                  // each point drawn, in bytes
                          Case{"zbv,zb-h1", 4, 2000, 0.05, true},          // I and W, link lanes
                          Case{"dualpipev", 4, 3000, 0, false},            // overlapped F&B pairs
                          Case{"interleaved-1f1b", 4, 1600, 0.05, false},  // several stages a device
                          Case{"looped-bfs", 4, 1600, 0, true});
  CAPTURE(c.schedules, c.p, c.m, c.latency);
  const ppsim::Scenario scenario = scenario_of(c);
  const std::vector<ppsim::Report> expected = kept(scenario);
  const std::vector<ppsim::Report> actual = digested(scenario, true, true);
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    CHECK_FALSE(actual[i].result.timeline.has_value());
    REQUIRE(actual[i].figure_digest != nullptr);
    CHECK(actual[i].figure_digest->spans() > ppsim::kMaxDrawnOps);
    // The axis ends where the kept timeline's last op or message does: the run's makespan.
    CHECK(actual[i].figure_digest->last_time() == expected[i].result.makespan);
    CHECK(actual[i].program.actions.empty());  // a streamed run keeps only its program's shape
    CHECK(ascii_of(actual[i]) == ascii_of(expected[i]));
  }
  const std::string svg = ppsim::render_svg(actual);
  CHECK(svg.find("ops: bars show busy share") != std::string::npos);
  CHECK(svg == ppsim::render_svg(expected));
  CHECK(ppsim::html_report(scenario, actual) == ppsim::html_report(scenario, expected));
  CHECK(ppsim::render_svg(digested(scenario, true, false)) == svg);  // scale from summaries only
  // Where the page puts each lane (the browser test's pixel positions), from the digest too.
  const ppsim::HtmlLayout page = ppsim::html_layout(actual);
  const ppsim::HtmlLayout expected_page = ppsim::html_layout(expected);
  REQUIRE(page.lanes.size() == expected_page.lanes.size());
  CHECK(page.height == expected_page.height);
  for (std::size_t i = 0; i < page.lanes.size(); ++i) {
    CHECK(page.lanes[i].width > 0);
    CHECK(page.lanes[i].width == expected_page.lanes[i].width);
    CHECK(page.lanes[i].y == expected_page.lanes[i].y);
  }
}

TEST_CASE("A run small enough for one box per op keeps its timeline beside a digested one", "[regression]") {
  // compare of a large schedule file and a small registry schedule: every run is streamed, and a
  // digest cannot draw boxes, so the small run's records are kept as it streams.
  const ppsim::Scenario scenario = scenario_of(Case{"zbv,1f1b", 4, 1000, 0.05, true});
  const std::vector<ppsim::Report> expected = kept(scenario);
  const std::vector<ppsim::Report> actual = digested(scenario, true, true);
  REQUIRE(actual.size() == 2);
  CHECK(actual[0].figure_digest != nullptr);  // zbv: 24,000 ops, aggregated
  CHECK_FALSE(actual[0].result.timeline.has_value());
  CHECK(actual[1].figure_digest == nullptr);  // 1f1b: 8,000 ops, one box each
  REQUIRE(actual[1].result.timeline.has_value());
  const std::string svg = ppsim::render_svg(actual);
  CHECK(svg.find("<rect class=\"op f\"") != std::string::npos);
  CHECK(svg == ppsim::render_svg(expected));
  CHECK(ppsim::html_report(scenario, actual) == ppsim::html_report(scenario, expected));
  for (std::size_t i = 0; i < actual.size(); ++i) CHECK(ascii_of(actual[i]) == ascii_of(expected[i]));
}

TEST_CASE("An ASCII timeline from a digest is the kept one on exact and scaled grids") {
  const Case c = GENERATE(Case{"1f1b", 4, 8, 0, false},          // an exact grid of one column a unit
                          Case{"gpipe", 3, 5, 0.25, false},      // exact, with latency on the links
                          Case{"zbv", 4, 8, 0, false},           // exact, several stages a device
                          Case{"dualpipev", 4, 8, 0, false},     // pairs: "0F3+7B1", and edges beside them
                          Case{"1f1b", 4, 200, 0, false},        // scaled to fit
                          Case{"zb-h2", 5, 40, 0.3, false});     // scaled, I and W
  CAPTURE(c.schedules, c.p, c.m);
  const ppsim::Scenario scenario = scenario_of(c);
  const std::vector<ppsim::Report> expected = kept(scenario);
  const std::vector<ppsim::Report> actual = digested(scenario, false, true);
  REQUIRE(actual.size() == 1);
  CHECK(actual[0].figure_digest == nullptr);
  REQUIRE(actual[0].ascii_timeline != nullptr);
  const std::string text = ascii_of(actual[0]);
  CHECK(text.find("legend: | separates") != std::string::npos);
  CHECK(text == ascii_of(expected[0]));
}

TEST_CASE("A memory curve with more points than the figure has bins is drawn as per-bin envelopes") {
  // 540 bins: twice that many distinct instants switch a curve to envelopes, fewer keep every point.
  ppsim::FigureDigest digest(100, true, 2);
  for (int i = 0; i < 1081; ++i) digest.on_memory({0, static_cast<double>(i) / 20, i % 3, 0});
  for (int i = 0; i < 1080; ++i) digest.on_memory({1, static_cast<double>(i) / 20, i % 3, 0});
  digest.on_memory({1, 1079.0 / 20, 7, 0});  // the same instant: its value replaces the last one
  digest.finish();
  CHECK(digest.memory(0).envelope);
  CHECK(digest.memory(0).points.empty());
  CHECK_FALSE(digest.memory(0).steps.empty());
  CHECK_FALSE(digest.memory(1).envelope);
  REQUIRE(digest.memory(1).points.size() == 1079);
  CHECK(digest.memory(1).points.back().second == 7);
  CHECK(digest.memory(1).peak == std::pair<double, double>{1079.0 / 20, 7});
}
