// SPDX-License-Identifier: Apache-2.0
// The transformer cost model: pass times against the FLOP and byte accounting, tensor- and
// sequence-parallel scaling, layer placement, static memory of a hand-computed case, and the
// training-step figures. An ideal machine (every efficiency 1, no latency) makes each time an exact
// quotient of FLOPs or bytes, so the tests pin the accounting itself.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "models/transformer/layer_costs.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/stage_plan.hpp"
#include "models/transformer/static_memory.hpp"
#include "models/transformer/training_step.hpp"
#include "models/transformer/transformer_cost_model.hpp"
#include "support/ideal_machine.hpp"

using Catch::Matchers::WithinRel;
using ppsim::Architecture;
using ppsim::HardwareProfile;
using ppsim::PassTimes;
using ppsim::Recompute;
using ppsim::TrainingLayout;

namespace {

using ppsim::test::gpt;
using ppsim::test::ideal_machine;
using ppsim::test::kHbm;
using ppsim::test::kInfiniband;
using ppsim::test::kNvlink;
using ppsim::test::kPeak;

TrainingLayout layout(int t = 1, bool flash = false) {
  TrainingLayout l;
  l.seq = 2048;
  l.micro_batch = 2;
  l.tensor_parallel = t;
  l.flash_attention = flash;
  return l;
}

}  // namespace

TEST_CASE("Layer pass FLOPs on an ideal machine equal the zero-bubble Table 1 accounting") {
  const Architecture arch = gpt();
  const TrainingLayout l = layout();
  const PassTimes times = ppsim::layer_pass_times(arch, l, ideal_machine());
  const ppsim::LayerFlops flops = ppsim::layer_flops(arch, l.seq, l.micro_batch);
  // Unfused attention runs every product over the full square, exactly the papers' count.
  CHECK_THAT((times.forward.gemm + times.forward.attention) * kPeak, WithinRel(flops.forward, 1e-12));
  CHECK_THAT((times.input_grad.gemm + times.input_grad.attention) * kPeak, WithinRel(flops.input_grad, 1e-12));
  CHECK_THAT(times.weight_grad.gemm * kPeak, WithinRel(flops.weight_grad, 1e-12));
  CHECK(times.weight_grad.attention == 0);
  CHECK(times.weight_grad.memory == 0);
  // sbh(24h + 4s), sbh(24h + 8s), sbh 24h with s = 2048, b = 2, h = 1024.
  const double sbh = 2048.0 * 2 * 1024;
  CHECK_THAT(flops.forward, WithinRel(sbh * (24 * 1024 + 4 * 2048), 1e-15));
}

TEST_CASE("Flash attention halves the causal square and recomputes the scores in the backward") {
  const Architecture arch = gpt();
  const PassTimes unfused = ppsim::layer_pass_times(arch, layout(1, false), ideal_machine());
  const PassTimes flash = ppsim::layer_pass_times(arch, layout(1, true), ideal_machine());
  // Unfused: 2 products forward, 4 backward; flash: 2 and 5 over half the square.
  CHECK_THAT(flash.forward.attention, WithinRel(unfused.forward.attention / 2, 1e-12));
  CHECK_THAT(flash.input_grad.attention, WithinRel(unfused.input_grad.attention * 5.0 / 8.0, 1e-12));
  // No s x s softmax traffic: the memory-bound time drops by 4 bytes (F) and 6 bytes (I) per score.
  const double scores = 2.0 * 16 * 2048 * 2048;  // b * a * s^2
  CHECK_THAT((unfused.forward.memory - flash.forward.memory) * kHbm, WithinRel(4 * scores, 1e-9));
  CHECK_THAT((unfused.input_grad.memory - flash.input_grad.memory) * kHbm, WithinRel(6 * scores, 1e-9));
  CHECK(flash.forward.gemm == unfused.forward.gemm);
}

TEST_CASE("Memory-bound kernels of a GPT layer move the bytes the header counts") {
  const Architecture arch = gpt();
  const PassTimes times = ppsim::layer_pass_times(arch, layout(1, true), ideal_machine());
  const double tokens = 2048.0 * 2;
  const double h = 1024;
  const double f = 4096;
  // F: two norms 4Th, two residual adds 6Th, GELU 4Tf (2 bytes per element, read and write).
  CHECK_THAT(times.forward.memory * kHbm, WithinRel(tokens * (2 * 4 * h + 2 * 6 * h + 4 * f), 1e-12));
  // I: norms 6Th, residual adds 6Th, GELU backward 6Tf.
  CHECK_THAT(times.input_grad.memory * kHbm, WithinRel(tokens * (2 * 6 * h + 2 * 6 * h + 6 * f), 1e-12));
}

TEST_CASE("Tensor parallelism divides the GEMMs and adds ring all-reduces on NVLink") {
  const Architecture arch = gpt();
  const int t = GENERATE(2, 4, 8);
  CAPTURE(t);
  const PassTimes one = ppsim::layer_pass_times(arch, layout(1), ideal_machine());
  const PassTimes split = ppsim::layer_pass_times(arch, layout(t), ideal_machine());
  CHECK_THAT(split.forward.gemm, WithinRel(one.forward.gemm / t, 1e-12));
  CHECK_THAT(split.forward.attention, WithinRel(one.forward.attention / t, 1e-12));
  CHECK_THAT(split.weight_grad.gemm, WithinRel(one.weight_grad.gemm / t, 1e-12));
  CHECK(one.forward.collective == 0);
  // Two all-reduces of 2Th bytes: 2 x 2(t-1) steps of 2Th/t bytes each.
  const double bytes = 2.0 * 2048 * 2 * 1024;
  const double all_reduce = 2.0 * (t - 1) * (bytes / t) / kNvlink;
  CHECK_THAT(split.forward.collective, WithinRel(2 * all_reduce, 1e-12));
  CHECK_THAT(split.input_grad.collective, WithinRel(2 * all_reduce, 1e-12));
}

TEST_CASE("Dropout adds its mask bytes after the attention output and the MLP, and on the scores without flash") {
  Architecture with = gpt();
  with.dropout = 0.1;
  const Architecture without = gpt();
  const double tokens = 2048.0 * 2;
  for (const bool flash : {true, false}) {
    CAPTURE(flash);
    const TrainingLayout l = layout(2, flash);
    const PassTimes a = ppsim::layer_pass_times(without, l, ideal_machine());
    const PassTimes b = ppsim::layer_pass_times(with, l, ideal_machine());
    // Two 1-byte masks of T x h, written in F and read in I; without flash the scores' own kernel,
    // 5 bytes per element of the b * a/t * s * s probabilities, both ways.
    const double scores = flash ? 0 : 5 * 2 * (16 / 2) * 2048.0 * 2048;
    CHECK_THAT((b.forward.memory - a.forward.memory) * kHbm, WithinRel(2 * tokens * 1024 + scores, 1e-9));
    CHECK_THAT((b.input_grad.memory - a.input_grad.memory) * kHbm, WithinRel(2 * tokens * 1024 + scores, 1e-9));
  }
}

TEST_CASE("With --tp-comm-overlap each sequence-parallel collective costs only what its GEMM does not hide") {
  const Architecture arch = gpt();
  TrainingLayout sp = layout(4, true);
  sp.sequence_parallel = true;
  TrainingLayout overlapped = sp;
  overlapped.tp_comm_overlap = true;
  HardwareProfile slow = ideal_machine();
  slow.intra_node_bandwidth = 1e10;  // 10 GB/s: some collectives outlast their GEMMs
  const double tokens = 2048.0 * 2;
  const double collective = 3 * (tokens * 1024 * 2 / 4) / 1e10;  // 3 ring steps of a quarter of 2Th bytes
  const double linears[] = {2 * tokens * 1024 * (3 * 1024 / 4.0) / kPeak, 2 * tokens * (1024 / 4.0) * 1024 / kPeak,
                            2 * tokens * 1024 * (4096 / 4.0) / kPeak, 2 * tokens * (4096 / 4.0) * 1024 / kPeak};
  double exposed = 0;
  for (const double linear : linears) exposed += std::max(0.0, collective - linear);
  REQUIRE(exposed > 0);
  const PassTimes a = ppsim::layer_pass_times(arch, sp, slow);
  const PassTimes b = ppsim::layer_pass_times(arch, overlapped, slow);
  CHECK_THAT(a.forward.collective, WithinRel(4 * collective, 1e-12));
  CHECK_THAT(b.forward.collective, WithinRel(exposed, 1e-12));
  // I overlaps the same four pairs; its extra backward all-gathers are counted apart.
  CHECK_THAT(a.input_grad.collective - b.input_grad.collective, WithinRel(4 * collective - exposed, 1e-12));
}

TEST_CASE("Sequence parallelism's backward all-gathers cost what their input-gradient GEMMs do not hide") {
  const Architecture arch = gpt();
  TrainingLayout plain = layout(4, true);
  TrainingLayout sp = plain;
  sp.sequence_parallel = true;
  HardwareProfile slow = ideal_machine();
  slow.intra_node_bandwidth = 1e9;  // 1 GB/s: the gathers outlast the GEMMs
  const PassTimes a = ppsim::layer_pass_times(arch, plain, slow);
  const PassTimes b = ppsim::layer_pass_times(arch, sp, slow);
  const double tokens = 2048.0 * 2;
  const double gather = 3 * (tokens * 1024 * 2 / 4) / 1e9;  // ring all-gather, 3 steps of a quarter
  const double qkv_dgrad = 2 * tokens * 1024 * (3 * 1024 / 4.0) / kPeak;
  const double mlp_in_dgrad = 2 * tokens * 1024 * (4096 / 4.0) / kPeak;
  CHECK_THAT(b.input_grad.collective - a.input_grad.collective,
             WithinRel((gather - qkv_dgrad) + (gather - mlp_in_dgrad), 1e-9));
  CHECK(b.weight_grad.collective == 0);
}

TEST_CASE("Sequence parallelism keeps the collective volume and shards the replicated kernels") {
  Architecture arch = gpt();
  arch.dropout = 0.1;  // Korthikanti's counts include the dropout masks
  TrainingLayout plain = layout(4, true);
  TrainingLayout sp = plain;
  sp.sequence_parallel = true;
  const PassTimes a = ppsim::layer_pass_times(arch, plain, ideal_machine());
  const PassTimes b = ppsim::layer_pass_times(arch, sp, ideal_machine());
  // All-reduce = reduce-scatter + all-gather: the same bytes on the same ring.
  CHECK_THAT(b.forward.collective, WithinRel(a.forward.collective, 1e-12));
  // The backward adds the gathers of the next test case, beyond what its GEMMs hide.
  CHECK(b.input_grad.collective > a.input_grad.collective);
  // Norms, residual adds and dropout masks (20Th + 2Th bytes in F) shrink by t; the GELU (split
  // already) does not.
  const double tokens = 2048.0 * 2;
  CHECK_THAT((a.forward.memory - b.forward.memory) * kHbm, WithinRel(tokens * 22 * 1024 * (1 - 1.0 / 4), 1e-9));
  // Activation stash follows Korthikanti: sbh(10 + 24/t) without, 34 sbh / t with (flash: no s^2 term).
  const double sbh = tokens * 1024;
  CHECK_THAT(ppsim::activation_bytes_per_layer(arch, plain.activation_layout()), WithinRel(sbh * (10 + 24.0 / 4), 1e-12));
  CHECK_THAT(ppsim::activation_bytes_per_layer(arch, sp.activation_layout()), WithinRel(sbh * 34 / 4, 1e-12));
}

TEST_CASE("A tensor-parallel group larger than a node uses the inter-node link, one NIC per rank in a node") {
  HardwareProfile machine = ideal_machine();
  machine.devices_per_node = 2;
  const PassTimes times = ppsim::layer_pass_times(gpt(), layout(4), machine);
  const double bytes = 2.0 * 2048 * 2 * 1024;
  // Two of the four ranks in each node: the ring runs through their two NICs at once.
  CHECK_THAT(times.forward.collective, WithinRel(2 * 2.0 * 3 * (bytes / 4) / (2 * kInfiniband), 1e-12));
}

TEST_CASE("Recomputation adds forward work to the input-gradient pass") {
  const Architecture arch = gpt();
  TrainingLayout l = layout(1, false);
  const PassTimes none = ppsim::layer_pass_times(arch, l, ideal_machine());
  l.recompute = Recompute::kSelective;
  const PassTimes selective = ppsim::layer_pass_times(arch, l, ideal_machine());
  l.recompute = Recompute::kFull;
  const PassTimes full = ppsim::layer_pass_times(arch, l, ideal_machine());
  CHECK(none.input_grad.recompute == 0);
  // Selective: the attention core's forward (products and softmax); full: the whole forward.
  const double softmax = 4.0 * 2 * 16 * 2048 * 2048 / kHbm;
  CHECK_THAT(selective.input_grad.recompute, WithinRel(none.forward.attention + softmax, 1e-12));
  CHECK_THAT(full.input_grad.recompute, WithinRel(none.forward.total(), 1e-12));
  CHECK(full.forward.total() == none.forward.total());
  CHECK(full.weight_grad.total() == none.weight_grad.total());
}

TEST_CASE("Layers split evenly with the remainder on the first stages, or as given") {
  const Architecture arch = gpt(10);
  const ppsim::StagePlan even = ppsim::plan_stages(arch, 4, {});
  REQUIRE(even.error.empty());
  std::vector<int> counts;
  for (const auto& stage : even.stages) counts.push_back(stage.layers);
  CHECK(counts == std::vector<int>{3, 3, 2, 2});
  CHECK(even.stages.front().embedding);
  CHECK(!even.stages.front().lm_head);
  CHECK(even.stages.back().lm_head);
  CHECK(even.stages[2].first_layer == 6);

  const ppsim::StagePlan given = ppsim::plan_stages(arch, 4, {4, 3, 3, 0});
  REQUIRE(given.error.empty());
  CHECK(given.stages[3].layers == 0);
  CHECK(given.stages[3].lm_head);
  CHECK(ppsim::plan_stages(arch, 4, {4, 3, 3}).error == "has 3 entries; give one per stage (4 = p * v)");
  CHECK(ppsim::plan_stages(arch, 4, {4, 3, 3, 1}).error == "sums to 11 layers but gpt-test has 10");
  CHECK(ppsim::plan_stages(arch, 2, {12, -2}).error == "stage 1 has a negative layer count");
}

TEST_CASE("An unbalanced split moves work between stages and shows as imbalance") {
  TrainingLayout l = layout(1, true);
  l.pipeline = 2;
  l.global_batch = 8;
  // The LM head of a 32000-word vocabulary costs about 2.6 layers of h = 1024, so 2 + 6 puts most
  // of the work on the last stage (and 5 + 3 would be nearly balanced).
  l.layers_per_stage = {2, 6};
  const ppsim::TransformerCostModel model({gpt(8), l, ideal_machine()}, {0, 1});
  const PassTimes layer = ppsim::layer_pass_times(gpt(8), l, ideal_machine());
  const PassTimes embedding = ppsim::embedding_pass_times(gpt(8), l, ideal_machine());
  const PassTimes head = ppsim::lm_head_pass_times(gpt(8), l, ideal_machine());
  CHECK_THAT(model.compute_time(ppsim::Op::kForward, 0),
             WithinRel(2 * layer.forward.total() + embedding.forward.total(), 1e-12));
  CHECK_THAT(model.compute_time(ppsim::Op::kForward, 1), WithinRel(6 * layer.forward.total() + head.forward.total(), 1e-12));
  CHECK_THAT(model.compute_time(ppsim::Op::kBackward, 1),
             WithinRel(6 * (layer.input_grad.total() + layer.weight_grad.total()) + head.input_grad.total() +
                           head.weight_grad.total(),
                       1e-12));
  const double device_end[] = {1.0, 0.9};
  const std::int64_t peaks[] = {0, 0};
  const ppsim::TrainingFigures figures = ppsim::training_figures(model, 1.0, device_end, peaks);
  const double work0 = figures.stages[0].forward + figures.stages[0].input_grad + figures.stages[0].weight_grad;
  const double work1 = figures.stages[1].forward + figures.stages[1].input_grad + figures.stages[1].weight_grad;
  CHECK_THAT(figures.stage_imbalance, WithinRel(std::max(work0, work1) / ((work0 + work1) / 2), 1e-12));
  CHECK(figures.stage_imbalance > 1.4);
}

TEST_CASE("Static memory of a hand-computed case: 18 bytes per parameter, 6 + 12/d sharded") {
  // gpt(4) on p = 2, t = 2. One layer: 12h^2 + 13h = 12,596,224 parameters. Stage 0: two layers and
  // the embedding (32000 x 1024 split two ways, 16,384,000) plus the 2048 x 1024 learned positions
  // (2,097,152, replicated): 25,192,448 / 2 + 16,384,000 + 2,097,152 = 31,077,376. Stage 1: two
  // layers, the final LayerNorm (2,048) and its own copy of the tied head (16,384,000):
  // 12,596,224 + 2,048 + 16,384,000 = 28,982,272.
  const Architecture arch = gpt(4);
  const ppsim::StagePlan plan = ppsim::plan_stages(arch, 2, {});
  CHECK(ppsim::stage_parameter_count(arch, plan.stages[0], 2, false) == 31'077'376.0);
  CHECK(ppsim::stage_parameter_count(arch, plan.stages[1], 2, false) == 28'982'272.0);

  TrainingLayout l;
  l.tensor_parallel = 2;
  l.pipeline = 2;
  l.data_parallel = 4;
  l.workspace_bytes = 1 << 30;
  const auto memory = ppsim::static_memory_per_device(arch, l, plan, {0, 1}, 2);
  CHECK(memory[0].parameters == 2 * 31'077'376);
  CHECK(memory[0].gradients == 4 * 31'077'376);
  CHECK(memory[0].optimizer == 12 * 31'077'376);
  CHECK(memory[0].total() == 18 * std::int64_t{31'077'376} + (1 << 30));
  l.distributed_optimizer = true;
  const auto sharded = ppsim::static_memory_per_device(arch, l, plan, {0, 1}, 2);
  CHECK(sharded[1].optimizer == 3 * 28'982'272);  // 12 bytes / d = 4
  CHECK(sharded[1].parameters + sharded[1].gradients == 6 * std::int64_t{28'982'272});
  // A single stage holds one copy of a tied table.
  const ppsim::StagePlan one = ppsim::plan_stages(arch, 1, {});
  CHECK(ppsim::stage_parameter_count(arch, one.stages[0], 1, true) == static_cast<double>(ppsim::parameter_count(arch)));
}

TEST_CASE("The step adds the data-parallel reduction and the optimizer, and MFU follows") {
  TrainingLayout l = layout(1, true);
  l.pipeline = 2;
  l.data_parallel = 4;
  l.global_batch = 32;
  const Architecture arch = gpt(4);
  const ppsim::TransformerCostModel model({arch, l, ideal_machine()}, {0, 1});
  const double makespan = 2.0;
  const double device_end[] = {2.0, 1.5};
  const std::int64_t peaks[] = {1 << 30, 1 << 29};
  const double params0 = model.static_memory()[0].parameter_count;
  const double params1 = model.static_memory()[1].parameter_count;
  // Ring all-reduce of fp32 gradients over d = 4 on NVLink (t * d = 4 GPUs fit in a node).
  CHECK_THAT(ppsim::dp_reduce_time(model.setup(), params0), WithinRel(2.0 * 3 * (4 * params0 / 4) / kNvlink, 1e-12));
  // Zero the fp32 gradient buffer (4), gradient norm (4), fused Adam (16 read + 12 written), the copy
  // into the bf16 parameters (4 + 2): 42 bytes per parameter at HBM speed.
  CHECK_THAT(ppsim::optimizer_step_time(model.setup(), params0), WithinRel(42 * params0 / kHbm, 1e-12));

  const ppsim::TrainingFigures overlapped = ppsim::training_figures(model, makespan, device_end, peaks);
  const double reduce0 = ppsim::dp_reduce_time(model.setup(), params0);
  const double reduce1 = ppsim::dp_reduce_time(model.setup(), params1);
  const double optimizer = std::max(ppsim::optimizer_step_time(model.setup(), params0),
                                    ppsim::optimizer_step_time(model.setup(), params1));
  // The tied embedding's all-reduce between the two stages follows both reductions.
  REQUIRE(overlapped.embedding_reduce_time > 0);
  CHECK_THAT(overlapped.step_time,
             WithinRel(std::max(2.0 + reduce0, 1.5 + reduce1) + overlapped.embedding_reduce_time + optimizer, 1e-12));
  CHECK(overlapped.gpus == 8);
  CHECK(overlapped.tokens_per_step == 32 * 2048);
  CHECK_THAT(overlapped.mfu, WithinRel(ppsim::step_flops(arch, 2048, 32, false) / (overlapped.step_time * 8 * kPeak), 1e-12));
  CHECK(overlapped.hfu == overlapped.mfu);  // no recomputation
  CHECK(overlapped.memory[0].activations == 1 << 30);
  CHECK(overlapped.memory[0].total == model.static_bytes(0) + (1 << 30));
  CHECK(overlapped.fits);

  l.overlap_grad_reduce = false;
  const ppsim::TransformerCostModel waiting({arch, l, ideal_machine()}, {0, 1});
  const ppsim::TrainingFigures serial = ppsim::training_figures(waiting, makespan, device_end, peaks);
  // Without overlap each device still reduces after its own last op (finalize_model_grads), as its
  // data-parallel peers end at the same time: the same here, where each stage's gradients complete
  // only at its device's end.
  CHECK_THAT(serial.step_time,
             WithinRel(std::max(2.0 + reduce0, 1.5 + reduce1) + serial.embedding_reduce_time + optimizer, 1e-12));
}

TEST_CASE("A device over capacity is a result that says so plainly") {
  TrainingLayout l = layout(1, true);
  l.pipeline = 1;
  l.global_batch = 1;
  HardwareProfile small = ideal_machine();
  small.memory_capacity = std::int64_t{1} << 30;
  const ppsim::TransformerCostModel model({gpt(4), l, small}, {0});
  const double end[] = {1.0};
  const std::int64_t peaks[] = {std::int64_t{3} << 29};  // 1.5 GiB of activations
  const ppsim::TrainingFigures figures = ppsim::training_figures(model, 1.0, end, peaks);
  CHECK(!figures.fits);
  CHECK(!figures.memory[0].fits);
  CHECK(figures.memory_verdict.starts_with("device 0 needs "));
  CHECK(figures.memory_verdict.ends_with(" of 1.0 GiB: does not fit"));
}

TEST_CASE("Stage messages carry s*b*h bf16 activations, divided by t under sequence parallelism") {
  TrainingLayout l = layout(4, true);
  l.pipeline = 2;
  l.data_parallel = 1;
  const ppsim::TransformerCostModel plain({gpt(), l, ideal_machine()}, {0, 1});
  CHECK(plain.message_bytes(0, 1) == 2 * 2048 * 2 * 1024);
  l.sequence_parallel = true;
  const ppsim::TransformerCostModel sp({gpt(), l, ideal_machine()}, {0, 1});
  CHECK(sp.message_bytes(0, 1) == 2 * 2048 * 2 * 1024 / 4);
  // t * d = 4 GPUs per pipeline device, 8 per node: devices 0 and 1 share a node, 1 and 2 do not.
  l.pipeline = 4;
  const ppsim::TransformerCostModel four({gpt(), l, ideal_machine()}, {0, 1, 2, 3});
  CHECK(!four.crosses_nodes(0, 1));
  CHECK(four.crosses_nodes(1, 2));
  CHECK(four.link(0, 1).bandwidth == kNvlink);
  CHECK(four.link(1, 2).bandwidth == kInfiniband);
}

TEST_CASE("FP8 runs the linear GEMMs on their own table, keeps attention and the LM head in bf16 and adds casts") {
  // An ideal machine with an fp8 peak of 2 * kPeak and an fp8 table at a flat 0.5: FP8 linears then
  // take exactly as long as bf16 ones at full efficiency, so the differences below are the casts.
  HardwareProfile machine = ideal_machine();
  machine.dense_peak_flops["fp8"] = 2 * kPeak;
  machine.gemm_fp8 = ppsim::EfficiencyTable::create({{1e9, 0.5}}).value;
  const Architecture arch = gpt();
  TrainingLayout bf16 = layout(2, true);
  TrainingLayout fp8 = bf16;
  fp8.precision = "fp8";
  const PassTimes a = ppsim::layer_pass_times(arch, bf16, machine);
  const PassTimes b = ppsim::layer_pass_times(arch, fp8, machine);
  CHECK_THAT(b.forward.gemm, WithinRel(a.forward.gemm, 1e-12));
  CHECK_THAT(b.weight_grad.gemm, WithinRel(a.weight_grad.gemm, 1e-12));
  CHECK(b.forward.attention == a.forward.attention);  // bf16 attention, not twice as fast
  CHECK(b.input_grad.attention == a.input_grad.attention);
  // Cast-transpose, 4 bytes an element. T = 4096 tokens, h = 1024, f = 4096, t = 2.
  // F: the inputs of QKV (T x h), attention out (T x h/t), MLP in (T x h), MLP out (T x f/t).
  // I: the output gradients of QKV (T x 3h/t), attention out (T x h), MLP in (T x f/t), MLP out (T x h).
  const double tokens = 4096;
  const double forward_elements = tokens * (1024 + 512 + 1024 + 2048);
  const double backward_elements = tokens * (1536 + 1024 + 2048 + 1024);
  CHECK_THAT((b.forward.memory - a.forward.memory) * kHbm, WithinRel(4 * forward_elements, 1e-9));
  CHECK_THAT((b.input_grad.memory - a.input_grad.memory) * kHbm, WithinRel(4 * backward_elements, 1e-9));
  CHECK(b.weight_grad.memory == a.weight_grad.memory);
  // Megatron's output layer is not a Transformer Engine module: the LM head stays bf16.
  CHECK(ppsim::lm_head_pass_times(arch, fp8, machine).forward.gemm ==
        ppsim::lm_head_pass_times(arch, bf16, machine).forward.gemm);
}

TEST_CASE("FP8 keeps 2 more bytes per linear weight and casts them once per step") {
  // gpt(4) on p = 2, t = 2: 12h^2 = 12,582,912 linear weights per layer, 6,291,456 per rank, two
  // layers a stage: 12,582,912 FP8 weights and transposes on each device.
  const Architecture arch = gpt(4);
  const ppsim::StagePlan plan = ppsim::plan_stages(arch, 2, {});
  TrainingLayout l;
  l.tensor_parallel = 2;
  l.pipeline = 2;
  const auto bf16 = ppsim::static_memory_per_device(arch, l, plan, {0, 1}, 2);
  l.precision = "fp8";
  const auto fp8 = ppsim::static_memory_per_device(arch, l, plan, {0, 1}, 2);
  CHECK(fp8[0].fp8_weight_count == 12'582'912.0);
  CHECK(fp8[1].parameters - bf16[1].parameters == 2 * 12'582'912);
  CHECK(fp8[1].gradients == bf16[1].gradients);
  HardwareProfile machine = ideal_machine();
  machine.dense_peak_flops["fp8"] = 2 * kPeak;
  const ppsim::TransformerSetup setup{arch, l, machine};
  CHECK_THAT(ppsim::optimizer_step_time(setup, fp8[0].parameter_count, fp8[0].fp8_weight_count) -
                 ppsim::optimizer_step_time(setup, fp8[0].parameter_count),
             WithinRel(4 * 12'582'912.0 / kHbm, 1e-9));
}

TEST_CASE("The optimizer step zeroes the whole gradient buffer, updates only its shard, and unscales fp16 "
          "gradients") {
  TrainingLayout l = layout(1, true);
  l.data_parallel = 4;
  l.distributed_optimizer = true;
  l.overlap_param_gather = true;  // the parameter all-gather is not part of the step here
  l.precision = "fp16";
  const ppsim::TransformerSetup setup{gpt(4), l, ideal_machine()};
  const double params = 1'000'000;
  // Zero the fp16 gradient buffer: 2 bytes for every parameter on the device. On the shard of a
  // quarter: cast the fp16 gradients to fp32 main gradients (2 + 4), unscale and check them (4 + 4),
  // gradient norm (4), fused Adam (16 + 12), copy into the fp16 parameters (4 + 2): 52 bytes.
  CHECK_THAT(ppsim::optimizer_step_time(setup, params), WithinRel((2 * params + 52 * params / 4) / kHbm, 1e-12));
  // bf16 has no loss scale and, by Megatron's default, fp32 gradients: 4 to zero, 38 on the shard.
  l.precision = "bf16";
  const ppsim::TransformerSetup bf16{gpt(4), l, ideal_machine()};
  CHECK_THAT(ppsim::optimizer_step_time(bf16, params), WithinRel((4 * params + 38 * params / 4) / kHbm, 1e-12));
}

TEST_CASE("A measured collective table replaces the derived ring inside a node, and only there") {
  // t = 2 on an ideal machine: each of F's two all-reduces moves 2 T h bytes (T = 4096, h = 1024).
  // Derived: a ring of 2 steps of half the tensor, (2 T h / 2) * 2 / kNvlink each. Measured at a flat
  // bus bandwidth B: 2 T h * 2(n-1)/n / B = 2 T h / B each.
  const Architecture arch = gpt();
  const TrainingLayout l = layout(2, true);
  const double bytes = 2.0 * 4096 * 1024;
  HardwareProfile machine = ideal_machine();
  const PassTimes derived = ppsim::layer_pass_times(arch, l, machine);
  CHECK_THAT(derived.forward.collective, WithinRel(2 * bytes / kNvlink, 1e-12));
  const double bus = 1e11;
  machine.collectives.push_back(
      ppsim::CollectiveTable::create(ppsim::Collective::kAllReduce, 2, {{1e3, bus}, {1e10, bus}}).value);
  const PassTimes measured = ppsim::layer_pass_times(arch, l, machine);
  CHECK_THAT(measured.forward.collective, WithinRel(2 * bytes / bus, 1e-12));
  CHECK_THAT(measured.input_grad.collective, WithinRel(2 * bytes / bus, 1e-12));
  // A table for another group size or operation is not used; nor is one for a group across nodes.
  CHECK_THAT(ppsim::collective_time(machine, ppsim::Collective::kAllReduce, bytes, 4, false),
             WithinRel(ppsim::ring_collective_time(machine, bytes, 4, 2, false), 1e-12));
  CHECK_THAT(ppsim::collective_time(machine, ppsim::Collective::kAllGather, bytes, 2, false),
             WithinRel(ppsim::ring_collective_time(machine, bytes, 2, 1, false), 1e-12));
  CHECK_THAT(ppsim::collective_time(machine, ppsim::Collective::kAllReduce, bytes, 2, true),
             WithinRel(ppsim::ring_collective_time(machine, bytes, 2, 2, true), 1e-12));
}

TEST_CASE("With --tp-comm-overlap the input-gradient pass pairs each linear with the conjugate collective") {
  // F hides an all-gather behind QKV and MLP-in and a reduce-scatter behind the other two; I the
  // reverse. Swap a slow and a fast measured table between the two operations and F's exposed time
  // becomes I's. The fast one (1e15 B/s) hides entirely, so the SP backward gathers add nothing.
  const Architecture arch = gpt();
  TrainingLayout l = layout(2, true);
  l.sequence_parallel = true;
  l.tp_comm_overlap = true;
  auto machine_with = [](double gather, double scatter) {
    HardwareProfile p = ideal_machine();
    p.collectives.push_back(
        ppsim::CollectiveTable::create(ppsim::Collective::kAllGather, 2, {{1e3, gather}, {1e10, gather}}).value);
    p.collectives.push_back(
        ppsim::CollectiveTable::create(ppsim::Collective::kReduceScatter, 2, {{1e3, scatter}, {1e10, scatter}}).value);
    return p;
  };
  const PassTimes slow_gather = ppsim::layer_pass_times(arch, l, machine_with(1e9, 1e15));
  const PassTimes slow_scatter = ppsim::layer_pass_times(arch, l, machine_with(1e15, 1e9));
  REQUIRE(slow_gather.forward.collective > 0);
  CHECK_THAT(slow_scatter.input_grad.collective, WithinRel(slow_gather.forward.collective, 1e-12));
  CHECK(slow_gather.forward.collective != slow_scatter.forward.collective);
}
