// SPDX-License-Identifier: Apache-2.0
// torch.distributed.pipelining's lowered schedules (format "compute_comms", what _dump_csv writes by
// default). As torch's runtime runs them, a SEND hands its message to the link where it stands and a
// RECV is posted there and waited for by the op that uses the message; with wait_at_receives a device
// also waits at each RECV. UNSHARD/RESHARD/REDUCE_GRAD cost only on stages the cost model shards (FSDP).
// validate_comm_actions refuses what torch's runtime would refuse.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/stage_table_cost_model.hpp"
#include "models/uniform_cost_model.hpp"
#include "schedules/comm_action.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule_file.hpp"
#include "schedules/torch_lowering.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "support/golden.hpp"
#include "support/same_figures.hpp"

namespace {

using ppsim::CommAction;
using ppsim::CommOp;
using ppsim::Op;
using ppsim::Program;

// The tightest lowering: each receive right before the op that uses its message (for an overlapped
// pair, before the pair), each send right after the op that makes it. Honouring it can delay nothing.
Program lowered_tightly(Program program) {
  const ppsim::PipelineShape shape = program.pipeline_shape();
  const auto device_of = [&](int stage) { return program.stage_device[static_cast<std::size_t>(stage)]; };
  program.comms.assign(program.actions.size(), {});
  for (std::size_t d = 0; d < program.actions.size(); ++d) {
    const auto& list = program.actions[d];
    auto& comms = program.comms[d];
    const auto dev = static_cast<int>(d);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::size_t cell = i > 0 && list[i - 1].fused_with_next ? i - 1 : i;  // a pair is one cell
      const ppsim::Action& a = list[i];
      if (a.op == Op::kForward && !shape.first(a.stage) && device_of(a.stage - 1) != dev) {
        comms.push_back(CommAction{cell, CommOp::kRecvF, a.stage, a.microbatch});
      }
      if (ppsim::is_backward_input(a.op) && !shape.last(a.stage) && device_of(a.stage + 1) != dev) {
        comms.push_back(CommAction{cell, CommOp::kRecvB, a.stage, a.microbatch});
      }
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const ppsim::Action& a = list[i];
      const std::size_t after = a.fused_with_next ? i + 2 : i + 1;
      if (a.op == Op::kForward && !shape.last(a.stage) && device_of(a.stage + 1) != dev) {
        comms.push_back(CommAction{after, CommOp::kSendF, a.stage, a.microbatch});
      }
      if (ppsim::is_backward_input(a.op) && !shape.first(a.stage) && device_of(a.stage - 1) != dev) {
        comms.push_back(CommAction{i > 0 && list[i - 1].fused_with_next ? i + 1 : after, CommOp::kSendB, a.stage,
                                   a.microbatch});
      }
    }
    std::stable_sort(comms.begin(), comms.end(),
                     [](const CommAction& x, const CommAction& y) { return x.before < y.before; });
  }
  return program;
}

ppsim::Result run(const Program& program, const ppsim::CostModel& costs, ppsim::CommMode comm,
                  bool wait_at_receives = false) {
  ppsim::Engine engine;
  ppsim::EngineOptions options;
  options.comm = comm;
  options.wait_at_receives = wait_at_receives;
  const ppsim::SimulationOutcome outcome = engine.run(program, costs, options);
  REQUIRE(outcome.result.has_value());
  return *outcome.result;
}

// Every registry schedule that accepts p and m at its own v, built.
template <typename Check>
void for_each_registry_program(int p, int m, Check check) {
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    if (!info.generated()) continue;
    const ppsim::ScheduleParams params{p, m, info.default_v};
    if (info.check(params)) continue;
    INFO(info.name << " p=" << p << " m=" << m);
    check(info.build(params));
  }
}

Program parsed(const std::string& csv, int pipelines = 1, bool layerwise_pairs = false, int units = 1) {
  ppsim::ScheduleFileParse parse = ppsim::parse_schedule_csv(csv);
  INFO(csv);
  REQUIRE(parse.ok());
  // torch's CSV has no place for DualPipe's second pipeline, for pairs that interleave layer by
  // layer or for Seq1F1B's slices (a JSON file states them): given here.
  parse.program.num_pipelines = pipelines;
  parse.program.layerwise_pairs = layerwise_pairs;
  parse.program.units_per_microbatch = units;
  return parse.program;
}

// GPipe at p = 2, m = 2 as torch lowers it. Worked by hand from schedules.py: _add_unshard_reshard
// puts 0UNSHARD before the first op and 0RESHARD after the last; _add_reduce_grad puts 0REDUCE_GRAD
// after stage 0's m-th B; _add_send_recv visits the ranks in turn, schedules a rank's next op once
// its input is received, puts the SEND right after it and the RECV at the end of the receiver's list.
constexpr const char* kTorchGpipeP2M2 =
    "0UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0REDUCE_GRAD,0RESHARD\r\n"
    "1UNSHARD,1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1,1REDUCE_GRAD,1RESHARD\r\n";

}  // namespace

TEST_CASE("Communication actions read and print in torch's notation, exactly", "[lowered]") {
  for (const std::string text : {"0SEND_F1", "12RECV_F0", "3SEND_B7", "0RECV_B10", "0UNSHARD", "4RESHARD", "2REDUCE_GRAD"}) {
    const ppsim::CommParse parse = ppsim::parse_comm_action(text);
    INFO(text);
    REQUIRE(parse.ok);
    CHECK(ppsim::to_string(parse.action) == text);
  }
  for (const std::string text : {"0SEND_F", "SEND_F1", "0UNSHARD1", "01RECV_B1", "0RECV_B01", "0REDUCE_GRAD0"}) {
    const ppsim::CommParse parse = ppsim::parse_comm_action(text);
    INFO(text);
    CHECK(parse.recognized);
    CHECK_FALSE(parse.ok);
  }
  CHECK_FALSE(ppsim::parse_comm_action("0F1").recognized);
}

TEST_CASE("torch's lowered GPipe reads, writes back byte for byte, and replays as its compute does", "[lowered]") {
  const Program program = parsed(kTorchGpipeP2M2);
  REQUIRE(program.comms.size() == 2);
  CHECK(program.comms[0].size() == 7);
  CHECK(ppsim::write_schedule_csv(program) == kTorchGpipeP2M2);
  CHECK_FALSE(ppsim::validate_program(program).has_value());
  CHECK_FALSE(ppsim::validate_comm_actions(program).has_value());
  // Every receive sits right before its use: honouring them changes nothing. (m + p - 1)(F + B) = 9.
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{});
  Program compute_only = program;
  compute_only.comms.clear();
  const ppsim::Result honoured = run(program, costs, ppsim::CommMode::kOverlap);
  CHECK(honoured.makespan == 9);
  ppsim::test::check_same_figures(honoured, run(compute_only, costs, ppsim::CommMode::kOverlap));
}

TEST_CASE("Every registry schedule lowered with each receive right before its use replays its figures exactly",
          "[lowered]") {
  const auto [p, m] = GENERATE(table<int, int>({{2, 4}, {4, 8}, {3, 7}}));
  const ppsim::CommMode comm = GENERATE(ppsim::CommMode::kOverlap, ppsim::CommMode::kBlocking);
  for_each_registry_program(p, m, [&](const Program& program) {
    const Program lowered = lowered_tightly(program);
    REQUIRE_FALSE(ppsim::validate_comm_actions(lowered).has_value());
    // Written and read back, as a file would be.
    const Program reread =
        parsed(ppsim::write_schedule_csv(lowered), lowered.num_pipelines, lowered.layerwise_pairs,
               lowered.units_per_microbatch);
    CHECK(reread.comms == lowered.comms);
    ppsim::UniformCosts uniform;
    uniform.message_bytes = ppsim::ByteCount{50};
    uniform.bandwidth = ppsim::Bandwidth{100};
    uniform.latency = ppsim::Duration{0.25};
    uniform.activation_bytes = ppsim::ByteCount{1000};
    const ppsim::UniformCostModel costs(uniform);
    ppsim::test::check_same_figures(run(reread, costs, comm), run(program, costs, comm));
  });
}

TEST_CASE("A receive placed before an earlier op holds the device only when receives are waited at", "[lowered]") {
  // 1F1B order on device 1; device 0 receives 1B0's gradient before it runs 0F1. F = 1, B = 2:
  // 0F0 0-1, 1F0 1-2, 1B0 2-4, 0F1 waits to 4 (compute only: 1-2), so 1F1 runs 5-6, 1B1 6-8, 0B1 8-10.
  const Program early = parsed("0F0,0SEND_F0,0RECV_B0,0F1,0SEND_F1,0B0,0RECV_B1,0B1\n"
                               "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n");
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{});
  Program compute_only = early;
  compute_only.comms.clear();
  CHECK(run(early, costs, ppsim::CommMode::kOverlap, /*wait_at_receives=*/true).makespan == 10);
  CHECK(run(compute_only, costs, ppsim::CommMode::kOverlap).makespan == 9);
  // As torch runs it, the receive is only posted there: 0F1 runs at 1, as without it.
  ppsim::test::check_same_figures(run(early, costs, ppsim::CommMode::kOverlap),
                                  run(compute_only, costs, ppsim::CommMode::kOverlap));
}

TEST_CASE("A send placed after a later op hands its message to the link only there", "[lowered]") {
  // 0SEND_F0 after 0F1: stage 1's first forward cannot start before 2, the end of 0F1.
  const Program late = parsed("0F0,0F1,0SEND_F0,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
                              "1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n");
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{});
  const ppsim::Result result = run(late, costs, ppsim::CommMode::kOverlap);
  CHECK(result.per_device[1].start == 2);
  CHECK(result.makespan == 10);
}

TEST_CASE("Lowered schedules that torch's runtime would refuse are refused, naming the action", "[lowered]") {
  struct Case {
    const char* csv;
    const char* message;
  };
  const Case cases[] = {
      {"0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n1RECV_F0,1F0,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n",
       "0SEND_F1 has no 1RECV_F1 on device 1"},
      {"0F0,0SEND_F0,0F1,0RECV_B0,0B0,0RECV_B1,0B1\n1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n",
       "no 0SEND_F1 on device 0 hands 0F1's activation to the link that 1RECV_F1 waits on (a lowered schedule names "
       "every send and receive)"},
      {"0SEND_F0,0F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n",
       "0SEND_F0 comes before 0F0, which makes what it sends"},
      {"0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n1F0,1RECV_F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n",
       "1RECV_F0 comes after 1F0, which needs what it receives"},
      {"0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
       "1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1,1SEND_B1\n",
       "1SEND_B1 appears twice"},
      {"0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,1UNSHARD\n"
       "1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n",
       "1UNSHARD is on device 0, but stage 1 is on device 1"},
  };
  for (const Case& c : cases) {
    INFO(c.csv);
    const Program program = parsed(c.csv);
    REQUIRE_FALSE(ppsim::validate_program(program).has_value());
    const auto problem = ppsim::validate_comm_actions(program);
    REQUIRE(problem.has_value());
    CHECK(problem->message == c.message);
    CHECK(problem->where.has_value());
  }
}

TEST_CASE("A receive waited at that can never be satisfied is a deadlock that names it", "[lowered]") {
  // Device 0 waits for 1B0's gradient before sending 0F1; device 1 waits for 0F1 before 1B0.
  const Program cycle = parsed("0F0,0SEND_F0,0RECV_B0,0F1,0SEND_F1,0B0,0RECV_B1,0B1\n"
                               "1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n");
  ppsim::Engine engine;
  const ppsim::UniformCostModel costs(ppsim::UniformCosts{});
  ppsim::EngineOptions waiting;
  waiting.wait_at_receives = true;
  const ppsim::SimulationOutcome outcome = engine.run(cycle, costs, waiting);
  REQUIRE(outcome.deadlock.has_value());
  CHECK(outcome.deadlock->summary() ==
        "deadlock: device 0 at step 1 (0F1) waits for the message of 0RECV_B0 (a receive blocks until its message "
        "arrives); device 1 at step 1 (1F1) waits for the message of 1RECV_F1 (a receive blocks until its message "
        "arrives)");
  // Posted, as torch posts it, the same receive holds nothing up.
  CHECK(engine.run(cycle, costs).result.has_value());
}

TEST_CASE("export --lowered lowers as torch does: the hand-lowered GPipe and the golden files, byte for byte",
          "[lowered]") {
  const ppsim::Program gpipe = ppsim::find_schedule("gpipe")->build({2, 2, 1});
  CHECK(ppsim::write_schedule_csv(ppsim::lower_like_torch(gpipe)) == kTorchGpipeP2M2);
  // Written from torch's lowering rules (schedules/torch_lowering.hpp), p = 4, m = 8.
  struct Golden {
    const char* schedule;
    ppsim::ScheduleParams params;
    const char* file;
  };
  const Golden goldens[] = {
      {"gpipe", {2, 2, 1}, "gpipe_p2_m2.csv"},
      {"gpipe", {4, 8, 1}, "gpipe_p4_m8.csv"},
      {"1f1b", {4, 8, 1}, "1f1b_p4_m8.csv"},
      {"interleaved-1f1b", {4, 8, 2}, "interleaved-1f1b_p4_m8.csv"},
      {"zbv", {4, 8, 2}, "zbv_p4_m8.csv"},
      {"dualpipev", {4, 8, 2}, "dualpipev_p4_m8.csv"},
  };
  for (const Golden& golden : goldens) {
    INFO(golden.file);
    const ppsim::Program lowered = ppsim::lower_like_torch(ppsim::find_schedule(golden.schedule)->build(golden.params));
    CHECK(ppsim::write_schedule_csv(lowered) ==
          ppsim::read_text(std::string(PPSIM_GOLDEN_DIR) + "/lowered/" + golden.file));
  }
}

TEST_CASE("Every registry schedule lowered as torch does reads back, is valid, runs as its compute, and no faster "
          "when receives are waited at",
          "[lowered]") {
  const auto [p, m] = GENERATE(table<int, int>({{2, 4}, {4, 8}, {3, 9}, {8, 16}}));
  const ppsim::CommMode comm = GENERATE(ppsim::CommMode::kOverlap, ppsim::CommMode::kBlocking);
  for_each_registry_program(p, m, [&](const Program& program) {
    const Program lowered = ppsim::lower_like_torch(program);
    CHECK(lowered.actions == program.actions);
    REQUIRE_FALSE(ppsim::validate_comm_actions(lowered).has_value());
    const Program reread =
        parsed(ppsim::write_schedule_csv(lowered), lowered.num_pipelines, lowered.layerwise_pairs,
               lowered.units_per_microbatch);
    CHECK(reread.comms == lowered.comms);
    // Every receive right before the op that uses it (its `before` is that op's position)?
    bool tight = true;
    for (std::size_t d = 0; d < lowered.comms.size(); ++d) {
      for (const CommAction& c : lowered.comms[d]) {
        if (!ppsim::is_recv(c.op)) continue;
        const auto& list = lowered.actions[d];
        const bool forward = c.op == CommOp::kRecvF;
        const std::size_t at = c.before < list.size() && list[c.before].fused_with_next && c.before + 1 < list.size() &&
                                       !(list[c.before].stage == c.stage && list[c.before].microbatch == c.microbatch &&
                                         (list[c.before].op == Op::kForward) == forward)
                                   ? c.before + 1
                                   : c.before;
        tight = tight && at < list.size() && list[at].stage == c.stage && list[at].microbatch == c.microbatch &&
                (forward ? list[at].op == Op::kForward : ppsim::is_backward_input(list[at].op));
      }
    }
    ppsim::UniformCosts uniform;
    uniform.message_bytes = ppsim::ByteCount{50};
    uniform.bandwidth = ppsim::Bandwidth{100};
    uniform.latency = ppsim::Duration{0.25};
    const ppsim::UniformCostModel costs(uniform);
    const ppsim::Result compute = run(program, costs, comm);
    // As torch runs it (each SEND right after its op, receives posted): the compute's own figures.
    ppsim::test::check_same_figures(run(reread, costs, comm), compute);
    // Waiting at every receive can only delay, and delays nothing when each sits right before its use.
    const ppsim::Result waited = run(reread, costs, comm, /*wait_at_receives=*/true);
    CHECK(waited.makespan >= compute.makespan);
    if (tight) CHECK(waited.makespan == compute.makespan);
  });
}

namespace {

// Uniform costs whose stages are sharded as FSDP shards them: each UNSHARD's all-gather takes
// `gather`, each REDUCE_GRAD's reduce-scatter `reduce`, with `parameters` and `gradients` bytes held.
class ShardedCosts final : public ppsim::CostModel {
 public:
  ShardedCosts(const ppsim::UniformCosts& uniform, ppsim::ShardingCosts sharding)
      : uniform_(uniform), sharding_(sharding) {}
  double compute_time(Op op, int stage) const override { return uniform_.compute_time(op, stage); }
  std::int64_t activation_bytes(int stage) const override { return uniform_.activation_bytes(stage); }
  std::int64_t weight_stash_bytes(int stage) const override { return uniform_.weight_stash_bytes(stage); }
  double weight_stash_fraction() const override { return uniform_.weight_stash_fraction(); }
  std::int64_t message_bytes(int from, int to) const override { return uniform_.message_bytes(from, to); }
  std::int64_t static_bytes(int device) const override { return uniform_.static_bytes(device); }
  ppsim::LinkParams link(int src, int dst) const override { return uniform_.link(src, dst); }
  ppsim::ShardingCosts sharding(int) const override { return sharding_; }

 private:
  ppsim::UniformCostModel uniform_;
  ppsim::ShardingCosts sharding_;
};

}  // namespace

TEST_CASE("FSDP's all-gather delays a sharded stage's first op and its reduce-scatter ends the device's step",
          "[lowered][fsdp]") {
  // torch's lowered GPipe, p = 2, m = 2, F = 1, B = 2; all-gathers of 0.5, reduce-scatters of 0.25.
  // d0: UNSHARD 0-0.5, 0F0 0.5-1.5, 0F1 1.5-2.5; d1: 1F0 1.5-2.5, 1F1 2.5-3.5, 1B0 3.5-5.5, 1B1
  // 5.5-7.5, REDUCE_GRAD 7.5-7.75; d0: 0B0 5.5-7.5, 0B1 7.5-9.5, REDUCE_GRAD 9.5-9.75. The step
  // begins with the all-gathers at 0: 9.75, against 9 for the compute alone.
  const Program program = parsed(kTorchGpipeP2M2);
  ppsim::UniformCosts uniform;
  uniform.activation_bytes = ppsim::ByteCount{10};
  uniform.static_bytes = ppsim::ByteCount{1000};
  const ShardedCosts costs(uniform, ppsim::ShardingCosts{.gather_time = 0.5,
                                                         .reduce_time = 0.25,
                                                         .parameter_bytes = 100,
                                                         .gradient_bytes = 200});
  const ppsim::CommMode comm = GENERATE(ppsim::CommMode::kOverlap, ppsim::CommMode::kBlocking);
  const bool wait_at_receives = GENERATE(false, true);
  const ppsim::Result result = run(program, costs, comm, wait_at_receives);
  CHECK(result.makespan == 9.75);
  REQUIRE(result.per_device.size() == 2);
  CHECK(result.per_device[0].start == 0);
  CHECK(result.per_device[0].end == 9.75);
  CHECK(result.per_device[1].end == 7.75);
  CHECK(result.per_device[0].busy == 6);  // collectives are not compute
  // Both micro-batches' stashes (20), the unsharded parameters (100) and, from the first B, the
  // unsharded gradients (200), over the static 1000.
  for (const ppsim::DeviceFigures& device : result.per_device) {
    CHECK(device.peak_activation_bytes == 20);
    CHECK(device.peak_memory_bytes == 1320);
  }
  // The same program on stages that are not sharded: the compute's own figures, as torch skips
  // the FSDP actions of a module that is not an FSDPModule.
  Program compute_only = program;
  compute_only.comms.clear();
  const ppsim::UniformCostModel plain(uniform);
  ppsim::test::check_same_figures(run(program, plain, comm, wait_at_receives), run(compute_only, plain, comm));
}

TEST_CASE("An engine that replayed a sharded lowered program then sweeps a generated schedule reports that "
          "schedule's own figures",
          "[lowered][fsdp][regression]") {
  // The sweep used to keep the lowered run's FSDP state, and its summary read that run's devices
  // (freed memory under ASan, wrong starts otherwise).
  ppsim::UniformCosts uniform;
  uniform.activation_bytes = ppsim::ByteCount{10};
  const ShardedCosts sharded(uniform, ppsim::ShardingCosts{.gather_time = 0.5, .reduce_time = 0.25});
  const ppsim::UniformCostModel plain(uniform);
  const ppsim::ScheduleInfo* info = ppsim::find_schedule("1f1b");
  REQUIRE(info != nullptr);
  const ppsim::ScheduleStreams streams = info->streams({4, 8, 1});
  ppsim::Engine fresh;
  const ppsim::SimulationOutcome alone = fresh.run(streams, plain);
  REQUIRE(alone.result.has_value());
  ppsim::Engine reused;
  REQUIRE(reused.run(parsed(kTorchGpipeP2M2), sharded).result.has_value());
  const ppsim::SimulationOutcome after = reused.run(info->streams({4, 8, 1}), plain);
  REQUIRE(after.result.has_value());
  ppsim::test::check_same_figures(*after.result, *alone.result);
}

TEST_CASE("FSDP's collectives queue on one stream: an all-gather waits for the one before it, compute for both",
          "[lowered][fsdp]") {
  // One device with two stages, F = 1, B = 2, all-gathers 1, reduce-scatters 3:
  // UNSHARD0 0-1, UNSHARD1 behind it 1-2; 0F0 1-2 (its gather done); 1F0 2-3; 1B0 3-5;
  // REDUCE_GRAD1 5-8, which the compute waits for; 0B0 8-10; REDUCE_GRAD0 10-13.
  const Program program =
      parsed("0UNSHARD,1UNSHARD,0F0,1F0,1B0,1REDUCE_GRAD,0B0,0REDUCE_GRAD,0RESHARD,1RESHARD\n");
  REQUIRE(program.num_stages() == 2);
  REQUIRE_FALSE(ppsim::validate_program(program).has_value());
  REQUIRE_FALSE(ppsim::validate_comm_actions(program).has_value());
  const ShardedCosts costs(ppsim::UniformCosts{}, ppsim::ShardingCosts{.gather_time = 1, .reduce_time = 3});
  const ppsim::Result result = run(program, costs, ppsim::CommMode::kOverlap);
  CHECK(result.makespan == 13);
  CHECK(result.per_device[0].busy == 6);
  CHECK(result.bubble_ratio == Approx(7.0 / 13));
}

TEST_CASE("Per block, a stage inside a pipeline pays its units' gathers in its first forward only",
          "[lowered][fsdp]") {
  // torch's lowered GPipe, p = 2, m = 2, F = 1, B = 2. UNSHARD gathers each stage's first unit in
  // 0.5; its first forward takes 0.3 longer for the units it gathers as it goes, later ones none.
  // d0: 0F0 0.5-1.8, 0F1 1.8-2.8; d1: 1F0 1.8-3.1, 1F1 3.1-4.1, 1B0 4.1-6.1, 1B1 6.1-8.1,
  // REDUCE_GRAD 8.1-8.35; d0: 0B0 6.1-8.1, 0B1 8.1-10.1, REDUCE_GRAD 10.1-10.35.
  const Program program = parsed(kTorchGpipeP2M2);
  ppsim::ShardingCosts sharding{.gather_time = 0.5, .reduce_time = 0.25, .per_block = true};
  sharding.gather_extra = {0.3, 0.2, 0.2, 0};
  sharding.cold_forward_extra = 0.7;
  const ShardedCosts costs(ppsim::UniformCosts{}, sharding);
  const ppsim::Result result = run(program, costs, ppsim::CommMode::kOverlap);
  CHECK(result.makespan == Approx(10.35));
  CHECK(result.per_device[1].end == Approx(8.35));
  CHECK(result.per_device[0].busy == 6);  // what the gathers add is waiting, not compute
}

TEST_CASE("Per block with reshard after forward, every forward gathers again, and a stage alone every backward too",
          "[lowered][fsdp]") {
  // One stage, m = 2, F = 1, B = 2; UNSHARD 0-0.5. 0F0 has its first unit (+0.1); 0F1 gathers
  // all of them (+0.4). A backward gathers (+0.2). Inside a pipeline the stage then stays gathered
  // until REDUCE_GRAD; alone each backward gathers again and its reduce-scatters show (+0.05).
  const Program program = parsed("0UNSHARD,0F0,0F1,0B0,0B1,0REDUCE_GRAD,0RESHARD\n");
  ppsim::ShardingCosts sharding{.gather_time = 0.5, .reduce_time = 0.25, .per_block = true, .regather = true};
  sharding.gather_extra = {0.1, 0.2, 0.2, 0};
  sharding.cold_forward_extra = 0.4;
  sharding.reduce_extra = {0, 0.05, 0, 0.05};
  // 0F0 0.5-1.6, 0F1 1.6-3.0, 0B0 3.0-5.2, 0B1 5.2-7.2, REDUCE_GRAD 7.2-7.45.
  CHECK(run(program, ShardedCosts(ppsim::UniformCosts{}, sharding), ppsim::CommMode::kOverlap).makespan ==
        Approx(7.45));
  // Alone: 0B0 3.0-5.25, 0B1 5.25-7.5, REDUCE_GRAD (the last unit's reduce-scatter) 7.5-7.75.
  sharding.reduce_per_op = true;
  CHECK(run(program, ShardedCosts(ppsim::UniformCosts{}, sharding), ppsim::CommMode::kOverlap).makespan ==
        Approx(7.75));
}
