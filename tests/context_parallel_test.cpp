// SPDX-License-Identifier: Apache-2.0
// Context parallelism (context_parallel.hpp): the sequence split over c ranks, each method's key and
// value exchange beyond the attention compute, by hand on the ideal machine (no latency, no
// efficiency tables: every time an exact quotient), and where the c ranks sit.
#include <catch2/catch.hpp>
#include <string>

#include "models/transformer/context_parallel.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/transformer_cost_model.hpp"
#include "sim/ring_replay.hpp"
#include "support/ideal_machine.hpp"

using Catch::Matchers::WithinRel;
using ppsim::Architecture;
using ppsim::Op;
using ppsim::TrainingLayout;
using ppsim::test::kInfiniband;
using ppsim::test::kNvlink;

namespace {

constexpr double kBytes = 2;  // bf16 keys and values

TrainingLayout split(std::int64_t seq, int c, const char* method = "p2p") {
  TrainingLayout l;
  l.seq = seq;
  l.context_parallel = c;
  l.cp_comm = method;
  return l;
}

// The layer's exchange alone: t = 1, so no tensor-parallel collective shares the field.
ppsim::PassTimes layer(const Architecture& arch, const TrainingLayout& l, const ppsim::HardwareProfile& machine) {
  return ppsim::layer_pass_times(arch, l, machine);
}

}  // namespace

TEST_CASE("Activations at context-parallel c and sequence s are those of c = 1 at s / c, to the byte") {
  Architecture moe = ppsim::test::swiglu("moe-test", 4);
  moe.moe = {.experts = 4, .top_k = 2, .expert_ffn_hidden = 512};
  Architecture mla = ppsim::test::swiglu("mla-test", 4);
  mla.mla = {.q_lora_rank = 256, .kv_lora_rank = 128, .qk_nope_head_dim = 64, .qk_rope_head_dim = 32, .v_head_dim = 64};
  const Architecture arch = GENERATE_COPY(ppsim::test::gpt(4), ppsim::test::swiglu("swiglu-test", 4), moe, mla);
  const int c = GENERATE(2, 4);
  const auto recompute = GENERATE(ppsim::Recompute::kNone, ppsim::Recompute::kSelective, ppsim::Recompute::kFull);
  INFO(arch.name << " c=" << c);
  TrainingLayout split_layout = split(8192, c);
  TrainingLayout whole = split(8192 / c, 1);
  for (TrainingLayout* l : {&split_layout, &whole}) {
    l->tensor_parallel = 2;
    l->sequence_parallel = true;
    l->pipeline = 2;
    l->recompute = recompute;
  }
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::TransformerCostModel a({arch, split_layout, machine}, {0, 1});
  const ppsim::TransformerCostModel b({arch, whole, machine}, {0, 1});
  for (int stage = 0; stage < 2; ++stage) {
    CHECK(a.activation_bytes(stage) == b.activation_bytes(stage));
    CHECK(a.weight_stash_bytes(stage) == b.weight_stash_bytes(stage));
  }
  CHECK(a.message_bytes(0, 1) == b.message_bytes(0, 1));  // pipeline messages shrink by c
}

TEST_CASE("A ring costs nothing while each block's transfer fits in its compute, and the difference per step beyond") {
  const Architecture arch = ppsim::test::gpt(4);
  ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const double speed = GENERATE(1.0, 0.1, 10.0);  // NVLink as given, ten times slower and faster
  machine.intra_node_bandwidth = kNvlink * speed;
  const int c = GENERATE(2, 4);
  INFO("c=" << c << " NVLink x" << speed);
  const ppsim::PassTimes times = layer(arch, split(8192, c), machine);
  // One block: the rank's 8192 / c tokens' keys and values, 1024 wide each.
  const double block = 8192.0 / c * (1024 + 1024) * kBytes;
  const double transfer = block / machine.intra_node_bandwidth;
  const double forward = (c - 1) * std::max(0.0, transfer - times.forward.attention / c);
  const double backward = (c - 1) * std::max(0.0, 2 * transfer - times.input_grad.attention / c);
  CHECK(times.forward.collective == Approx(forward).margin(1e-18).epsilon(1e-12));
  CHECK(times.input_grad.collective == Approx(backward).margin(1e-18).epsilon(1e-12));
  if (speed == 10.0) CHECK(times.forward.collective == 0);  // hidden behind the blocks
  if (speed == 0.1) CHECK(times.forward.collective > 0);
  // A recomputed attention core runs its ring again: the forward's attention and its exposed transfer
  // (flash attention and no dropout: nothing else in the core).
  TrainingLayout selective = split(8192, c);
  selective.recompute = ppsim::Recompute::kSelective;
  const ppsim::PassTimes again = layer(arch, selective, machine);
  CHECK_THAT(again.input_grad.recompute, WithinRel(again.forward.attention + again.forward.collective, 1e-12));
  // The rank computes its 8192 / c queries against all 8192 keys, half of them masked: 1/c of the work.
  const ppsim::PassTimes alone = layer(arch, split(8192, 1), machine);
  CHECK_THAT(times.forward.attention * c, WithinRel(alone.forward.attention, 1e-12));
}

TEST_CASE("A ring that leaves the node pays the inter-node link: c ranks t apart beyond eight GPUs") {
  const Architecture arch = ppsim::test::gpt(4);
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  TrainingLayout l = split(8192, 2);
  l.tensor_parallel = 8;  // 8 x 2 = 16 GPUs: the two context-parallel ranks sit in different nodes
  CHECK(ppsim::context_parallel_crosses_nodes(machine, l, 2));
  CHECK_FALSE(ppsim::context_parallel_crosses_nodes(machine, split(8192, 8), 8));
  ppsim::AttentionWidths widths{.queries = 128, .keys = 128, .values = 128, .output = 128};
  const double block = 4096 * 256 * kBytes;
  const ppsim::ContextParallelTimes ring = ppsim::context_parallel_times(machine, l, 4096, widths, 0, 0);
  CHECK_THAT(ring.forward, WithinRel(block / kInfiniband, 1e-12));
  CHECK_THAT(ring.backward, WithinRel(2 * block / kInfiniband, 1e-12));
  l.tensor_parallel = 4;  // 4 x 2 fit in one node
  CHECK_THAT(ppsim::context_parallel_times(machine, l, 4096, widths, 0, 0).forward, WithinRel(block / kNvlink, 1e-12));
}

TEST_CASE("Ulysses, all-gather and the hierarchical mix pay their collectives in full") {
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::AttentionWidths widths{.queries = 1024, .keys = 256, .values = 256, .output = 1024};
  const double tokens = 2048;
  const double attention = 1;  // a second of attention: a ring would hide everything behind it
  SECTION("a2a: Q, K and V to heads before the attention, the output back after, in F and again in I") {
    const TrainingLayout l = split(8192, 4, "a2a");
    const ppsim::ContextParallelTimes got = ppsim::context_parallel_times(machine, l, tokens, widths, attention, attention);
    const double expected = ppsim::all_to_all_time(machine, tokens * (1024 + 256 + 256) * kBytes, 4, false, 4) +
                            ppsim::all_to_all_time(machine, tokens * 1024 * kBytes, 4, false, 4);
    // Each rank keeps 1/4 of its share: 3/4 crosses NVLink.
    CHECK_THAT(expected, WithinRel(0.75 * tokens * (1536 + 1024) * kBytes / kNvlink, 1e-12));
    CHECK_THAT(got.forward, WithinRel(expected, 1e-12));
    CHECK_THAT(got.backward, WithinRel(expected, 1e-12));
  }
  SECTION("allgather: keys and values gathered in F; gathered again and their gradients reduce-scattered in I") {
    const TrainingLayout l = split(8192, 4, "allgather");
    const ppsim::ContextParallelTimes got = ppsim::context_parallel_times(machine, l, tokens, widths, attention, attention);
    const double gathered = 4 * tokens * 512 * kBytes;
    const double gather = ppsim::collective_time(machine, ppsim::Collective::kAllGather, gathered, 4, false, 4);
    CHECK_THAT(gather, WithinRel(0.75 * gathered / kNvlink, 1e-12));  // a ring's (n - 1)/n of the tensor
    CHECK_THAT(got.forward, WithinRel(gather, 1e-12));
    CHECK_THAT(got.backward,
               WithinRel(gather + ppsim::collective_time(machine, ppsim::Collective::kReduceScatter, gathered, 4, false, 4),
                         1e-12));
    CHECK(got.buffer_bytes == 2 * gathered);
  }
  SECTION("a2a+p2p: the all-to-alls inside groups of two, a ring of two across them") {
    TrainingLayout l = split(8192, 4, "a2a+p2p");
    l.hierarchical_cp = {2, 2};
    const ppsim::ContextParallelTimes got = ppsim::context_parallel_times(machine, l, tokens, widths, 0, 0);
    const double a2a = ppsim::all_to_all_time(machine, tokens * 1536 * kBytes, 2, false, 2) +
                       ppsim::all_to_all_time(machine, tokens * 1024 * kBytes, 2, false, 2);
    const double block = tokens * 512 * kBytes;
    CHECK_THAT(got.forward, WithinRel(a2a + block / kNvlink, 1e-12));  // one ring step, nothing to hide it
    CHECK_THAT(got.backward, WithinRel(a2a + 2 * block / kNvlink, 1e-12));
  }
}

TEST_CASE("Gradients reduce and the distributed optimizer shards over d x c, and c ranks sit between t and d") {
  const Architecture arch = ppsim::test::gpt(8);
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  TrainingLayout cp = split(8192, 2);
  cp.data_parallel = 2;
  cp.tensor_parallel = 2;
  cp.pipeline = 2;
  cp.distributed_optimizer = true;
  TrainingLayout dp = cp;
  dp.context_parallel = 1;
  dp.data_parallel = 4;
  const ppsim::TransformerCostModel a({arch, cp, machine}, {0, 1});
  const ppsim::TransformerCostModel b({arch, dp, machine}, {0, 1});
  // The same 8 GPUs per pipeline device, the same shard of the optimizer state.
  CHECK(a.static_memory()[0].optimizer == b.static_memory()[0].optimizer);
  CHECK(cp.gradient_ranks() == 4);
  CHECK(cp.gpus() == 16);
  // Device 1's first GPU is rank t * c * d = 8: the next node.
  CHECK(a.crosses_nodes(0, 1));
  dp.data_parallel = 1;
  CHECK_FALSE(ppsim::TransformerCostModel({arch, dp, machine}, {0, 1}).crosses_nodes(0, 1));
  // The ring's blocks in flight sit beside the workspace: four blocks of 4096 tokens' K and V on a
  // tensor-parallel rank (512 + 512 wide).
  CHECK(a.static_memory()[0].workspace - b.static_memory()[0].workspace == 4 * 4096 * 1024 * 2);
}

TEST_CASE("The ring replayed step by step takes c blocks of compute, or one and c - 1 transfers when those are longer") {
  const std::vector<double> steps(4, 1.0);  // four ranks, a block of compute 1 each step
  // Transfers shorter than a block hide: 4 steps of 1.
  CHECK(ppsim::replay_ring_attention(steps, 0.5) == 4);
  // Transfers of 2: the first step on the rank's own block 0-1, then each block arrives 2 after the
  // one before was sent: steps start at 0, 2, 4, 6 and the last ends at 7.
  CHECK(ppsim::replay_ring_attention(steps, 2) == 7);
  // One rank is its own ring: one block, nothing sent.
  CHECK(ppsim::replay_ring_attention({3.0}, 100) == 3);
  // A slower step delays every later one on every rank: 1, 3 (slow), 1, 1 with free transfers.
  CHECK(ppsim::replay_ring_attention({1, 3, 1, 1}, 0) == 6);
  // The cost model's closed form agrees on the uniform ring: 1 + 3 max(1, 2).
  CHECK(4 + ppsim::ring_attention_exposed(4, 2, 4) == 7);
  CHECK(ppsim::ring_attention_exposed(4, 0.5, 4) == 0);
}
