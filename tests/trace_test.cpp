// SPDX-License-Identifier: Apache-2.0
// Reading real runs (issue 39): ppsim's own --trace read back, torch.profiler's traces and
// Megatron-LM's timer logs; the replay, the idle time by cause, the calibration and predictions from it.

#include <zlib.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "schedules/registry.hpp"
#include "study/common/errors.hpp"
#include "study/trace/calibration.hpp"
#include "study/trace/trace_bytes.hpp"
#include "study/trace/trace_import.hpp"
#include "study/trace/trace_replay.hpp"
#include "study/trace/trace_study.hpp"
#include "support/cli_run.hpp"
#include "support/documented_figures.hpp"
#include "support/xml_check.hpp"

namespace {

using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::source_path;
using ppsim::test::TempDir;

// ppsim run ... --trace FILE, read back.
ppsim::TraceReading traced(const TempDir& dir, const std::vector<std::string>& args) {
  std::vector<std::string> full{"run"};
  full.insert(full.end(), args.begin(), args.end());
  full.insert(full.end(), {"--trace", dir.file("t.json")});
  const CliRun run = cli(full);
  REQUIRE(run.status == 0);
  return ppsim::read_trace_files({dir.file("t.json")});
}

double makespan_of(const std::vector<std::string>& args) {
  std::vector<std::string> full{"run", "--format", "json"};
  full.insert(full.end(), args.begin(), args.end());
  const CliRun run = cli(full);
  REQUIRE(run.status == 0);
  return nlohmann::json::parse(run.out)["makespan"].get<double>();
}

// The message of the InputError that `read` throws, or "accepted".
template <typename Read>
std::string refusal(Read read) {
  try {
    read();
  } catch (const ppsim::InputError& error) {
    return error.what();
  }
  return "accepted";
}

void check_parts_add_up(const ppsim::TraceReplay& replay) {
  for (const ppsim::DeviceIdle& idle : replay.idle) {
    const double parts = std::accumulate(idle.cause.begin(), idle.cause.end(), 0.0);
    CHECK(parts == Approx(idle.idle).margin(1e-9 * replay.step()));
    CHECK(idle.busy + idle.idle == Approx(replay.step()).epsilon(1e-12));
    double segments = 0;
    for (const ppsim::IdleSegment& s : idle.segments) segments += s.end - s.start;
    CHECK(segments == Approx(parts).margin(1e-9 * replay.step()));
  }
}

const std::vector<std::string> kUneven{
    "--forward", "1,1.25,1,1.5", "--backward",  "2,2.5,2,3", "--weight",        "0.75,1,0.75,1.25",
    "--latency", "0.1",          "--bandwidth", "40",        "--message-bytes", "10"};

}  // namespace

TEST_CASE("every registry schedule's trace reads back as its program and costs and replays to its step", "[trace]") {
  for (const auto& info : ppsim::schedule_registry()) {
    if (!info.generated()) continue;
    INFO(info.name);
    const TempDir dir("trace-roundtrip");
    const int v = info.default_v;
    std::vector<std::string> args{"-s", std::string(info.name), "-p", "4", "-m", "8", "-v", std::to_string(v)};
    args.insert(args.end(), kUneven.begin(), kUneven.end());
    if (info.name == "seq1f1b") {
      // Its ops are sequence slices: refused in one line, not calibrated as if they were micro-batches.
      CHECK_THROWS_WITH(traced(dir, args), Catch::Contains("a seq1f1b trace's ops are sequence slices"));
      continue;
    }
    const ppsim::TraceReading reading = traced(dir, args);
    REQUIRE(reading.run);
    const ppsim::TraceRun& run = *reading.run;
    const ppsim::Program expected = info.build({4, 8, v});
    const ppsim::Program read = run.program();
    CHECK(read.stage_device == expected.stage_device);
    CHECK(read.actions == expected.actions);
    CHECK(run.num_pipelines == expected.num_pipelines);

    const ppsim::TraceReplay replay = ppsim::replay_trace(run);
    CHECK(replay.step() == run.step_end() - run.step_start());
    CHECK(replay.inconsistent == 0);
    check_parts_add_up(replay);

    // Each op's measured time is the cost the engine gave it: a device's share split over its v chunks.
    const ppsim::Calibration c = ppsim::calibrate_trace(run);
    const double forward[] = {1, 1.25, 1, 1.5};
    const double weight[] = {0.75, 1, 0.75, 1.25};
    REQUIRE(c.stages.size() == static_cast<std::size_t>(4 * v));
    for (std::size_t s = 0; s < c.stages.size(); ++s) {
      REQUIRE(c.stages[s][0]);
      CHECK(c.stages[s][0]->median == forward[s / v] / v);
      if (c.stages[s][3]) CHECK(c.stages[s][3]->median == Approx(weight[s / v] / v).epsilon(1e-12));
    }
    CHECK(c.latency->median == Approx(0.1).epsilon(1e-12));
    CHECK(*c.bandwidth == Approx(40).epsilon(1e-12));
    CHECK(*c.message_bytes == 10);

    // The recorded program on the calibrated costs, through the engine, is the recorded step again.
    ppsim::TraceStudyRequest request;
    request.files = {dir.file("t.json")};
    const ppsim::TraceStudy study = ppsim::study_trace(request);
    REQUIRE(study.modelled_step);
    CHECK(*study.modelled_step == Approx(run.step_end() - run.step_start()).epsilon(1e-12));
  }
}

TEST_CASE("uniform 1F1B's idle time is all bubble and (p-1)/(m+p-1) of the step on every device", "[trace]") {
  const int p = GENERATE(2, 4, 8);
  const int m = GENERATE(4, 16);
  const TempDir dir("trace-uniform");
  const ppsim::TraceReading reading = traced(dir, {"-s", "1f1b", "-p", std::to_string(p), "-m", std::to_string(m)});
  const ppsim::TraceReplay replay = ppsim::replay_trace(*reading.run);
  for (const ppsim::DeviceIdle& idle : replay.idle) {
    CHECK(idle.idle / replay.step() == Approx(double(p - 1) / (m + p - 1)).epsilon(1e-12));
    CHECK(idle.cause[0] == Approx(idle.idle).epsilon(1e-12));
    CHECK(idle.cause[1] == 0);
  }
}

TEST_CASE("a slow last stage shows as straggler time on the devices that wait for it, links as message time",
          "[trace]") {
  const TempDir dir("trace-straggler");
  const ppsim::TraceReading reading = traced(
      dir, {"-s", "1f1b", "-p", "4", "-m", "8", "--forward", "1,1,1,2", "--backward", "2,2,2,4", "--latency", "0.5"});
  const ppsim::TraceReplay replay = ppsim::replay_trace(*reading.run);
  check_parts_add_up(replay);
  for (int d = 0; d < 3; ++d) {
    CHECK(replay.idle[static_cast<std::size_t>(d)].cause[static_cast<int>(ppsim::IdleCause::kStraggler)] > 0);
    CHECK(replay.idle[static_cast<std::size_t>(d)].cause[static_cast<int>(ppsim::IdleCause::kMessage)] > 0);
  }
  // The slow stage itself waits only for the fast ones: no straggler share of its own.
  CHECK(replay.idle[3].cause[static_cast<int>(ppsim::IdleCause::kStraggler)] == 0);
  CHECK(replay.idle[3].cause[static_cast<int>(ppsim::IdleCause::kLaunch)] == 0);
  // Without message delays the replay is the same run with free links.
  CHECK(ppsim::replay_trace(*reading.run, {true, false}, false).step() ==
        Approx(makespan_of({"-s", "1f1b", "-p", "4", "-m", "8", "--forward", "1,1,1,2", "--backward", "2,2,2,4"})));
}

TEST_CASE("costs calibrated from a 1F1B trace predict ZB-V as the same costs given per chunk do", "[trace][predict]") {
  const TempDir dir("trace-predict");
  const std::vector<std::string> costs{"--forward", "1,1,1,1.5",   "--backward", "2,2,2,3",         "--latency",
                                       "0.1",       "--bandwidth", "100",        "--message-bytes", "20"};
  std::vector<std::string> args{"-s", "1f1b", "-p", "4", "-m", "8"};
  args.insert(args.end(), costs.begin(), costs.end());
  traced(dir, args);
  // Each of ZB-V's 8 stages covers half of a measured stage; W is B/2 (1F1B ran B whole).
  const double direct = makespan_of({"-s", "zbv", "-p", "4", "-m", "8", "--costs-per", "chunk", "--forward",
                                     "0.5,0.5,0.5,0.5,0.5,0.5,0.75,0.75", "--backward", "1,1,1,1,1,1,1.5,1.5",
                                     "--latency", "0.1", "--bandwidth", "100", "--message-bytes", "20"});
  CHECK(makespan_of({"--calibrated-from", dir.file("t.json"), "-s", "zbv"}) == Approx(direct).epsilon(1e-12));
  // Unchanged, the calibration runs the traced schedule at the traced size: the traced step.
  CHECK(makespan_of({"--calibrated-from", dir.file("t.json")}) == Approx(makespan_of(args)).epsilon(1e-12));
  // Through the calibration file, the same.
  const CliRun written = cli({"trace", dir.file("t.json"), "--calibrate", dir.file("cal.json")});
  REQUIRE(written.status == 0);
  CHECK(makespan_of({"--calibrated-from", dir.file("cal.json"), "-s", "zbv"}) == Approx(direct).epsilon(1e-12));
  // Flags beside it win: another m.
  CHECK(makespan_of({"--calibrated-from", dir.file("cal.json"), "-m", "16"}) ==
        Approx(makespan_of({"-s", "1f1b", "-p", "4", "-m", "16", "--forward", "1,1,1,1.5", "--backward", "2,2,2,3",
                            "--latency", "0.1", "--bandwidth", "100", "--message-bytes", "20"}))
            .epsilon(1e-12));
}

TEST_CASE("resampling stages keeps the model's total and the measured stages when the count matches", "[trace]") {
  const std::vector<double> costs{1, 2, 3, 6};
  CHECK(ppsim::resample_stages(costs, 4) == costs);
  CHECK(ppsim::resample_stages(costs, 8) == std::vector<double>{0.5, 0.5, 1, 1, 1.5, 1.5, 3, 3});
  CHECK(ppsim::resample_stages(costs, 2) == std::vector<double>{3, 9});
  const std::vector<double> three = ppsim::resample_stages(costs, 3);
  CHECK(std::accumulate(three.begin(), three.end(), 0.0) == Approx(12));
}

TEST_CASE("the synthesised Kineto trace's idle time comes out as worked by hand", "[trace][profiler]") {
  ppsim::TraceStudyRequest request;
  request.files = {source_path("tests/data/traces/kineto_synthesised")};
  const ppsim::TraceStudy study = ppsim::study_trace(request);
  REQUIRE(study.run);
  CHECK(study.run->num_devices() == 2);
  CHECK(study.run->messages.size() == 4);
  CHECK(study.replay->step() == Approx(981));
  CHECK(study.replay->step() == study.run->step_end() - study.run->step_start());
  // Device 0: waits 200 + 101 for stage 1's backwards, 10 + 10 for their gradients, 10 before F1
  // (launch), then the all-reduce's 50. Device 1: 100 for stage 0's F0, 10 + 11 messages, 10 launch
  // before its all-reduce, which waits 250.
  const auto& d0 = study.replay->idle[0].cause;
  const auto& d1 = study.replay->idle[1].cause;
  CHECK(d0[0] == Approx(301));
  CHECK(d0[2] == Approx(20));
  CHECK(d0[3] == Approx(50));
  CHECK(d0[4] == Approx(10));
  CHECK(d1[0] == Approx(100));
  CHECK(d1[2] == Approx(21));
  CHECK(d1[3] == Approx(250));
  CHECK(d1[4] == Approx(10));
  // Kernels reconciled: 13 per rank; the actions' kernels are 600 us of each rank's.
  for (const ppsim::RankKernels& r : study.reading.ranks) {
    CHECK(r.kernels == 13);
    CHECK(r.in_actions == Approx(600));
    CHECK(r.busy == Approx(r.kernel_time));
  }
  CHECK(study.calibration->stages[1][0]->median == Approx(100e-6));
  CHECK(study.calibration->stages[1][1]->median == Approx(200e-6));
}

namespace {

std::string gunzipped(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  REQUIRE(file != nullptr);
  std::string text;
  char buffer[65536];
  int got = 0;
  while ((got = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(got));
  gzclose(file);
  return text;
}

}  // namespace

TEST_CASE("HolisticTraceAnalysis's real traces are read and each rank's kernels add up as the file says",
          "[trace][profiler]") {
  for (const char* name :
       {"sampled_rank-0.json.gz", "sampled_rank-1.json.gz", "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
        "mi250_minitoy_train_ROCm6_2_kineto.json.gz", "triton_example.json.gz", "simple_add.json.gz"}) {
    INFO(name);
    const std::string path = source_path(std::string("tests/data/traces/hta/") + name);
    const ppsim::TraceReading reading = ppsim::read_trace_files({path});
    CHECK_FALSE(reading.run);  // none of them runs a pipeline
    REQUIRE(reading.ranks.size() == 1);
    // The same sums from the whole document, parsed as one JSON value.
    const nlohmann::json document = nlohmann::json::parse(gunzipped(path));
    const nlohmann::json& events = document.is_array() ? document : document["traceEvents"];
    std::int64_t kernels = 0;
    double time = 0;
    double longest = 0;
    for (const auto& event : events) {
      if (event.value("cat", "") != "kernel" || event.value("ph", "") != "X") continue;
      ++kernels;
      time += event["dur"].get<double>();
      longest = std::max(longest, event["dur"].get<double>());
    }
    const ppsim::RankKernels& r = reading.ranks.front();
    CHECK(r.kernels == kernels);
    CHECK(r.kernel_time == Approx(time).epsilon(1e-12));
    CHECK(r.busy <= r.kernel_time + 1e-9);
    CHECK(r.busy >= longest * (1 - 1e-9));
    if (document.contains("distributedInfo")) CHECK(r.rank == document["distributedInfo"]["rank"].get<int>());
  }
  // A trace without pipeline actions says what it would need, and calibrating from it is refused.
  const CliRun read = cli({"trace", source_path("tests/data/traces/hta/sampled_rank-0.json.gz")});
  CHECK(read.status == 0);
  CHECK(read.out.find("no pipeline actions") != std::string::npos);
  const CliRun refused = cli({"run", "--calibrated-from", source_path("tests/data/traces/hta/sampled_rank-0.json.gz")});
  CHECK(refused.status == ppsim::kExitBadInput);
  CHECK(refused.err.find("--calibrated-from: ") != std::string::npos);
  CHECK(refused.err.find("no pipeline actions to calibrate from") != std::string::npos);
}

TEST_CASE("a real torch.profiler 1F1B step of four ranks replays to its recorded step", "[trace][profiler]") {
  const ppsim::TraceReading reading = ppsim::read_trace_files({source_path("tests/data/traces/torch_cpu_1f1b")});
  REQUIRE(reading.run);
  const ppsim::TraceRun& run = *reading.run;
  CHECK(run.num_devices() == 4);
  CHECK(run.num_stages() == 4);
  CHECK(run.num_microbatches == 4);
  CHECK(run.messages.size() == 24);
  // Its program is 1F1B's, action for action.
  CHECK(run.program().actions == ppsim::find_schedule("1f1b")->build({4, 4, 1}).actions);
  const ppsim::TraceReplay replay = ppsim::replay_trace(run);
  CHECK(replay.step() == Approx(run.step_end() - run.step_start()).epsilon(1e-12));
  check_parts_add_up(replay);
  // The legacy profiler's clocks start per process: aligned by the messages, none arrives before it left.
  CHECK(std::find_if(reading.notes.begin(), reading.notes.end(), [](const std::string& n) {
          return n.find("aligned by their messages") != std::string::npos;
        }) != reading.notes.end());
  for (const ppsim::TracedMessage& m : run.messages) CHECK(m.arrival >= m.depart_start);
}

TEST_CASE("a damaged trace is refused with its file and byte", "[trace][errors]") {
  const auto refused = [](const std::string& text) { return refusal([&] { ppsim::read_trace_text(text, "t.json"); }); };
  CHECK(refused(R"({"traceEvents":[{"name":"a","ph":"X","ts":1,)") ==
        "t.json: byte 45: not JSON: unexpected end of input; expected string literal");
  CHECK(refused(R"({"traceEvents":[{"name":"a","ph":"X","ts":"soon"}]})") ==
        "t.json: byte 48: event 0: \"ts\" must be a finite number of microseconds");
  CHECK(refused(R"({"events":[]})") ==
        "t.json: no traceEvents array: not a Chrome trace (torch.profiler's export_chrome_trace, ppsim's --trace)");
  CHECK(refused(
            R"({"traceEvents":[{"name":"0F0","cat":"compute","ph":"X","pid":1,"ts":0,"dur":1,"args":{"stage":0}}]})") ==
        "t.json: byte 97: compute slice '0F0': needs args stage, microbatch and op");
  // One value longer than 16 MiB ends the reading there, without holding the rest.
  const std::string huge = R"({"traceEvents":[{"name":")" + std::string(17u << 20, 'x') + R"("}]})";
  CHECK(refused(huge).find("a single JSON value longer than 16 MiB") != std::string::npos);
  // A truncated gzip file.
  const TempDir dir("trace-gzip");
  const std::string whole = ppsim::test::read_whole(source_path("tests/data/traces/hta/triton_example.json.gz"));
  {
    std::ofstream cut(dir.file("cut.json.gz"), std::ios::binary);
    cut << whole.substr(0, whole.size() / 2);
  }
  const CliRun run = cli({"trace", dir.file("cut.json.gz")});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err.find("cut.json.gz: byte ") != std::string::npos);
  CHECK(run.err.find("the gzip stream ends early (a truncated file)") != std::string::npos);
  CHECK(cli({"trace", dir.file("missing.json")}).err.find("missing.json: cannot open: No such file or directory") !=
        std::string::npos);
}

TEST_CASE("Megatron-LM's timer logs calibrate per-micro-batch costs in each of their forms", "[trace][timers]") {
  const std::string dir = source_path("tests/data/timers/");
  ppsim::TimerHints hints;
  hints.p = 4;
  hints.m = 8;
  // minmax: the last block, the mean of min and max over m.
  const ppsim::Calibration minmax = ppsim::calibrate_timers(ppsim::read_timer_log(dir + "megatron_minmax.log"), hints);
  CHECK(minmax.stages.size() == 4);
  CHECK(minmax.stages[0][0]->median == Approx((300.0 + 360.0) / 2 / 8 * 1e-3));
  CHECK(minmax.stages[3][1]->median == Approx((600.0 + 720.0) / 2 / 8 * 1e-3));
  CHECK(*minmax.measured_step == Approx(1.092));
  hints.step = 0;
  CHECK(*ppsim::calibrate_timers(ppsim::read_timer_log(dir + "megatron_minmax.log"), hints).measured_step ==
        Approx(1.10285));
  hints.step = -1;
  // all: each rank's, the pipeline outermost in Megatron's rank order.
  const ppsim::Calibration all = ppsim::calibrate_timers(ppsim::read_timer_log(dir + "megatron_all.log"), hints);
  CHECK(all.stages[2][0]->median == Approx(300.0 / 8 * 1e-3));
  CHECK(all.stages[3][0]->median == Approx(400.0 / 8 * 1e-3));
  CHECK(all.stages[3][1]->median == Approx(800.0 / 8 * 1e-3));
  // The one-line form of before August 2022 (NVIDIA/nccl#743).
  const ppsim::TimerLog old = ppsim::read_timer_log(dir + "nccl743_one_line.log");
  REQUIRE(old.blocks.size() == 2);
  CHECK(*old.blocks[0].timers.at("forward-compute").max == Approx(193.77));
  CHECK(old.blocks[0].iteration == 10);
  // The zero-bubble runtime's profile: F, B (ppsim's I) and W per chunk, in microseconds.
  const ppsim::Calibration zb =
      ppsim::calibrate_timers(ppsim::read_timer_log(dir + "zero_bubble_conclusion.log"), hints);
  CHECK(zb.stages[3][0]->median == Approx(1600e-6));
  CHECK(zb.stages[3][2]->median == Approx(1800e-6));
  CHECK(zb.stages[3][3]->median == Approx(1250e-6));
  CHECK(zb.backward()[3] == Approx(3050e-6));
  CHECK(zb.latency->median == Approx(152e-6));
}

TEST_CASE("a timer log without what it needs is refused naming the flag or the line", "[trace][timers][errors]") {
  const std::string log = source_path("tests/data/timers/megatron_minmax.log");
  CliRun run = cli({"trace", log, "-p", "4"});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err.rfind("ppsim: error: -m: a Megatron-LM timer log does not say how many micro-batches ran", 0) == 0);
  run = cli({"run", "--calibrated-from", log, "-m", "8"});
  CHECK(run.err.find("--calibrated-from: -p: a Megatron-LM timer log does not say how many pipeline stages ran") !=
        std::string::npos);
  const auto refused = [](const std::string& text) {
    return refusal([&] { ppsim::read_timer_log_text(text, "log"); });
  };
  CHECK(refused("(min, max) time across ranks (ms):\n    forward-compute ....: (3.0, 1.0)\n") ==
        "log: line 2: forward-compute: not a (min, max) pair of times: '(3.0, 1.0)'");
  CHECK(refused("hello\n") ==
        "log: no Megatron-LM timer block with forward-backward, forward-compute or backward-compute "
        "(--timing-log-level 2 prints them) and no zero-bubble profiling conclusion");
  CHECK(refused("rank 1 profiling conclusion: [(1,), (2,)]\n") ==
        "log: line 1: profiling conclusion: needs [(F per chunk), (B per chunk), (W per chunk), communication, ...]");
}

TEST_CASE("ppsim trace writes its table, JSON, calibration and picture, and nothing when it fails", "[trace][cli]") {
  const TempDir dir("trace-cli");
  REQUIRE(cli({"run", "-s", "zbv", "-p", "4", "-m", "8", "--trace", dir.file("t.json")}).status == 0);
  const CliRun table =
      cli({"trace", dir.file("t.json"), "--svg", dir.file("idle.svg"), "--calibrate", dir.file("c.json")});
  REQUIRE(table.status == 0);
  CHECK(table.out.find("replayed ") != std::string::npos);
  CHECK(table.out.find("(equal)") != std::string::npos);
  const std::string svg = ppsim::test::read_whole(dir.file("idle.svg"));
  CHECK(svg.find("<title>bubble</title>") != std::string::npos);
  CHECK_FALSE(ppsim::test::xml_error(svg));
  const nlohmann::ordered_json calibration = nlohmann::ordered_json::parse(ppsim::test::read_whole(dir.file("c.json")));
  CHECK(calibration["ppsim-calibration"] == 1);
  CHECK(calibration["schedule"] == "zbv");
  CHECK(calibration["stages"].size() == 8);
  // Read back, the calibration is the same.
  CHECK(ppsim::calibration_json(ppsim::calibration_from_json(calibration, "c.json")).dump() == calibration.dump());
  const CliRun json = cli({"trace", dir.file("t.json"), "--format", "json"});
  const nlohmann::json figures = nlohmann::json::parse(json.out);
  CHECK(figures["step"]["recorded"] == figures["step"]["replayed"]);
  CHECK(figures["idle"].size() == 4);
  // A failure leaves the files it would have written as they were.
  const CliRun failed = cli({"trace", source_path("tests/data/traces/hta/triton_example.json.gz"), "--svg",
                             dir.file("idle.svg"), "--calibrate", dir.file("new.json")});
  CHECK(failed.status == ppsim::kExitBadInput);
  CHECK(failed.err == "ppsim: error: --calibrate: the trace holds no pipeline actions to calibrate from\n");
  CHECK_FALSE(std::filesystem::exists(dir.file("new.json")));
  CHECK(ppsim::test::read_whole(dir.file("idle.svg")).find("<title>bubble</title>") != std::string::npos);
  // A bad calibration file names its JSON path.
  {
    std::ofstream bad(dir.file("bad.json"));
    bad << R"({"ppsim-calibration": 1, "stages": [{"F": {"median": -1, "spread": 0, "count": 1}}]})";
  }
  const CliRun bad = cli({"run", "--calibrated-from", dir.file("bad.json")});
  CHECK(bad.status == ppsim::kExitBadInput);
  CHECK(bad.err.find("bad.json: $.stages[0].F.median: must be a number from 0 to 1e15") != std::string::npos);
  // And with --model, which derives every cost itself, it is refused.
  CHECK(cli({"run", "--calibrated-from", dir.file("c.json"), "--model", "llama3-8b"})
            .err.find("--calibrated-from: cannot be combined with --model") != std::string::npos);
}

TEST_CASE("hostile traces are refused before they cost memory or time", "[trace][errors]") {
  const auto refused = [](const std::string& text) { return refusal([&] { ppsim::read_trace_text(text, "t.json"); }); };
  const std::string op =
      R"({"name":"0F0","cat":"compute","ph":"X","pid":1,"tid":1,"ts":0,"dur":1,"args":{"stage":0,"microbatch":0,"op":"F"}})";
  const std::string names = R"({"name":"process_name","ph":"M","pid":1,"args":{"name":"1f1b d0"}},)";
  // A device named but running nothing (each would be walked for the idle time).
  CHECK(refused(R"({"traceEvents":[)" + names +
                R"({"name":"process_name","ph":"M","pid":2,"args":{"name":"1f1b d65535"}},)" + op + "]}") ==
        "t.json: device 1 runs no op (each device of the run must)");
  // A lone op of a far micro-batch: the tables a step needs grow with m.
  CHECK(
      refused(
          R"({"traceEvents":[)" + names +
          R"({"name":"0F0","cat":"compute","ph":"X","pid":1,"ts":0,"dur":1,"args":{"stage":0,"microbatch":9999998,"op":"F"}}]})") ==
      "t.json: micro-batch 9999998 is named, but the step runs 1 ops: micro-batches count from 0 on every stage");
  CHECK(refused(R"({"traceEvents":[{"name":"PP:0F0","cat":"user_annotation","ph":"X","pid":1,"ts":0,"dur":1},)"
                R"({"name":"PP:0F9999999","cat":"user_annotation","ph":"X","pid":1,"ts":2,"dur":1}]})")
            .find("micro-batches count from 0 on every stage") != std::string::npos);
  // Times whose sums would overflow.
  CHECK(refused(R"({"traceEvents":[{"name":"a","ph":"X","ts":1e300,"dur":1}]})") ==
        "t.json: byte 48: event 0: \"ts\" must be a finite number of microseconds");
  // Nesting without end.
  CHECK(refused(R"({"traceEvents":[{"args":)" + std::string(600, '[')) ==
        "t.json: byte 534: values nested deeper than 512 levels");
  // A calibration, gzipped or not, is read whole; one that is not JSON names its byte.
  const TempDir dir("trace-hostile");
  {
    std::ofstream bad(dir.file("c.json"));
    bad << R"({"ppsim-calibration": 1, "stages": [)";
  }
  CHECK(cli({"run", "--calibrated-from", dir.file("c.json")}).err.find("c.json: byte 37: not JSON") !=
        std::string::npos);
}
