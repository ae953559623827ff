// SPDX-License-Identifier: Apache-2.0
// Table, JSON and CSV reporters, and the number formatting they share.
#include "sim/report/reporter.hpp"

#include <catch2/catch.hpp>
#include <charconv>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "models/uniform_cost_model.hpp"
#include "schedules/builders.hpp"
#include "sim/engine.hpp"
#include "sim/report/csv_reporter.hpp"
#include "sim/report/format.hpp"
#include "support/report_fixtures.hpp"

namespace ppsim {
namespace {

using nlohmann::json;

Report simulate(const std::string& name, const ScheduleParams& params, const UniformCosts& costs = {}) {
  Report report = simulate_report(name, name == "gpipe" ? build_gpipe(params) : build_one_f_one_b(params), costs);
  report.params = params;
  report.scenario = json{{"schedule", name}, {"p", params.p}, {"m", params.m}, {"forward", 1.0}};
  return report;
}

// The default study: GPipe and 1F1B at p=4, m=8, F=1, B=2.
std::vector<Report> default_study() { return {simulate("gpipe", {4, 8, 1}), simulate("1f1b", {4, 8, 1})}; }

std::string render(OutputFormat format, std::span<const Report> reports, ReportOptions options = {}) {
  std::ostringstream out;
  make_reporter(format)->write(out, reports, options);
  return out.str();
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
  return fields;
}

std::vector<std::string> keys_of(const json& object) {
  std::vector<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.push_back(it.key());
  return keys;
}

std::vector<std::string> keys_in_order(const std::string& text) {
  // nlohmann::json sorts keys; ordered_json keeps the printed order, which is the contract.
  const nlohmann::ordered_json object = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.push_back(it.key());
  return keys;
}

double parse_double(const std::string& text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  REQUIRE(ec == std::errc());
  REQUIRE(end == text.data() + text.size());
  return value;
}

}  // namespace

TEST_CASE("output formats parse from their names and nothing else", "[reporter]") {
  OutputFormat format = OutputFormat::kTable;
  CHECK(parse_output_format("json", format));
  CHECK(format == OutputFormat::kJson);
  CHECK(parse_output_format("csv", format));
  CHECK(format == OutputFormat::kCsv);
  CHECK(parse_output_format("table", format));
  CHECK(format == OutputFormat::kTable);
  const std::string bad = GENERATE("", "JSON", "xml", "tables", " csv");
  CAPTURE(bad);
  format = OutputFormat::kCsv;
  CHECK_FALSE(parse_output_format(bad, format));
  CHECK(format == OutputFormat::kCsv);
}

TEST_CASE("figures for people keep six significant digits and drop trailing zeros", "[reporter][format]") {
  CHECK(format_figure(24.0) == "24");
  CHECK(format_figure(0.0) == "0");
  CHECK(format_figure(-0.0) == "0");
  CHECK(format_figure(0.375) == "0.375");
  CHECK(format_figure(3.0 / 11.0) == "0.272727");
  CHECK(format_figure(1234567.0) == "1.23457e+06");
  CHECK(format_figure(1.5e-7) == "1.5e-07");
  CHECK(format_figure(-2.5) == "-2.5");
}

TEST_CASE("figures for machines are the shortest text that reads back exactly", "[reporter][format]") {
  CHECK(format_exact(24.0) == "24");
  CHECK(format_exact(0.1) == "0.1");
  CHECK(format_exact(-0.0) == "0");
  CHECK(format_exact(3.0 / 11.0) == "0.2727272727272727");
  const double value = GENERATE(1.0 / 3.0, 0.1 + 0.2, 1e-300, 123456789.123, 2.0 / 7.0);
  CHECK(parse_double(format_exact(value)) == value);
}

TEST_CASE("byte counts read in binary units", "[reporter][format]") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(1023) == "1023 B");
  CHECK(format_bytes(1024) == "1 KiB");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(std::int64_t{3} << 29) == "1.5 GiB");
  CHECK(format_bytes(std::int64_t{80} << 30) == "80 GiB");
  CHECK(format_bytes(std::int64_t{1} << 60) == "1 EiB");
  CHECK(format_bytes(-2048) == "-2 KiB");
}

TEST_CASE("text tables pad every column to its widest cell and trim trailing blanks", "[reporter][format]") {
  TextTable table({Align::kLeft, Align::kRight, Align::kLeft});
  table.add_row({"name", "n", ""});
  table.add_row({"a", "1234", "x"});
  CHECK(table.render() == "name     n\na     1234  x\n");
}

TEST_CASE("JSON for one report is one object carrying every figure under its fixed name", "[reporter][json]") {
  const Report report = simulate("1f1b", {4, 8, 1});
  const std::string text = render(OutputFormat::kJson, std::span(&report, 1));
  CHECK(text.back() == '\n');
  CHECK(text.starts_with("{\n  \"schedule\": \"1f1b\""));  // two-space indent
  const json object = json::parse(text);
  REQUIRE(object.is_object());
  CHECK(keys_in_order(text) == std::vector<std::string>{"schedule", "p", "m", "v", "scenario", "makespan",
                                                        "bubble_ratio", "bubble_overhead", "comm_ratio", "total_busy",
                                                        "compute_ops", "messages", "per_device", "per_link"});
  const Result& result = report.result;
  CHECK(object["schedule"] == "1f1b");
  CHECK(object["p"] == 4);
  CHECK(object["m"] == 8);
  CHECK(object["v"] == 1);
  CHECK(nlohmann::ordered_json::parse(text)["scenario"] == nlohmann::ordered_json(report.scenario));
  CHECK(object["makespan"].get<double>() == result.makespan);
  CHECK(object["bubble_ratio"].get<double>() == result.bubble_ratio);
  CHECK(object["bubble_overhead"].get<double>() == result.bubble_overhead);
  CHECK(object["comm_ratio"].get<double>() == result.comm_ratio);
  CHECK(object["total_busy"].get<double>() == result.total_busy);
  CHECK(object["compute_ops"].get<std::int64_t>() == result.compute_ops);
  CHECK(object["messages"].get<std::int64_t>() == result.messages);

  REQUIRE(object["per_device"].size() == result.per_device.size());
  for (std::size_t d = 0; d < result.per_device.size(); ++d) {
    CAPTURE(d);
    const json& device = object["per_device"][d];
    const DeviceFigures& f = result.per_device[d];
    CHECK(device["device"] == d);
    CHECK(device["start"].get<double>() == f.start);
    CHECK(device["end"].get<double>() == f.end);
    CHECK(device["busy"].get<double>() == f.busy);
    CHECK(device["idle"].get<double>() == f.idle);
    CHECK(device["bubble_ratio"].get<double>() == f.bubble_ratio);
    CHECK(device["ops"].get<std::int64_t>() == f.ops);
    CHECK(device["peak_stashed"].get<double>() == f.peak_stashed);
    CHECK(device["static_bytes"].get<std::int64_t>() == f.static_bytes);
    CHECK(device["peak_activation_bytes"].get<std::int64_t>() == f.peak_activation_bytes);
    CHECK(device["peak_memory_bytes"].get<std::int64_t>() == f.peak_memory_bytes);
    for (std::size_t i = 0; i < kPhaseNames.size(); ++i) {
      const json& phase = device["phases"][kPhaseNames[i]];
      CHECK(phase["ops"].get<std::int64_t>() == f.phases[i].ops);
      CHECK(phase["busy"].get<double>() == f.phases[i].busy);
      CHECK(phase["start"].get<double>() == f.phases[i].start);
      CHECK(phase["end"].get<double>() == f.phases[i].end);
      CHECK(phase["duration"].get<double>() == f.phases[i].duration());
    }
  }
  REQUIRE(object["per_link"].size() == result.per_link.size());
  for (std::size_t i = 0; i < result.per_link.size(); ++i) {
    const json& link = object["per_link"][i];
    CHECK(link["src"] == result.per_link[i].src);
    CHECK(link["dst"] == result.per_link[i].dst);
    CHECK(link["messages"].get<std::int64_t>() == result.per_link[i].messages);
    CHECK(link["bytes"].get<std::int64_t>() == result.per_link[i].bytes);
    CHECK(link["busy"].get<double>() == result.per_link[i].busy);
  }
}

TEST_CASE("JSON device and link objects list their keys in the documented order", "[reporter][json]") {
  const Report report = simulate("gpipe", {2, 2, 1});
  const nlohmann::ordered_json object =
      nlohmann::ordered_json::parse(render(OutputFormat::kJson, std::span(&report, 1)));
  const auto& device = object["per_device"][0];
  std::vector<std::string> keys;
  for (auto it = device.begin(); it != device.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"device", "start", "end", "busy", "idle", "bubble_ratio", "ops",
                                         "peak_stashed", "static_bytes", "peak_activation_bytes", "peak_memory_bytes",
                                         "phases"});
  keys.clear();
  for (auto it = device["phases"].begin(); it != device["phases"].end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"warmup", "steady", "cooldown"});
  keys.clear();
  for (auto it = device["phases"]["steady"].begin(); it != device["phases"]["steady"].end(); ++it) {
    keys.push_back(it.key());
  }
  CHECK(keys == std::vector<std::string>{"ops", "busy", "start", "end", "duration"});
  keys.clear();
  const auto& link = object["per_link"][0];
  for (auto it = link.begin(); it != link.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"src", "dst", "messages", "bytes", "busy"});
}

TEST_CASE("JSON carries the timeline only when it is asked for and recorded", "[reporter][json]") {
  Report report = simulate("1f1b", {4, 8, 1}, {.activation_bytes = {1000}, .message_bytes = {10}});
  CHECK_FALSE(json::parse(render(OutputFormat::kJson, std::span(&report, 1))).contains("timeline"));

  const json object = json::parse(render(OutputFormat::kJson, std::span(&report, 1), {.timeline = true}));
  REQUIRE(object.contains("timeline"));
  const json& timeline = object["timeline"];
  const Timeline& recorded = *report.result.timeline;
  CHECK(keys_of(timeline) == std::vector<std::string>{"memory", "messages", "spans"});
  REQUIRE(timeline["spans"].size() == recorded.spans.size());
  REQUIRE(timeline["messages"].size() == recorded.messages.size());
  REQUIRE(timeline["memory"].size() == recorded.memory.size());
  const json& span = timeline["spans"][0];
  CHECK(span["device"] == recorded.spans[0].device);
  CHECK(span["action"] == to_string(recorded.spans[0].action));
  CHECK(span["start"].get<double>() == recorded.spans[0].start);
  CHECK(span["end"].get<double>() == recorded.spans[0].end);
  const json& message = timeline["messages"][0];
  CHECK(message["src"] == recorded.messages[0].src);
  CHECK(message["from"] == to_string(recorded.messages[0].from));
  CHECK(message["bytes"] == recorded.messages[0].bytes);
  CHECK(message["arrival"].get<double>() == recorded.messages[0].arrival);
  const json& sample = timeline["memory"].back();
  CHECK(sample["device"] == recorded.memory.back().device);
  CHECK(sample["time"].get<double>() == recorded.memory.back().time);
  CHECK(sample["bytes"] == recorded.memory.back().bytes);
  CHECK(sample["stashed"].get<double>() == recorded.memory.back().stashed);

  report.result.timeline.reset();
  CHECK_FALSE(json::parse(render(OutputFormat::kJson, std::span(&report, 1), {.timeline = true})).contains("timeline"));
}

TEST_CASE("JSON for several reports is an array of report objects in the order given", "[reporter][json]") {
  const std::vector<Report> reports = default_study();
  const json array = json::parse(render(OutputFormat::kJson, reports));
  REQUIRE(array.is_array());
  REQUIRE(array.size() == 2);
  CHECK(array[0]["schedule"] == "gpipe");
  CHECK(array[1]["schedule"] == "1f1b");
  CHECK(array[1]["per_device"][0]["peak_stashed"].get<double>() == 4);
}

TEST_CASE("CSV has the exact header line and one row per device", "[reporter][csv]") {
  const int p = GENERATE(1, 2, 4, 8);
  CAPTURE(p);
  const Report report = simulate("1f1b", {p, 8, 1});
  const std::vector<std::string> lines = lines_of(render(OutputFormat::kCsv, std::span(&report, 1)));
  REQUIRE(lines.size() == static_cast<std::size_t>(p) + 1);
  CHECK(lines[0] ==
        "schedule,p,m,v,device,start,end,busy,idle,bubble_ratio,ops,peak_stashed,static_bytes,"
        "peak_activation_bytes,peak_memory_bytes,warmup_ops,warmup_duration,steady_ops,steady_duration,"
        "cooldown_ops,cooldown_duration");
  CHECK(lines[0] == csv_header());
  for (std::size_t d = 0; d < static_cast<std::size_t>(p); ++d) {
    const std::vector<std::string> fields = split_csv(lines[d + 1]);
    REQUIRE(fields.size() == 21);
    const DeviceFigures& f = report.result.per_device[d];
    CHECK(fields[0] == "1f1b");
    CHECK(fields[1] == std::to_string(p));
    CHECK(fields[4] == std::to_string(d));
    CHECK(parse_double(fields[5]) == f.start);
    CHECK(parse_double(fields[6]) == f.end);
    CHECK(parse_double(fields[9]) == f.bubble_ratio);  // full precision survives
    CHECK(fields[10] == std::to_string(f.ops));
    CHECK(parse_double(fields[11]) == f.peak_stashed);
    CHECK(fields[15] == std::to_string(f.phases[0].ops));
    CHECK(parse_double(fields[20]) == f.phases[2].duration());
  }
}

TEST_CASE("CSV prints whole numbers without a decimal point", "[reporter][csv]") {
  const Report report = simulate("gpipe", {4, 8, 1});
  const std::vector<std::string> lines = lines_of(render(OutputFormat::kCsv, std::span(&report, 1)));
  CHECK(lines[1] == "gpipe,4,8,1,0,0,33,24,9,0.2727272727272727,16,8,0,0,0,8,8,0,0,8,16");
}

TEST_CASE("CSV for several reports stacks their rows under one header", "[reporter][csv]") {
  const std::vector<Report> reports = default_study();
  const std::vector<std::string> lines = lines_of(render(OutputFormat::kCsv, reports));
  REQUIRE(lines.size() == 1 + 4 + 4);
  CHECK(lines[1].starts_with("gpipe,"));
  CHECK(lines[4].starts_with("gpipe,"));
  CHECK(lines[5].starts_with("1f1b,"));
  CHECK(lines[8].starts_with("1f1b,"));
}

TEST_CASE("CSV quotes a schedule name that holds a comma", "[reporter][csv]") {
  Report report = simulate("gpipe", {1, 1, 1});
  report.schedule = "my,\"schedule\"";
  CHECK(lines_of(render(OutputFormat::kCsv, std::span(&report, 1)))[1].starts_with("\"my,\"\"schedule\"\"\",1,1,1,0,"));
}

TEST_CASE("the table for one report shows its header, summary, devices and links", "[reporter][table]") {
  const Report report = simulate("1f1b", {4, 8, 1});
  const std::string text = render(OutputFormat::kTable, std::span(&report, 1));
  const std::vector<std::string> lines = lines_of(text);
  CHECK(lines[0] == "1f1b  p=4 m=8 v=1");
  CHECK(text.find("makespan         33\n") != std::string::npos);
  CHECK(text.find("bubble_ratio     0.272727\n") != std::string::npos);
  CHECK(text.find("bubble_overhead  0.375\n") != std::string::npos);
  CHECK(text.find("comm_ratio       0\n") != std::string::npos);
  CHECK(text.find("total_busy       96\n") != std::string::npos);
  CHECK(text.find("device  start  end  busy  idle  bubble_ratio  warmup  steady  cooldown\n") != std::string::npos);
  CHECK(text.find("d0          0   33    24     9      0.272727       4       8         4\n") != std::string::npos);
  CHECK(text.find("d3                 1     0 B              0 B          0 B\n") != std::string::npos);
  CHECK(text.find("0->1             8    0 B     0\n") != std::string::npos);
  CHECK(text.find("legend:") == std::string::npos);  // no timeline unless asked
  for (const std::string& line : lines) CHECK(line.size() <= 80);

  const std::string with_timeline = render(OutputFormat::kTable, std::span(&report, 1), {.timeline = true});
  CHECK(with_timeline.starts_with(text));
  CHECK(with_timeline.find("d0 |F0 F1 F2 F3") != std::string::npos);
}

TEST_CASE("the table for one report leaves out links when all stages share a device", "[reporter][table]") {
  const Report report = simulate("gpipe", {1, 4, 1});
  CHECK(render(OutputFormat::kTable, std::span(&report, 1)).find("per link") == std::string::npos);
}

TEST_CASE("the table shows bytes in binary units", "[reporter][table]") {
  const Report report = simulate(
      "1f1b", {4, 8, 1}, {.activation_bytes = {std::int64_t{1} << 30}, .static_bytes = {std::int64_t{3} << 30}});
  const std::string text = render(OutputFormat::kTable, std::span(&report, 1));
  CHECK(text.find("d0                 4   3 GiB            4 GiB        7 GiB\n") != std::string::npos);
}

TEST_CASE("the default study prints gpipe and 1f1b side by side", "[reporter][table]") {
  const std::vector<Report> reports = default_study();
  const std::string expected =
      "p=4 m=8 v=1\n"
      "\n"
      "                    gpipe      1f1b\n"
      "makespan               33        33\n"
      "bubble_ratio     0.272727  0.272727\n"
      "bubble_overhead     0.375     0.375\n"
      "comm_ratio              0         0\n"
      "peak_stashed d0         8         4\n"
      "peak_stashed d1         8         3\n"
      "peak_stashed d2         8         2\n"
      "peak_stashed d3         8         1\n";
  CHECK(render(OutputFormat::kTable, reports) == expected);

  const std::string with_timelines = render(OutputFormat::kTable, reports, {.timeline = true});
  CHECK(with_timelines.starts_with(expected));
  const std::size_t gpipe_at = with_timelines.find("\n== gpipe ==\n1 column = 1 time unit\n");
  const std::size_t one_f_one_b_at = with_timelines.find("\n== 1f1b ==\n1 column = 1 time unit\n");
  CHECK(gpipe_at != std::string::npos);
  CHECK(one_f_one_b_at != std::string::npos);
  CHECK(gpipe_at < one_f_one_b_at);
}

TEST_CASE("side by side, peak memory rows appear once sizes are given", "[reporter][table]") {
  const UniformCosts costs{.activation_bytes = {std::int64_t{1} << 20}};
  const std::vector<Report> reports{simulate("gpipe", {4, 8, 1}, costs), simulate("1f1b", {4, 8, 1}, costs)};
  const std::string text = render(OutputFormat::kTable, reports);
  CHECK(text.find("peak_memory d0      8 MiB     4 MiB\n") != std::string::npos);
  CHECK(text.find("peak_memory d3      8 MiB     1 MiB\n") != std::string::npos);
  CHECK(render(OutputFormat::kTable, default_study()).find("peak_memory") == std::string::npos);
}

TEST_CASE("side by side, more than 16 devices show the first and last 8", "[reporter][table]") {
  const std::vector<Report> reports{simulate("gpipe", {20, 4, 1}), simulate("1f1b", {20, 4, 1})};
  const std::string text = render(OutputFormat::kTable, reports);
  CHECK(text.find("peak_stashed d7 ") != std::string::npos);
  CHECK(text.find("\n...\n") != std::string::npos);
  CHECK(text.find("peak_stashed d8 ") == std::string::npos);
  CHECK(text.find("peak_stashed d11 ") == std::string::npos);
  CHECK(text.find("peak_stashed d12 ") != std::string::npos);
  CHECK(text.find("peak_stashed d19 ") != std::string::npos);
}

TEST_CASE("side by side, reports of different sizes show their p, m and v", "[reporter][table]") {
  const std::vector<Report> reports{simulate("gpipe", {2, 4, 1}), simulate("1f1b", {4, 8, 1})};
  const std::vector<std::string> lines = lines_of(render(OutputFormat::kTable, reports));
  CHECK(lines[0] == "                 gpipe      1f1b");
  CHECK(lines[1] == "p                    2         4");
  CHECK(lines[2] == "m                    4         8");
  CHECK(lines[3] == "v                    1         1");
  CHECK(std::find(lines.begin(), lines.end(), "peak_stashed d3      -         1") != lines.end());
}

TEST_CASE("every format renders the same reports to the same bytes twice", "[reporter]") {
  const OutputFormat format = GENERATE(OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kCsv);
  const bool timeline = GENERATE(false, true);
  const std::vector<Report> reports = default_study();
  CHECK(render(format, reports, {.timeline = timeline}) == render(format, reports, {.timeline = timeline}));
  CHECK(render(format, std::span(reports).first(1), {.timeline = timeline}) ==
        render(format, std::span(reports).first(1), {.timeline = timeline}));
  // A fresh simulation of the same inputs prints the same bytes too.
  CHECK(render(format, default_study(), {.timeline = timeline}) == render(format, reports, {.timeline = timeline}));
}

}  // namespace ppsim
