// SPDX-License-Identifier: Apache-2.0
// The Chrome trace: valid JSON in the format's object form, a process per device with named
// threads, one complete event per op, flows that pair up, memory counters, and the configuration.
#include "sim/report/chrome_trace.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "schedules/builders.hpp"
#include "support/report_fixtures.hpp"

namespace ppsim {
namespace {

using Json = nlohmann::json;

Json trace_of(const std::vector<Report>& reports) { return Json::parse(render_chrome_trace(reports)); }

std::vector<Json> events_with_phase(const Json& trace, const std::string& phase) {
  std::vector<Json> events;
  for (const Json& event : trace.at("traceEvents")) {
    if (event.at("ph") == phase) events.push_back(event);
  }
  return events;
}

Report gpipe_with_latency(int p, int m) {
  UniformCosts costs;
  costs.latency = Duration{0.25};
  costs.message_bytes = ByteCount{100};
  costs.bandwidth = Bandwidth{200};  // 0.5 per message on the link
  return simulate_report("gpipe", build_gpipe({p, m, 1}), costs);
}

}  // namespace

TEST_CASE("the trace is a JSON object with traceEvents, one complete event per op, and the ops' args", "[trace]") {
  const Report report = simulate_report("1f1b", build_one_f_one_b({4, 8, 1}));
  const Json trace = trace_of({report});
  REQUIRE(trace.is_object());
  REQUIRE(trace.contains("traceEvents"));
  REQUIRE(trace.contains("otherData"));
  std::vector<Json> ops;
  for (const Json& event : events_with_phase(trace, "X")) {
    if (event.at("cat") == "compute") ops.push_back(event);
  }
  REQUIRE(ops.size() == report.result.timeline->spans.size());
  for (const Json& op : ops) {
    CHECK(op.at("args").contains("stage"));
    CHECK(op.at("args").contains("microbatch"));
    CHECK(op.at("args").contains("op"));
    CHECK(op.at("dur").get<double>() > 0);
    CHECK(op.at("tid") == 1);
  }
  // Device 3's first op is micro-batch 0's forward on stage 3, at t = 3 (1 unit = 1 µs).
  const auto first_on_d3 = std::find_if(ops.begin(), ops.end(), [](const Json& op) { return op.at("pid") == 4; });
  REQUIRE(first_on_d3 != ops.end());
  CHECK(first_on_d3->at("name") == "3F0");
  CHECK(first_on_d3->at("ts") == 3);
  CHECK(first_on_d3->at("args") == Json{{"stage", 3}, {"microbatch", 0}, {"op", "F"}});
}

TEST_CASE("the trace names a process per device and its compute and link threads", "[trace]") {
  const Json trace = trace_of({gpipe_with_latency(3, 2)});
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  for (const Json& event : events_with_phase(trace, "M")) {
    if (event.at("name") == "process_name") processes[event.at("pid")] = event.at("args").at("name");
    if (event.at("name") == "thread_name") threads[{event.at("pid"), event.at("tid")}] = event.at("args").at("name");
  }
  CHECK(processes == std::map<int, std::string>{{1, "gpipe d0"}, {2, "gpipe d1"}, {3, "gpipe d2"}});
  CHECK(threads.at({1, 1}) == "compute");
  CHECK(threads.at({1, 3}) == "send to d1");  // link threads: 2 + destination
  CHECK(threads.at({2, 2}) == "send to d0");
  CHECK(threads.at({2, 4}) == "send to d2");
  CHECK(threads.count({3, 4}) == 0);  // the last device sends only backwards
  // Sends sit on their link's thread for the time the link is busy.
  std::size_t sends = 0;
  for (const Json& event : events_with_phase(trace, "X")) {
    if (event.at("cat") != "send") continue;
    ++sends;
    CHECK(event.at("dur") == 0.5);
    CHECK(event.at("tid").get<int>() >= 2);
  }
  CHECK(sends == 8);
}

TEST_CASE("every message has a flow from its send to the op that receives it, and flows pair up", "[trace]") {
  for (const bool free_links : {false, true}) {
    const Report report = free_links ? simulate_report("1f1b", build_one_f_one_b({4, 8, 1})) : gpipe_with_latency(4, 8);
    const Json trace = trace_of({report});
    std::map<long, int> starts;
    std::map<long, Json> ends;
    for (const Json& event : events_with_phase(trace, "s")) ++starts[event.at("id").get<long>()];
    for (const Json& event : events_with_phase(trace, "f")) {
      CHECK(event.at("bp") == "e");
      CHECK(ends.count(event.at("id").get<long>()) == 0);
      ends[event.at("id").get<long>()] = event;
    }
    CHECK(starts.size() == report.result.timeline->messages.size());
    CHECK(ends.size() == starts.size());
    for (const auto& [id, count] : starts) {
      CHECK(count == 1);
      CHECK(ends.count(id) == 1);
    }
    // A flow ends inside the receiving op: 0F0's activation is received by 1F0 on device 1.
    const Json& first = ends.at(1);
    CHECK(first.at("name") == "0F0");
    CHECK(first.at("pid") == 2);
    CHECK(first.at("tid") == 1);
  }
}

TEST_CASE("a message's latency is an in-flight slice from leaving the link to its arrival", "[trace]") {
  const Report report = gpipe_with_latency(3, 2);
  const Json trace = trace_of({report});
  const auto begins = events_with_phase(trace, "b");
  const auto ends = events_with_phase(trace, "e");
  const auto& messages = report.result.timeline->messages;
  REQUIRE(begins.size() == messages.size());
  REQUIRE(ends.size() == messages.size());
  std::map<long, double> begun;
  for (const Json& event : begins) {
    CHECK(event.at("cat") == "flight");
    begun[event.at("id").get<long>()] = event.at("ts").get<double>();
  }
  for (const Json& event : ends) {
    const long id = event.at("id").get<long>();
    REQUIRE(begun.count(id) == 1);
    CHECK(event.at("ts").get<double>() - begun.at(id) == Approx(0.25));  // the latency, in trace µs per unit
  }
  CHECK(begins.front().at("name") == "0F0 in flight to d1");
  // Free links have no latency to draw.
  CHECK(events_with_phase(trace_of({simulate_report("1f1b", build_one_f_one_b({4, 8, 1}))}), "b").empty());
}

TEST_CASE("memory is two counter tracks per device, bytes and stashed micro-batches, each on its own scale",
          "[trace]") {
  UniformCosts costs;
  costs.activation_bytes = ByteCount{1000};
  const Report report = simulate_report("gpipe", build_gpipe({2, 3, 1}), costs);
  const Json trace = trace_of({report});
  const auto counters = events_with_phase(trace, "C");
  REQUIRE(counters.size() == 2 * report.result.timeline->memory.size());
  double peak = 0;
  double peak_stashed = 0;
  std::set<int> pids;
  for (const Json& counter : counters) {
    pids.insert(counter.at("pid").get<int>());
    CHECK(counter.at("args").size() == 1);
    if (counter.at("name") == "memory bytes") {
      peak = std::max(peak, counter.at("args").at("bytes").get<double>());
    } else {
      CHECK(counter.at("name") == "stashed micro-batches");
      peak_stashed = std::max(peak_stashed, counter.at("args").at("stashed").get<double>());
    }
  }
  CHECK(pids == std::set<int>{1, 2});
  CHECK(peak == 3000);
  CHECK(peak_stashed == 3);
}

TEST_CASE("the trace carries the configuration and its time unit in otherData", "[trace]") {
  Report report = simulate_report("gpipe", build_gpipe({2, 2, 1}));
  report.scenario = {{"schedule", "gpipe"}, {"p", 2}, {"m", 2}, {"forward", 1}};
  const Json trace = trace_of({report});
  const Json& other = trace.at("otherData");
  CHECK(other.at("generator") == "ppsim");
  CHECK(other.at("schedules").at(0).at("p") == 2);
  CHECK(other.at("time_unit").get<std::string>().find("1 unit = 1 microsecond") != std::string::npos);
}

TEST_CASE("times in seconds are written in microseconds", "[trace]") {
  UniformCosts costs;
  costs.forward = Duration{0.001};
  costs.backward = Duration{0.002};
  Report report = simulate_report("gpipe", build_gpipe({2, 2, 1}), costs);
  report.scenario = {{"time-unit", "s"}};
  const Json trace = trace_of({report});
  for (const Json& event : events_with_phase(trace, "X")) {
    if (event.at("name") == "0F1") {
      CHECK(event.at("ts").get<double>() == Approx(1000));
      CHECK(event.at("dur").get<double>() == Approx(1000));
    }
  }
  CHECK(trace.at("otherData").at("time_unit").get<std::string>().starts_with("seconds"));
}

TEST_CASE("several schedules get their own processes and the trace is byte-identical across runs", "[trace]") {
  const std::vector<Report> reports = {simulate_report("gpipe", build_gpipe({2, 2, 1})),
                                       simulate_report("1f1b", build_one_f_one_b({2, 2, 1}))};
  const Json trace = trace_of(reports);
  std::set<std::string> names;
  for (const Json& event : events_with_phase(trace, "M")) {
    if (event.at("name") == "process_name") names.insert(event.at("args").at("name").get<std::string>());
  }
  CHECK(names == std::set<std::string>{"gpipe d0", "gpipe d1", "1f1b d0", "1f1b d1"});
  CHECK(render_chrome_trace(reports) == render_chrome_trace(reports));
}

}  // namespace ppsim
