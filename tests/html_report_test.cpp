// SPDX-License-Identifier: Apache-2.0
// The HTML report: well-formed (XHTML-compatible), self-contained, a lane per device for every
// schedule on one shared axis, a layout the browser test can rely on, and the same bytes every time.
#include "sim/report/html_report.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "schedules/builders.hpp"
#include "sim/report/svg_timeline.hpp"
#include "support/report_fixtures.hpp"
#include "support/xml_check.hpp"

namespace ppsim {
namespace {

using test::count_of;
using test::xml_error;

std::vector<Report> gpipe_and_1f1b(const UniformCosts& costs = {}) {
  return {simulate_report("gpipe", build_gpipe({4, 8, 1}), costs),
          simulate_report("1f1b", build_one_f_one_b({4, 8, 1}), costs)};
}

}  // namespace

TEST_CASE("the html report is well-formed and has a lane per device and a box per op for every schedule", "[html]") {
  const auto reports = gpipe_and_1f1b();
  const std::string html = render_html_report(reports);
  const auto error = xml_error(html);
  INFO(error.value_or(""));
  REQUIRE_FALSE(error);
  CHECK(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
  CHECK(count_of(html, "<svg class=\"ppsim-figure\"") == 2);
  CHECK(count_of(html, "<g class=\"lane\"") == 8);
  CHECK(count_of(html, "<rect class=\"op ") == 64 + 64);
  CHECK(count_of(html, "<th>gpipe</th><th>1f1b</th>") == 1);
  CHECK(html.find("<td>peak_stashed d0</td><td>8</td><td>4</td>") != std::string::npos);
}

TEST_CASE("the html report needs nothing from the network: no scripts, links, fonts or images", "[html]") {
  const std::string html = render_html_report(gpipe_and_1f1b());
  for (const char* outside :
       {"<script", "<link", "<img", "src=", "href=", "http:", "https:", "@import", "@font-face"}) {
    INFO(outside);
    CHECK(html.find(outside) == std::string::npos);
  }
  // The only url() references are the figures' own stripe patterns.
  CHECK(count_of(html, "url(") == count_of(html, "url(#s"));
}

TEST_CASE("the html report is byte-identical across runs", "[html]") {
  CHECK(render_html_report(gpipe_and_1f1b()) == render_html_report(gpipe_and_1f1b()));
}

TEST_CASE("the html report puts every schedule on one time axis", "[html]") {
  UniformCosts costs;
  costs.latency = Duration{0.5};  // GPipe 36, 1F1B 41
  const auto reports = gpipe_and_1f1b(costs);
  const HtmlLayout layout = html_layout(reports);
  REQUIRE(layout.lanes.size() == 8);
  const HtmlLane& gpipe_lane = layout.lanes.front();
  const HtmlLane& one_f_one_b_lane = layout.lanes.back();
  CHECK(gpipe_lane.schedule == 0);
  CHECK(one_f_one_b_lane.schedule == 1);
  CHECK(gpipe_lane.x == one_f_one_b_lane.x);
  CHECK(gpipe_lane.width / one_f_one_b_lane.width == Approx(36.0 / 41.0));
  CHECK(one_f_one_b_lane.y > gpipe_lane.y);
  CHECK(layout.height > one_f_one_b_lane.y + one_f_one_b_lane.height);
}

TEST_CASE("the html layout matches the heights the page declares", "[html]") {
  const auto reports = gpipe_and_1f1b();
  const HtmlLayout layout = html_layout(reports);
  const std::string html = render_html_report(reports);
  // Lanes of one figure are a lane height plus gap apart, as the figure's own layout says.
  const FigureLayout figure = figure_layout(reports[0], figure_scale(reports));
  CHECK(layout.lanes[1].y - layout.lanes[0].y == Approx(figure.lane_top[1] - figure.lane_top[0]));
  CHECK(layout.lanes[0].height == figure.lane_height);
  // Every block before the figures has a fixed height in the page's CSS.
  CHECK(html.find("h1{margin:0;height:36px") != std::string::npos);
  CHECK(html.find(".params{height:24px") != std::string::npos);
  CHECK(count_of(html, "<div class=\"figure\" id=\"figure-") == 2);
  CHECK(layout.width == 1200);
}

TEST_CASE("the html report writes each closed form beside the simulated bubble", "[html]") {
  const auto reports = gpipe_and_1f1b();
  ClosedFormNote note;
  note.figure = Figure::kBubbleRatio;
  note.expression = "(p-1)/(m+p-1)";
  note.holds = true;
  note.predicted = 3.0 / 11;
  note.simulated = reports[0].result.bubble_ratio;
  note.verdict = "agrees";
  const std::vector<std::vector<ClosedFormNote>> notes = {{note}, {}};
  const std::string html = render_html_report(reports, notes);
  REQUIRE_FALSE(xml_error(html));
  CHECK(html.find("<td>bubble_ratio</td><td>0.272727</td><td>0.272727</td>") != std::string::npos);
  CHECK(html.find("<td>bubble_ratio, closed form</td><td>(p-1)/(m+p-1) = 0.272727 (agrees)</td><td>-</td>") !=
        std::string::npos);
  CHECK(html.find("closed form: bubble_ratio (p-1)/(m+p-1) = 0.272727 (agrees)") != std::string::npos);
  CHECK(html.find("no published closed form for this schedule&#39;s bubble") != std::string::npos);
}

TEST_CASE("the html report says whether each schedule fits when the device memory is known", "[html]") {
  UniformCosts costs;
  costs.activation_bytes = ByteCount{std::int64_t{1} << 30};
  auto reports = gpipe_and_1f1b(costs);
  for (Report& report : reports) report.memory_capacity = std::int64_t{6} << 30;
  const std::string html = render_html_report(reports);
  REQUIRE_FALSE(xml_error(html));
  CHECK(html.find("<td>fits</td><td>no: peak 8 GiB</td><td>yes</td>") != std::string::npos);
  CHECK(count_of(html, "<line class=\"cap\"") == 2);
}

}  // namespace ppsim
