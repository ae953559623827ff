// SPDX-License-Identifier: Apache-2.0
// The SVG timeline: well-formed, a lane per device and a box per op, phase marks, links, memory,
// aggregation of large runs, and the same bytes every time.
#include "sim/report/svg_timeline.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "schedules/builders.hpp"
#include "support/report_fixtures.hpp"
#include "support/xml_check.hpp"

namespace ppsim {
namespace {

using test::count_of;
using test::xml_error;

Report gpipe(int p, int m, const UniformCosts& costs = {}) {
  return simulate_report("gpipe", build_gpipe({p, m, 1}), costs);
}
Report one_f_one_b(int p, int m, const UniformCosts& costs = {}) {
  return simulate_report("1f1b", build_one_f_one_b({p, m, 1}), costs);
}

std::string svg_of(const Report& report, double width = 0) {
  return render_svg(std::span<const Report>(&report, 1), {}, width);
}

}  // namespace

TEST_CASE("the svg of gpipe at p=4, m=8 is well-formed XML with a lane per device and a box per op", "[svg]") {
  const Report report = gpipe(4, 8);
  const std::string svg = svg_of(report);
  const auto error = xml_error(svg);
  INFO(error.value_or(""));
  REQUIRE_FALSE(error);
  CHECK(svg.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(count_of(svg, "<g class=\"lane\"") == 4);
  for (int d = 0; d < 4; ++d) CHECK(count_of(svg, "data-device=\"" + std::to_string(d) + "\"") == 2);  // lane, curve
  CHECK(count_of(svg, "<rect class=\"op ") == report.result.timeline->spans.size());
  CHECK(count_of(svg, "<rect class=\"op f\"") == 32);
  CHECK(count_of(svg, "<rect class=\"op b\"") == 32);
  // A box's tooltip: its op, device, start, end and length.
  CHECK(count_of(svg, "<title>3F7 on d3: 10 to 11 time units (1 long)</title>") == 1);
  // Each lane's idle background runs to the schedule's end: idle is visible, not blank.
  CHECK(count_of(svg, "<rect class=\"idle\"") == 4 + 1);  // lanes and the legend's swatch
}

TEST_CASE("the svg labels boxes with their micro-batch when the label fits", "[svg]") {
  const std::string svg = svg_of(gpipe(4, 8));
  // 1 time unit is 1080/33 px: room for one digit. Each F and B of micro-batch 7 carries a "7".
  CHECK(count_of(svg, ">7</text>") == 8);
}

TEST_CASE("boxes too narrow for a 10 px label get an 8 px one: at m=64 every backward is numbered", "[svg]") {
  // 1F1B p=4, m=64 at --width 1160: 201 time units over the lane, about 5.4 px a unit. A backward
  // (10.7 px) holds two digits at 8 px, not at 10; a forward (5.4 px) one digit at 8 px.
  const std::string svg = svg_of(one_f_one_b(4, 64), 1160);
  for (const int microbatch : {10, 37, 63}) {
    CHECK(count_of(svg, "<text class=\"mb light tiny\"") >= 1);
    CHECK(count_of(svg, ">" + std::to_string(microbatch) + "</text>") == 4);  // its B on each device
  }
  CHECK(count_of(svg, "<text class=\"mb light tiny\"") == 4 * 54);  // B10..B63 on 4 devices
}

TEST_CASE("A figure grows with its busiest device's ops, so that more of them carry a label", "[svg]") {
  // 1F1B p=4, m=64: 128 ops on each device, 14 px each: 64 + 16 + 14 * 128 = 1872 px wide. A
  // backward is then 17.8 px, wide enough for two digits at 10 px.
  const std::string svg = svg_of(one_f_one_b(4, 64));
  CHECK(svg.find("width=\"1872\"") != std::string::npos);
  CHECK(count_of(svg, "<text class=\"mb light\"") == 4 * 64);  // every backward at 10 px
  // A small run keeps the page's 1160 px; a huge one stops at 4800; --width sets it.
  CHECK(svg_of(one_f_one_b(4, 8)).find("width=\"1160\"") != std::string::npos);
  CHECK(svg_of(one_f_one_b(4, 512)).find("width=\"4800\"") != std::string::npos);
  CHECK(svg_of(one_f_one_b(4, 8), 2000).find("width=\"2000\"") != std::string::npos);
}

TEST_CASE("A V-shape's boxes say the whole op where it fits, else the micro-batch alone", "[svg]") {
  // ZB-V p=4, m=8 holds two stages per device: "7W0" where the box is wide enough, "0" where only
  // the micro-batch fits (the stage and kind stay in the tooltip and the shading), nothing narrower.
  const Report report = simulate_report("zbv", ppsim::build_zero_bubble_v({4, 8, 2}));
  const std::string wide = svg_of(report, 4000);
  const std::string narrow = svg_of(report, 600);
  CHECK(count_of(wide, "W0</text>") > 0);
  CHECK(count_of(narrow, "W0</text>") == 0);
  CHECK(count_of(narrow, ">0</text>") > 0);
  // No label is wider than its box: each text sits in a box at least its characters wide.
  REQUIRE_FALSE(xml_error(narrow));
}

TEST_CASE("a device's later chunks are drawn in lighter shades, and the legend says so", "[svg]") {
  // Interleaved 1F1B p=2, m=4, v=2: device 0 holds stages 0 (chunk 0) and 2 (chunk 1).
  const Report report = simulate_report("interleaved-1f1b", build_interleaved_one_f_one_b({2, 4, 2}));
  const std::string svg = svg_of(report);
  REQUIRE_FALSE(xml_error(svg));
  CHECK(count_of(svg, "<rect class=\"op f\"") == 8);     // stages 0 and 1
  CHECK(count_of(svg, "<rect class=\"op f c1\"") == 8);  // stages 2 and 3
  CHECK(count_of(svg, "<rect class=\"op b c1\"") == 8);
  CHECK(count_of(svg, ">later chunks</text>") == 1);
  CHECK(count_of(svg, ".ppsim-figure .f.c1{fill:") == 1);
  // One chunk per device: no shades and no legend item.
  CHECK(count_of(svg_of(gpipe(4, 8)), "later chunks") == 0);
}

TEST_CASE("the svg is byte-identical across two runs", "[svg]") {
  const Report report = one_f_one_b(4, 8);
  CHECK(svg_of(report) == svg_of(report));
  CHECK(svg_of(one_f_one_b(4, 8)) == svg_of(report));
}

TEST_CASE("every device marks where warm-up, steady state and cool-down meet", "[svg]") {
  // 1F1B at p=4, m=8: every device has a warm-up and a cool-down, so two marks each, and one more in
  // the legend.
  const std::string svg = svg_of(one_f_one_b(4, 8));
  CHECK(count_of(svg, "<line class=\"phase\"") == 2 * 4 + 1);
  // With m = 1 the single forward is the warm-up and the single backward the cool-down: one mark
  // between them (its start and the forward's end).
  const std::string one = svg_of(one_f_one_b(2, 1));
  CHECK(count_of(one, "<line class=\"phase\"") == 2 * 2 + 1);
}

TEST_CASE("the memory chart draws one curve per device and marks each device's peak", "[svg]") {
  const std::string svg = svg_of(gpipe(4, 8));
  CHECK(count_of(svg, "<path class=\"mem\"") == 4);
  CHECK(count_of(svg, "<circle class=\"peak\"") == 4);
  CHECK(svg.find("peak 8 (d0)") != std::string::npos);
  CHECK(svg.find("stashed micro-batches per device") != std::string::npos);
}

TEST_CASE("memory in bytes gets byte ticks and the capacity line when the device memory is known", "[svg]") {
  UniformCosts costs;
  costs.activation_bytes = ByteCount{std::int64_t{1} << 30};
  Report report = one_f_one_b(4, 8, costs);
  CHECK(svg_of(report).find("class=\"cap\"") == std::string::npos);
  report.memory_capacity = std::int64_t{6} << 30;
  const std::string svg = svg_of(report);
  REQUIRE_FALSE(xml_error(svg));
  CHECK(svg.find("memory per device (static + activations)") != std::string::npos);
  CHECK(count_of(svg, "<line class=\"cap\"") == 1);
  CHECK(svg.find("capacity 6 GiB") != std::string::npos);
  CHECK(svg.find("peak 4 GiB (d0)") != std::string::npos);
}

TEST_CASE("overlapped F&B ops are striped with the figure's own pattern", "[svg]") {
  const Report report = simulate_report("dualpipev", build_dualpipev({2, 4, 2}));
  const std::string svg = svg_of(report);
  REQUIRE_FALSE(xml_error(svg));
  std::size_t pairs = 0;
  for (const Span& span : report.result.timeline->spans) pairs += span.action.fused_with_next;
  REQUIRE(pairs > 0);
  CHECK(count_of(svg, "<rect class=\"op fb\"") == pairs);
  CHECK(count_of(svg, "fill=\"url(#s0-fb)\"") == pairs + 1);  // and the legend's swatch
  CHECK(count_of(svg, "<pattern id=\"s0-fb\"") == 1);
}

TEST_CASE("I and W boxes get their own classes in a zero-bubble schedule", "[svg]") {
  const Report report = simulate_report("zb-h1", build_zero_bubble_h1({4, 8, 1}));
  const std::string svg = svg_of(report);
  CHECK(count_of(svg, "<rect class=\"op i\"") == 32);
  CHECK(count_of(svg, "<rect class=\"op w\"") == 32);
  CHECK(count_of(svg, "<rect class=\"op b\"") == 0);
}

TEST_CASE("messages that take time get a lane per link and a bar per message", "[svg]") {
  UniformCosts costs;
  costs.latency = Duration{0.5};
  const Report report = gpipe(3, 2, costs);
  const std::string svg = svg_of(report);
  REQUIRE_FALSE(xml_error(svg));
  CHECK(count_of(svg, "<g class=\"link\"") == 4);  // 0->1, 1->2 and back
  CHECK(count_of(svg, "<rect class=\"flight\" x=") == report.result.timeline->messages.size() + 1);  // + legend
  // A message's tooltip: its time on the link, its arrival and its size.
  CHECK(count_of(svg, "<title>0F0 d0 to d1: on the link 1 to 1, arrives 1.5 time units, 0 B</title>") == 1);
  // Free links draw no link lanes: there is nothing to see.
  CHECK(count_of(svg_of(gpipe(3, 2)), "<g class=\"link\"") == 0);
}

TEST_CASE("above 20,000 ops lanes show busy share per bin, and the file stays small", "[svg]") {
  const Report report = one_f_one_b(4, 2600);  // 20,800 ops
  const std::string svg = svg_of(report);
  REQUIRE_FALSE(xml_error(svg));
  CHECK(count_of(svg, "<rect class=\"op ") == 0);
  CHECK(count_of(svg, "<path class=\"bin f\"") == 4);  // one path per lane and kind
  CHECK(count_of(svg, "<g class=\"lane\"") == 4);
  CHECK(svg.find("20800 ops: bars show busy share") != std::string::npos);
  CHECK(svg.size() < 400'000);
}

TEST_CASE("schedules stacked in one svg share one time axis", "[svg]") {
  UniformCosts costs;
  costs.latency = Duration{0.5};
  const std::vector<Report> reports = {gpipe(4, 8, costs), one_f_one_b(4, 8, costs)};
  const FigureScale scale = figure_scale(reports);
  CHECK(scale.time_end == Approx(41));  // 1F1B's makespan with latency; GPipe's is 36
  const std::string svg = render_svg(reports);
  REQUIRE_FALSE(xml_error(svg));
  CHECK(count_of(svg, "<svg class=\"ppsim-figure\"") == 2);
  CHECK(count_of(svg, "<g class=\"lane\"") == 8);
  // GPipe's lanes end at 36/41 of the axis.
  const FigureLayout layout = figure_layout(reports[0], scale);
  CHECK(figure_x(layout, scale, 36) - layout.plot_left == Approx(layout.plot_width * 36 / 41));
}

TEST_CASE("times in seconds are labelled in the unit that fits the run", "[svg]") {
  UniformCosts costs;
  costs.forward = Duration{0.001};
  costs.backward = Duration{0.002};
  Report report = gpipe(4, 8, costs);
  CHECK(svg_of(report).find("time (time units)") != std::string::npos);
  report.scenario = {{"time-unit", "s"}};
  const std::string svg = svg_of(report);
  CHECK(svg.find("time (ms)") != std::string::npos);
  CHECK(svg.find("makespan 33 ms") != std::string::npos);
}

TEST_CASE("a report without a timeline says so instead of drawing lanes", "[svg]") {
  Report report = gpipe(2, 2);
  report.result.timeline.reset();
  const std::string svg = svg_of(report);
  REQUIRE_FALSE(xml_error(svg));
  CHECK(svg.find("no timeline recorded") != std::string::npos);
}

}  // namespace ppsim
