// SPDX-License-Identifier: Apache-2.0
// Data-parallel collectives against the simulated pipeline (models/transformer/data_parallel.hpp):
// Megatron's buckets, when each is ready, the one communication stream, what stays exposed, and
// the overlapped parameter all-gather. An ideal machine (no latency, every efficiency 1) makes each
// collective a plain quotient of bytes, so every figure below is computed by hand.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "models/transformer/data_parallel.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/static_memory.hpp"
#include "models/transformer/training_step.hpp"
#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "sim/engine.hpp"
#include "support/ideal_machine.hpp"

using Catch::Matchers::WithinRel;
using ppsim::StageTimes;
using ppsim::TrainingLayout;

namespace {

using ppsim::test::gpt;
using ppsim::test::ideal_machine;
using ppsim::test::kNvlink;

// d = 4 on NVLink, t = 1: a reduce-scatter of P parameters is 3 ring steps of 4P/4 bytes, an
// all-reduce twice that, an all-gather of bf16 parameters 3 steps of 2P/4.
TrainingLayout layout(int pipeline, int chunks = 1) {
  TrainingLayout l;
  l.pipeline = pipeline;
  l.chunks = chunks;
  l.data_parallel = 4;
  l.global_batch = 32;
  l.distributed_optimizer = true;
  return l;
}

double reduce_scatter(double parameters) { return 3 * (4 * parameters / 4) / kNvlink; }
double all_gather(double parameters) { return 3 * (2 * parameters / 4) / kNvlink; }

}  // namespace

TEST_CASE("Megatron's default bucket is 40M parameters, or 1M per data-parallel rank above 40 ranks") {
  CHECK(ppsim::default_bucket_parameters(1) == 40e6);
  CHECK(ppsim::default_bucket_parameters(40) == 40e6);
  CHECK(ppsim::default_bucket_parameters(48) == 48e6);
}

TEST_CASE("A chunk is cut into full buckets in gradient order, the remainder last") {
  CHECK(ppsim::bucket_split(100e6, 40e6) == std::vector<double>{40e6, 40e6, 20e6});
  CHECK(ppsim::bucket_split(40e6, 40e6) == std::vector<double>{40e6});
  CHECK(ppsim::bucket_split(1e6, 40e6) == std::vector<double>{1e6});
  CHECK(ppsim::bucket_split(0, 40e6).empty());
}

TEST_CASE("A reduction that ends before the pipeline drains costs nothing, one that ends after costs the difference") {
  TrainingLayout l = layout(2);
  l.bucket_parameters = 1'000'000'000;  // one bucket each (stage 0's 60M would make two by default)
  const ppsim::TransformerCostModel model({gpt(4), l, ideal_machine()}, {0, 1});
  const double params0 = model.static_memory()[0].parameter_count;
  const double params1 = model.static_memory()[1].parameter_count;
  const double r0 = reduce_scatter(params0);
  const double r1 = reduce_scatter(params1);
  // Device 1 ends its last backward at 1.5 s, device 0 at 2 s.
  const std::vector<StageTimes> stages = {{1.0, 2.0, 0.0}, {1.2, 1.5, 0.1}};
  const double device_end[] = {2.0, 1.5};
  const std::int64_t peaks[] = {0, 0};
  const ppsim::TrainingFigures figures = ppsim::training_figures(model, 2.0, device_end, peaks, stages);
  REQUIRE(r1 < 0.5);
  // Device 1's bucket is ready at 1.5 and done by 1.5 + r1 < 2: hidden behind device 0's cooldown.
  CHECK_THAT(figures.collectives[1].reduce_end, WithinRel(1.5 + r1, 1e-9));
  CHECK(figures.collectives[1].reduce.front().ready == 1.5);
  // Device 0's bucket is ready only at its last op's end: all of it is exposed.
  CHECK_THAT(figures.collectives[0].reduce_exposed, WithinRel(r0, 1e-9));
  CHECK_THAT(figures.dp_reduce_exposed, WithinRel(r0, 1e-9));
  // Then the tied embedding's all-reduce between the two devices, and the optimizer.
  CHECK_THAT(figures.step_time, WithinRel(2.0 + r0 + figures.embedding_reduce_time + figures.optimizer_time, 1e-9));
}

TEST_CASE("The first rank's buckets reduce while the last backward still produces the others") {
  TrainingLayout l = layout(2);
  const ppsim::TransformerCostModel probe({gpt(4), l, ideal_machine()}, {0, 1});
  const double params0 = probe.static_memory()[0].parameter_count;
  l.bucket_parameters = static_cast<std::int64_t>(params0 / 4) + 1;  // four buckets, the last a little smaller
  const ppsim::TransformerCostModel model({gpt(4), l, ideal_machine()}, {0, 1});
  const std::vector<double> buckets = ppsim::bucket_split(params0, static_cast<double>(l.bucket_parameters));
  REQUIRE(buckets.size() == 4);
  // A last backward of 1000 s: each bucket is reduced long before the next is ready.
  const std::vector<StageTimes> stages = {{0.0, 1000.0, 0.0}, {0.0, 900.0, 0.0}};
  const ppsim::DeviceCollectives device0 = ppsim::device_collectives(model, 0, 1000.0, stages);
  REQUIRE(device0.reduce.size() == 4);
  CHECK_THAT(device0.reduce[0].ready, WithinRel(1000.0 * buckets[0] / params0, 1e-9));
  CHECK(device0.reduce[3].ready == 1000.0);
  CHECK_THAT(device0.reduce_exposed, WithinRel(reduce_scatter(buckets[3]), 1e-9));
  // Device 1 is not bucketed (pp rank > 0 in Megatron): one collective of its whole stage.
  const ppsim::DeviceCollectives device1 = ppsim::device_collectives(model, 1, 900.0, stages);
  CHECK(device1.reduce.size() == 1);
  CHECK_THAT(device1.reduce_exposed, WithinRel(reduce_scatter(model.static_memory()[1].parameter_count), 1e-9));
}

TEST_CASE("Without overlap every chunk's gradients wait for the device's last op, then reduce in turn") {
  TrainingLayout l = layout(2, 2);  // interleaved: device 0 holds stages 0 and 2
  l.overlap_grad_reduce = false;
  const ppsim::TransformerCostModel model({gpt(8), l, ideal_machine()}, {0, 1, 0, 1});
  const std::vector<StageTimes> stages = {{9.0, 10.0, 0.0}, {8.0, 9.0, 0.0}, {5.0, 6.0, 0.0}, {4.0, 5.0, 0.0}};
  const ppsim::DeviceCollectives serial = ppsim::device_collectives(model, 0, 10.0, stages);
  REQUIRE(serial.reduce.size() == 2);
  const double p0 = ppsim::stage_parameter_count(model.setup().arch, model.stages()[0].contents, 1, false);
  const double p2 = ppsim::stage_parameter_count(model.setup().arch, model.stages()[2].contents, 1, false);
  CHECK(serial.reduce[0].start == 10.0);
  CHECK_THAT(serial.reduce_exposed, WithinRel(reduce_scatter(p0) + reduce_scatter(p2), 1e-9));
  // With overlap, chunk 1 (stage 2) finishes its gradients at 6 s and reduces behind stage 0's work
  // (one bucket per chunk here: stage 0's 58M parameters would make two default buckets).
  l.overlap_grad_reduce = true;
  l.bucket_parameters = 1'000'000'000;
  const ppsim::TransformerCostModel overlapped({gpt(8), l, ideal_machine()}, {0, 1, 0, 1});
  const ppsim::DeviceCollectives early = ppsim::device_collectives(overlapped, 0, 10.0, stages);
  REQUIRE(early.reduce.size() == 2);
  CHECK(early.reduce[0].stage == 2);
  CHECK(early.reduce[0].start == 6.0);
  CHECK_THAT(early.reduce_exposed, WithinRel(reduce_scatter(p0), 1e-9));
}

TEST_CASE("An overlapped parameter all-gather exposes its first bucket, the rest hide behind the forward") {
  TrainingLayout l = layout(1);
  l.overlap_param_gather = true;
  const ppsim::TransformerCostModel probe({gpt(4), l, ideal_machine()}, {0});
  const double params = probe.static_memory()[0].parameter_count;
  l.bucket_parameters = static_cast<std::int64_t>(params / 2) + 1;
  const ppsim::TransformerCostModel model({gpt(4), l, ideal_machine()}, {0});
  const std::vector<double> buckets = ppsim::bucket_split(params, static_cast<double>(l.bucket_parameters));
  REQUIRE(buckets.size() == 2);
  const double forward = model.stages()[0].times.forward.total();
  const std::vector<StageTimes> stages = {{1.0, 2.0, 0.0}};
  const ppsim::DeviceCollectives device = ppsim::device_collectives(model, 0, 2.0, stages);
  REQUIRE(device.gather.size() == 2);
  // Forward order is the reverse of the gradient buckets': the smaller, first parameters first.
  CHECK(device.gather[0].parameters == buckets[1]);
  const double first = all_gather(buckets[1]);
  // Bucket 1 is issued when the forward waits for bucket 0, and needed after bucket 0's share of F.
  const double late = std::max(0.0, all_gather(buckets[0]) - forward * buckets[1] / params);
  CHECK_THAT(device.gather_exposed, WithinRel(first + late, 1e-9));
  // The optimizer step no longer ends with the all-gather.
  l.overlap_param_gather = false;
  CHECK_THAT(ppsim::optimizer_step_time(model.setup(), params) -
                 ppsim::optimizer_step_time({gpt(4), l, ideal_machine()}, params),
             WithinRel(-all_gather(params), 1e-9));
}

TEST_CASE("The engine reports when each stage's gradients complete and its first forward starts") {
  // Every registry schedule: the last B or W of a stage (an overlapped op's backward counts) and its
  // first F, as the timeline shows them.
  for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
    if (!info.generated()) continue;
    const ppsim::ScheduleParams params{4, 8, info.default_v};
    if (info.check(params)) continue;
    INFO(info.name);
    const ppsim::Program program = info.build(params);
    ppsim::UniformCosts costs;
    costs.forward = ppsim::Duration{1.0};
    costs.backward = ppsim::Duration{2.0};
    costs.weight = ppsim::Duration{0.75};
    const ppsim::UniformCostModel model(costs);
    ppsim::EngineOptions options;
    options.record_timeline = true;
    options.record_stage_times = true;
    ppsim::Engine engine;
    const ppsim::SimulationOutcome outcome = engine.run(program, model, options);
    REQUIRE(outcome.result);
    const auto stages = static_cast<std::size_t>(program.num_stages());
    std::vector<double> last_end(stages, -1), last_start(stages, 0), first_forward(stages, 1e300);
    for (const ppsim::Span& span : outcome.result->timeline->spans) {
      for (const ppsim::Action* action : {&span.action, span.action.fused_with_next ? &span.partner : nullptr}) {
        if (action == nullptr) continue;
        const auto s = static_cast<std::size_t>(action->stage);
        if (action->op == ppsim::Op::kForward) first_forward[s] = std::min(first_forward[s], span.start);
        if ((action->op == ppsim::Op::kBackward || action->op == ppsim::Op::kBackwardWeight) && span.end >= last_end[s]) {
          last_end[s] = span.end;
          last_start[s] = span.start;
        }
      }
    }
    REQUIRE(outcome.result->per_stage.size() == stages);
    for (std::size_t s = 0; s < stages; ++s) {
      CHECK(outcome.result->per_stage[s].gradient_end == last_end[s]);
      CHECK(outcome.result->per_stage[s].gradient_start == last_start[s]);
      CHECK(outcome.result->per_stage[s].first_forward == first_forward[s]);
    }
  }
}

TEST_CASE("Tied embeddings on two devices all-reduce their gradient after the data-parallel reductions") {
  TrainingLayout l = layout(2);
  l.data_parallel = 1;
  const ppsim::TransformerCostModel model({gpt(4), l, ideal_machine()}, {0, 1});
  const double device_end[] = {2.0, 1.5};
  const std::int64_t peaks[] = {0, 0};
  const ppsim::TrainingFigures figures = ppsim::training_figures(model, 2.0, device_end, peaks);
  // fp32 vocab x h over a 2-rank ring on NVLink: 2 steps of half the bytes each.
  const double bytes = 4.0 * 32000 * 1024;
  CHECK_THAT(figures.embedding_reduce_time, WithinRel(bytes / kNvlink, 1e-12));
  CHECK_THAT(figures.step_time, WithinRel(2.0 + bytes / kNvlink + figures.optimizer_time, 1e-12));
  // Untied, or both ends on one device (a V-shape), there is nothing to sum.
  ppsim::Architecture untied = gpt(4);
  untied.tied_embeddings = false;
  const ppsim::TransformerCostModel separate({untied, l, ideal_machine()}, {0, 1});
  CHECK(ppsim::training_figures(separate, 2.0, device_end, peaks).embedding_reduce_time == 0);
  TrainingLayout v = layout(2, 2);
  v.data_parallel = 1;
  const ppsim::TransformerCostModel shaped({gpt(4), v, ideal_machine()}, {0, 1, 1, 0});
  CHECK(ppsim::training_figures(shaped, 2.0, device_end, peaks).embedding_reduce_time == 0);
}

TEST_CASE("A bucket reduced beside the backward costs the compute the SMs its NCCL kernel takes") {
  // The first rank's four buckets reduce while a 1000 s backward runs: each takes 16 of the machine's
  // 132 SMs for its whole duration, and the compute loses that share of those seconds.
  TrainingLayout l = layout(2);
  const ppsim::TransformerCostModel probe({gpt(4), l, ideal_machine()}, {0, 1});
  l.bucket_parameters = static_cast<std::int64_t>(probe.static_memory()[0].parameter_count / 4) + 1;
  ppsim::HardwareProfile machine = ideal_machine();
  machine.gemm_model.sm_count = 132;
  machine.gemm_model.peak_fraction = {{"bf16", 1.0}};
  const ppsim::TransformerCostModel model({gpt(4), l, machine}, {0, 1});
  const std::vector<StageTimes> stages = {{0.0, 1000.0, 0.0}, {0.0, 900.0, 0.0}};
  const ppsim::DeviceCollectives device0 = ppsim::device_collectives(model, 0, 1000.0, stages);
  REQUIRE(device0.reduce.size() == 4);
  // The last bucket is ready at the device's end: only the first three ran beside compute.
  double beside = 0;
  for (std::size_t i = 0; i < 3; ++i) beside += device0.reduce[i].end - device0.reduce[i].start;
  CHECK_THAT(device0.contention, WithinRel(beside * 16 / 132, 1e-12));
  CHECK_THAT(device0.reduce_exposed,
             WithinRel(device0.reduce[3].end - device0.reduce[3].start + device0.contention, 1e-9));
  CHECK_THAT(ppsim::collective_contention(machine, 1.0), WithinRel(16.0 / 132, 1e-15));
  // Without a GEMM shape model there is no SM count, and nothing is charged.
  CHECK(ppsim::collective_contention(ideal_machine(), 1.0) == 0);
}

TEST_CASE("A ring across nodes moves at the NICs of its node's ranks, as NCCL's published multi-node bus bandwidths say") {
  // nccl-tests' bus bandwidth of an all-reduce: bytes * 2(n-1)/n over the time.
  auto bus_bandwidth = [](const ppsim::HardwareProfile& profile, int ranks, int per_node) {
    const double bytes = 16.0 * (1 << 30);
    const double time = ppsim::collective_time(profile, ppsim::Collective::kAllReduce, bytes, ranks, true, per_node);
    return bytes * 2 * (ranks - 1) / ranks / time;
  };
  // DGX A100, 8 x 200 Gb/s HDR: "we measure 192GB/s AllReduce BusBW" (NVIDIA/nccl issue 812).
  const ppsim::HardwareProfile& a100 = *ppsim::find_hardware_preset("A100-SXM4-80GB");
  CHECK_THAT(bus_bandwidth(a100, 16, 8), WithinRel(192e9, 0.005));
  // 4 x 8 H200 over 8 x 400 Gb/s per node: 364.87 GB/s at 4 GiB and more (stas00/ml-engineering
  // network/README.md); the preset's NDR figure (47 of 50 GB/s per NIC) gives 376, 3% above.
  const ppsim::HardwareProfile& h200 = *ppsim::find_hardware_preset("H200-SXM-141GB");
  CHECK_THAT(bus_bandwidth(h200, 32, 8), WithinRel(364.87e9, 0.04));
  // One rank per node (t = 8): one NIC each, 24 GB/s on HDR.
  CHECK_THAT(bus_bandwidth(a100, 16, 1), WithinRel(24e9, 0.005));
  // A group's ranks per node: a node of 8 holds 8 / t of them, at most d.
  TrainingLayout l;
  l.tensor_parallel = 2;
  l.data_parallel = 16;
  CHECK(ppsim::data_parallel_ranks_per_node({gpt(), l, a100}) == 4);
  l.data_parallel = 2;
  CHECK(ppsim::data_parallel_ranks_per_node({gpt(), l, a100}) == 2);
  l.tensor_parallel = 16;
  CHECK(ppsim::data_parallel_ranks_per_node({gpt(), l, a100}) == 1);
}

TEST_CASE("An all-reduce inside an H100 node runs through NVLink SHARP from five GPUs up, at its published bus bandwidth") {
  const ppsim::HardwareProfile& h100 = *ppsim::find_hardware_preset("H100-SXM5-80GB");
  REQUIRE(h100.nvls_bus_bandwidth == 480e9);
  REQUIRE(h100.nvls_min_ranks == 5);
  const double bytes = 1 << 30;  // above the link table's 64 MiB knee: no ramp
  // Eight GPUs: two NVLink latencies plus 2(n-1)/n of the tensor at 480 GB/s (nccl-tests' bus bytes).
  const double nvls = 2 * 3e-6 + bytes * 2 * 7 / 8 / 480e9;
  CHECK_THAT(ppsim::nvls_all_reduce_time(h100, bytes, 8), WithinRel(nvls, 1e-12));
  CHECK_THAT(ppsim::collective_time(h100, ppsim::Collective::kAllReduce, bytes, 8, false), WithinRel(nvls, 1e-12));
  // The ring it replaces: 14 steps of an eighth at NCCL's 370 of 450 GB/s.
  const double ring = 14 * (3e-6 + bytes / 8 / 370e9);
  CHECK_THAT(ppsim::ring_collective_time(h100, bytes, 8, 2, false), WithinRel(ring, 1e-9));
  // Four GPUs stay on the ring, as NCCL chose on the published 8x H200 sweep.
  CHECK(std::isinf(ppsim::nvls_all_reduce_time(h100, bytes, 4)));
  CHECK_THAT(ppsim::collective_time(h100, ppsim::Collective::kAllReduce, bytes, 4, false),
             WithinRel(ppsim::ring_collective_time(h100, bytes, 4, 2, false), 1e-12));
  // Reduce-scatters, all-gathers and anything across nodes are rings; A100's switch has no NVLS.
  CHECK_THAT(ppsim::collective_time(h100, ppsim::Collective::kReduceScatter, bytes, 8, false),
             WithinRel(ppsim::ring_collective_time(h100, bytes, 8, 1, false), 1e-12));
  CHECK_THAT(ppsim::collective_time(h100, ppsim::Collective::kAllReduce, bytes, 16, true, 8),
             WithinRel(ppsim::ring_collective_time(h100, bytes, 16, 2, true, 8), 1e-12));
  const ppsim::HardwareProfile& a100 = *ppsim::find_hardware_preset("A100-SXM4-80GB");
  CHECK(std::isinf(ppsim::nvls_all_reduce_time(a100, bytes, 8)));
}

TEST_CASE("FP8 gradient compression moves 1 byte a gradient and pays its casts") {
  // d = 4 on the ideal machine, no distributed optimizer: an all-reduce. fp32 buffer (g = 4): the
  // amax and the cast read it twice and write 1 byte, the cast back reads 1 and writes 4.
  TrainingLayout l;
  l.data_parallel = 4;
  l.grad_compression = "fp8";
  const ppsim::TransformerSetup setup{gpt(), l, ideal_machine()};
  const double p = 1e8;
  const double expected = ppsim::collective_time(ideal_machine(), ppsim::Collective::kAllReduce, 1 * p, 4, false) +
                          (3 * 4 + 2) * p / ppsim::test::kHbm;
  CHECK_THAT(ppsim::gradient_reduce_time(setup, p), WithinRel(expected, 1e-12));
}

TEST_CASE("1-bit Adam moves an eighth of a byte a parameter in two phases and keeps fp32 error feedback") {
  TrainingLayout l;
  l.data_parallel = 4;
  l.grad_compression = "1bit";
  const ppsim::TransformerSetup setup{gpt(), l, ideal_machine()};
  const double p = 1e8;
  const double compress = 12.125;  // read momentum and error (8), write error (4) and signs (1/8)
  const double expected = ppsim::collective_time(ideal_machine(), ppsim::Collective::kAllReduce, p / 8, 4, false) +
                          compress * p / ppsim::test::kHbm + (compress + 4.0 / 8) * (p / 4) / ppsim::test::kHbm;
  CHECK_THAT(ppsim::gradient_reduce_time(setup, p), WithinRel(expected, 1e-12));
  // Error feedback beside the optimizer: 4 bytes for every parameter and 4 for the quarter it serves.
  const ppsim::StagePlan plan = ppsim::plan_stages(gpt(4), 1, {});
  TrainingLayout plain;
  plain.data_parallel = 4;
  const auto base = ppsim::static_memory_per_device(gpt(4), plain, plan, {0}, 1);
  const auto onebit = ppsim::static_memory_per_device(gpt(4), l, plan, {0}, 1);
  CHECK_THAT(static_cast<double>(onebit[0].optimizer - base[0].optimizer),
             WithinRel(4 * 1.25 * base[0].parameter_count, 1e-9));
}
