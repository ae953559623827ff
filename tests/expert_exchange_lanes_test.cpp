// SPDX-License-Identifier: Apache-2.0
// The expert all-to-alls on a timeline (TransformerCostModel::exchanges, recorded by the engine):
// each MoE layer's dispatch and combine placed inside its op by the op's own terms, in an overlapped
// pair by overlap_time's four phases. On the ideal machine, where every term is an exact quotient.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "models/transformer/pass_costs.hpp"
#include "models/transformer/transformer_cost_model.hpp"
#include "schedules/registry.hpp"
#include "sim/engine.hpp"
#include "support/ideal_machine.hpp"

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using ppsim::Action;
using ppsim::Architecture;
using ppsim::Exchange;
using ppsim::ExchangeKind;
using ppsim::Op;
using ppsim::TrainingLayout;

namespace {

constexpr ExchangeKind kDispatch = ExchangeKind::kDispatch;
constexpr ExchangeKind kCombine = ExchangeKind::kCombine;

// Four experts of width 512, two per token; `layers` layers, all MoE.
Architecture moe_model(int layers) {
  Architecture arch = ppsim::test::swiglu("moe-test", layers);
  arch.moe = {.experts = 4, .top_k = 2, .expert_ffn_hidden = 512};
  return arch;
}

// Two pipeline devices; the two data-parallel ranks are the two expert-parallel ones.
TrainingLayout two_stages(int expert_parallel = 2) {
  TrainingLayout l;
  l.seq = 2048;
  l.flash_attention = true;
  l.pipeline = 2;
  l.data_parallel = 2;
  l.expert_parallel = expert_parallel;
  return l;
}

std::vector<Exchange> exchanges_of(const ppsim::CostModel& model, const Action& action, const Action* partner = nullptr) {
  std::vector<Exchange> out;
  model.exchanges(action, partner, out);
  return out;
}

std::vector<ExchangeKind> kinds(const std::vector<Exchange>& exchanges) {
  std::vector<ExchangeKind> out;
  for (const Exchange& e : exchanges) out.push_back(e.kind);
  return out;
}

}  // namespace

TEST_CASE("A dense model, and an MoE model without expert parallelism, have no all-to-all on their timelines") {
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::TransformerCostModel dense({ppsim::test::gpt(4), two_stages(1), machine}, {0, 1});
  const ppsim::TransformerCostModel local({moe_model(4), two_stages(1), machine}, {0, 1});
  CHECK_FALSE(dense.has_exchanges());
  CHECK_FALSE(local.has_exchanges());
  const ppsim::Program program = ppsim::find_schedule("1f1b")->build({2, 4, 1});
  ppsim::Engine engine;
  const auto outcome = engine.run(program, local, {.record_timeline = true});
  REQUIRE(outcome.result);
  CHECK(outcome.result->timeline->exchanges.empty());
  CHECK(outcome.result->timeline->spans.size() == 16);
}

TEST_CASE("A forward shows each MoE layer's dispatch before its experts and its combine after, each half its dispatch term") {
  const Architecture arch = moe_model(4);
  const TrainingLayout l = two_stages();
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::TransformerCostModel model({arch, l, machine}, {0, 1});
  REQUIRE(model.has_exchanges());
  const ppsim::PassTime layer = ppsim::layer_pass_times(arch, l, machine, true).forward;
  const double embedding = ppsim::embedding_pass_times(arch, l, machine).forward.total();
  const double f = model.compute_time(Op::kForward, 0);  // the embedding, then two MoE layers
  const std::vector<Exchange> got = exchanges_of(model, Action(0, Op::kForward, 0));
  CHECK(kinds(got) == std::vector<ExchangeKind>{kDispatch, kCombine, kDispatch, kCombine});
  const double attention = layer.total() - layer.dispatch - layer.experts;
  CHECK_THAT(got[0].from * f, WithinRel(embedding + attention, 1e-12));
  for (const Exchange& e : got) {
    CHECK_THAT((e.to - e.from) * f, WithinRel(layer.dispatch / 2, 1e-12));
    CHECK_FALSE(e.of_partner);
    CHECK_FALSE(e.recomputed);
  }
  CHECK_THAT((got[1].from - got[0].to) * f, WithinRel(layer.experts, 1e-12));                 // the experts between
  CHECK_THAT((got[2].from - got[1].to) * f, WithinRel(attention, 1e-12));                     // the next layer's attention
  CHECK_THAT(got[3].to, WithinAbs(1.0, 1e-12));  // stage 0 has no head: its last layer's combine ends the op
}

TEST_CASE("A backward moves the combine's gradient first, and under full recomputation the re-run forward's pair before it") {
  const Architecture arch = moe_model(4);
  TrainingLayout l = two_stages();
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::TransformerCostModel plain({arch, l, machine}, {0, 1});
  CHECK(kinds(exchanges_of(plain, Action(1, Op::kBackwardInput, 2))) ==
        std::vector<ExchangeKind>{kCombine, kDispatch, kCombine, kDispatch});
  CHECK(exchanges_of(plain, Action(1, Op::kBackwardWeight, 2)).empty());  // W moves no tokens
  // A full B is I then W per layer: the same four, earlier in a longer op.
  const std::vector<Exchange> b = exchanges_of(plain, Action(0, Op::kBackward, 1));
  const std::vector<Exchange> i = exchanges_of(plain, Action(0, Op::kBackwardInput, 1));
  REQUIRE(b.size() == 4);
  CHECK(b[0].from * plain.compute_time(Op::kBackward, 0) ==
        Approx(i[0].from * plain.compute_time(Op::kBackwardInput, 0)).epsilon(1e-12));

  l.recompute = ppsim::Recompute::kFull;
  const ppsim::TransformerCostModel full({arch, l, machine}, {0, 1});
  const std::vector<Exchange> got = exchanges_of(full, Action(0, Op::kBackwardInput, 1));  // its last layer first
  CHECK(kinds(got) == std::vector<ExchangeKind>{kDispatch, kCombine, kCombine, kDispatch,  // last layer
                                                kDispatch, kCombine, kCombine, kDispatch});  // first layer
  for (std::size_t k = 0; k < got.size(); ++k) CHECK(got[k].recomputed == (k % 4 < 2));
  // Megatron's moe module re-runs the MoE layer alone, all-to-alls included: the same order.
  l.recompute = ppsim::Recompute::kSelective;
  l.recompute_modules = {.core_attn = false, .moe = true};
  const ppsim::TransformerCostModel selective({arch, l, machine}, {0, 1});
  const std::vector<Exchange> again = exchanges_of(selective, Action(0, Op::kBackwardInput, 1));
  CHECK(kinds(again) == kinds(got));
  for (std::size_t k = 0; k < again.size(); ++k) CHECK(again[k].recomputed == (k % 4 < 2));
  l.recompute = ppsim::Recompute::kFull;
  const ppsim::PassTimes layer = ppsim::layer_pass_times(arch, l, machine, true);
  // The re-run forward starts the op (stage 0 has no head to go back through first): its attention,
  // then its dispatch.
  const double forward_attention = layer.forward.total() - layer.forward.dispatch - layer.forward.experts;
  CHECK_THAT(got[0].from * full.compute_time(Op::kBackwardInput, 0), WithinRel(forward_attention, 1e-12));
}

TEST_CASE("An overlapped pair's all-to-alls follow its four phases: B's combine, F's dispatch, B's dispatch, F's combine") {
  const Architecture arch = moe_model(4);
  const TrainingLayout l = two_stages();
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();  // no SM count: nothing slows the compute
  const ppsim::TransformerCostModel model({arch, l, machine}, {0, 1});
  const Action f(0, Op::kForward, 3, /*fused=*/true);
  const Action b(1, Op::kBackward, 1);
  const std::vector<Exchange> got = exchanges_of(model, f, &b);
  REQUIRE(got.size() == 8);  // two layer pairs
  CHECK(kinds(got) == std::vector<ExchangeKind>{kCombine, kDispatch, kDispatch, kCombine,
                                                kCombine, kDispatch, kDispatch, kCombine});
  for (std::size_t k = 0; k < got.size(); ++k) CHECK(got[k].of_partner == (k % 2 == 0));
  // Phase by phase, each all-to-all from its phase's start; a phase lasts its longer stream.
  const ppsim::PassTimes layer = ppsim::layer_pass_times(arch, l, machine, true);
  const ppsim::PassTime& lf = layer.forward;
  ppsim::PassTime lb = layer.input_grad;
  lb += layer.weight_grad;
  const double phases[4] = {std::max(lf.total() - lf.dispatch - lf.experts, lb.dispatch / 2),
                            std::max(lb.experts, lf.dispatch / 2), std::max(lf.experts, lb.dispatch / 2),
                            std::max(lb.total() - lb.dispatch - lb.experts, lf.dispatch / 2)};
  const double total = model.overlap_time(0, Op::kBackward, 1);
  double start = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK_THAT(got[k].from * total, WithinAbs(start, 1e-12 * total));
    start += phases[k];
  }
  CHECK_THAT(got[4].from * total, WithinAbs(start, 1e-12 * total));  // the second pair follows at once
}

TEST_CASE("On a simulated timeline every all-to-all lies inside its op, one at a time per device, two per MoE layer") {
  const auto [schedule, v] = GENERATE(std::pair<const char*, int>{"1f1b", 1}, std::pair<const char*, int>{"zbv", 2},
                                      std::pair<const char*, int>{"interleaved-1f1b", 2},
                                      std::pair<const char*, int>{"combined-1f1b", 2},
                                      std::pair<const char*, int>{"dualpipev", 2});
  INFO(schedule);
  const Architecture arch = moe_model(8);
  TrainingLayout l = two_stages();
  l.chunks = v;
  const ppsim::Program program = ppsim::find_schedule(schedule)->build({2, 6, v});
  const ppsim::TransformerCostModel model({arch, l, ppsim::test::ideal_machine()}, program.stage_device,
                                          program.num_pipelines);
  ppsim::Engine engine;
  const auto outcome = engine.run(program, model, {.record_timeline = true});
  REQUIRE(outcome.result);
  const ppsim::Timeline& timeline = *outcome.result->timeline;
  // Every stage holds 8 / (2v) MoE layers; each F and each I or B moves two exchanges per layer.
  const std::size_t layers = 8 / (2 * static_cast<std::size_t>(v));
  std::size_t moving = 0;
  for (const ppsim::Span& span : timeline.spans) {
    for (const Action* half : {&span.action, span.action.fused_with_next ? &span.partner : nullptr}) {
      if (half != nullptr && half->op != Op::kBackwardWeight) moving += 2 * layers;
    }
  }
  CHECK(timeline.exchanges.size() == moving);
  std::vector<double> free_at(2, 0);
  for (const ppsim::ExchangeSpan& exchange : timeline.exchanges) {
    CHECK(exchange.end > exchange.start);
    CHECK(exchange.start >= free_at[static_cast<std::size_t>(exchange.device)] - 1e-15);
    free_at[static_cast<std::size_t>(exchange.device)] = exchange.end;
    // Its op: a span of the device running that action (as either half of a pair).
    const bool inside = std::any_of(timeline.spans.begin(), timeline.spans.end(), [&](const ppsim::Span& span) {
      Action first = span.action;
      first.fused_with_next = false;
      const bool mine = first == exchange.action || (span.action.fused_with_next && span.partner == exchange.action);
      return mine && span.device == exchange.device && span.start <= exchange.start && exchange.end <= span.end + 1e-15;
    });
    CHECK(inside);
  }
}
