// SPDX-License-Identifier: Apache-2.0
// FSDP per transformer block (--fsdp-unit block, torchtitan's units): each op gathers its stage
// unit by unit beside its compute, by hand on the ideal machine (no latency, no efficiency tables).
#include <catch2/catch.hpp>

#include "models/transformer/fully_sharded.hpp"
#include "models/transformer/transformer_cost_model.hpp"
#include "support/ideal_machine.hpp"

using Catch::Matchers::WithinRel;
using ppsim::Op;
using ppsim::ShardUnit;
using ppsim::TrainingLayout;
using ppsim::UnitStep;

namespace {

constexpr auto kF = static_cast<std::size_t>(Op::kForward);
constexpr auto kB = static_cast<std::size_t>(Op::kBackward);
constexpr auto kI = static_cast<std::size_t>(Op::kBackwardInput);
constexpr auto kW = static_cast<std::size_t>(Op::kBackwardWeight);

TrainingLayout sharded(int d, int p = 1) {
  TrainingLayout l;
  l.pipeline = p;
  l.data_parallel = d;
  l.fsdp = true;
  return l;
}

// A block of `parameters` whose forward, input-gradient and weight-gradient passes take `pass`
// seconds each.
ShardUnit block(double parameters, double pass) {
  ShardUnit unit{.parameters = parameters, .block = true};
  unit.times.forward.gemm = pass;
  unit.times.input_grad.gemm = pass;
  unit.times.weight_grad.gemm = pass;
  return unit;
}

// Two shards on one node: a bf16 all-gather of P parameters moves P / 2 * 2 bytes, 1 ms for
// P = 4e8 at 4e11 bytes/s; the fp32 reduce-scatter twice that, 2 ms.
constexpr double kParameters = 4e8;

}  // namespace

TEST_CASE("A gather that fits in the previous unit's compute costs nothing, a longer one its excess") {
  // Gathers of 1, computes of 2: unit 1's gather runs 0-1 beside unit 0's compute 0-2.
  CHECK(ppsim::unit_by_unit({{1, 2, 0}, {1, 2, 0}}, true).extra == 0);
  // Gathers of 3: unit 1's gather 0-3, its compute 3-5 after unit 0's 0-2: 1 beyond the compute.
  CHECK(ppsim::unit_by_unit({{3, 2, 0}, {3, 2, 0}}, true).extra == 1);
  // Nobody gathered the first unit: 0-3 its gather, 3-5 its compute, unit 1's gather 3-6, compute
  // 6-8: 4 beyond the compute.
  CHECK(ppsim::unit_by_unit({{3, 2, 0}, {3, 2, 0}}, false).extra == 4);
  // One unit ahead only: unit 2's gather waits for unit 1 to start computing (at 5), ends at 6,
  // still before unit 1's compute ends at 10.
  CHECK(ppsim::unit_by_unit({{1, 5, 0}, {1, 5, 0}, {1, 5, 0}}, true).extra == 0);
}

TEST_CASE("Each unit's reduce-scatter follows its compute on the same link, and the op ends before the last") {
  // Computes of 2, reduce-scatters of 3: 2-5 and 5-8, after the op's end at 4.
  const ppsim::UnitSpan span = ppsim::unit_by_unit({{0, 2, 3}, {0, 2, 3}}, true);
  CHECK(span.extra == 0);
  CHECK(span.reduce_tail == 4);
  // A reduce-scatter ahead of the next gather on the link delays that unit's compute: unit 0
  // computes 0-2 beside unit 1's gather 0-1, then reduce-scatters 2-5; unit 2's gather, issued as
  // unit 1 starts at 2, waits for the link until 5 and ends at 6, so unit 2 computes 6-8, not 4-6.
  const ppsim::UnitSpan shared = ppsim::unit_by_unit({{1, 2, 3}, {1, 2, 3}, {1, 2, 3}}, true);
  CHECK(shared.extra == 2);
}

TEST_CASE("A stage alone gathers again in every forward and backward and reduce-scatters as its backward goes") {
  const ppsim::TransformerSetup setup{ppsim::test::gpt(2), sharded(2), ppsim::test::ideal_machine()};
  const ppsim::ShardingCosts costs =
      ppsim::fully_sharded_units(setup, {block(kParameters, 2e-3), block(kParameters, 2e-3)}, /*alone=*/true);
  CHECK(costs.per_block);
  CHECK(costs.regather);  // torchtitan's default policy without pipeline parallelism
  CHECK(costs.reduce_per_op);
  CHECK_THAT(costs.gather_time, WithinRel(1e-3, 1e-12));  // UNSHARD: the first unit only
  CHECK(costs.gather_extra[kF] == 0);                      // 1 ms gathers under 2 ms computes
  CHECK_THAT(costs.cold_forward_extra, WithinRel(1e-3, 1e-12));
  // B (4 ms a unit): unit 0's gather 0-1 beside unit 1's compute 0-4; reduce-scatters 4-6 and 8-10:
  // nothing exposed but the last unit's, which REDUCE_GRAD waits for.
  CHECK(costs.gather_extra[kB] == 0);
  CHECK(costs.reduce_extra[kB] == 0);
  CHECK(costs.reduce_extra[kI] == 0);  // I has no weight gradients
  CHECK(costs.reduce_extra[kW] == 0);  // W 0-2, 2-4; reduce-scatters 2-4, 4-6
  CHECK_THAT(costs.reduce_time, WithinRel(2e-3, 1e-12));
  CHECK_THAT(costs.unit_gathers, WithinRel(2e-3, 1e-12));
  CHECK_THAT(costs.unit_reduces, WithinRel(4e-3, 1e-12));
  // Two units in flight (2 x 8e8 bytes), no more than the whole stage; the gradients of two units.
  CHECK(costs.parameter_bytes == 1'600'000'000);
  CHECK(costs.gradient_bytes == 3'200'000'000);

  // Forwards of 0.5 ms cannot hide 1 ms gathers: unit 1 computes 1-1.5, half a millisecond late.
  const ppsim::ShardingCosts slow =
      ppsim::fully_sharded_units(setup, {block(kParameters, 0.5e-3), block(kParameters, 0.5e-3)}, true);
  CHECK_THAT(slow.gather_extra[kF], WithinRel(0.5e-3, 1e-12));
  // W of 0.5 ms: reduce-scatters 0.5-2.5 and 2.5-4.5 against an op ending at 1: 3.5 after it, 2 of
  // them the last unit's own.
  CHECK_THAT(slow.reduce_extra[kW], WithinRel(1.5e-3, 1e-12));
}

TEST_CASE("Four blocks alone hold two in flight and the last one kept, not the whole stage") {
  const ppsim::TransformerSetup setup{ppsim::test::gpt(4), sharded(2), ppsim::test::ideal_machine()};
  const std::vector<ShardUnit> units(4, block(kParameters, 2e-3));
  CHECK(ppsim::fully_sharded_units(setup, units, true).parameter_bytes == 2'400'000'000);
  TrainingLayout never = sharded(2);
  never.reshard_after_forward = "never";
  const ppsim::ShardingCosts kept = ppsim::fully_sharded_units({ppsim::test::gpt(4), never, setup.hardware}, units, true);
  CHECK_FALSE(kept.regather);
  CHECK(kept.parameter_bytes == 3'200'000'000);
}

TEST_CASE("Inside a pipeline a stage stays gathered and its gradients wait for REDUCE_GRAD, unit after unit") {
  const ppsim::TransformerSetup setup{ppsim::test::gpt(4), sharded(2, 2), ppsim::test::ideal_machine()};
  const std::vector<ShardUnit> units(2, block(kParameters, 2e-3));
  const ppsim::ShardingCosts costs = ppsim::fully_sharded_units(setup, units, /*alone=*/false);
  CHECK_FALSE(costs.regather);  // torchtitan's default policy with pipeline parallelism
  CHECK_FALSE(costs.reduce_per_op);
  CHECK_THAT(costs.reduce_time, WithinRel(4e-3, 1e-12));
  CHECK(costs.parameter_bytes == 1'600'000'000);
  CHECK(costs.gradient_bytes == 3'200'000'000);  // accumulated over the micro-batches
  TrainingLayout always = setup.layout;
  always.reshard_after_forward = "always";
  CHECK(ppsim::fully_sharded_units({setup.arch, always, setup.hardware}, units, false).regather);
}

TEST_CASE("FSDP's units add up to the stage: per block the same bytes move as when the stage is one unit") {
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  for (const int p : {1, 2}) {
    TrainingLayout blocks = sharded(8, p);
    TrainingLayout stage = blocks;
    stage.fsdp_unit = "stage";
    std::vector<int> devices(static_cast<std::size_t>(p));
    for (int d = 0; d < p; ++d) devices[static_cast<std::size_t>(d)] = d;
    const ppsim::TransformerCostModel per_block({ppsim::test::gpt(4), blocks, machine}, devices);
    const ppsim::TransformerCostModel whole({ppsim::test::gpt(4), stage, machine}, devices);
    for (int s = 0; s < p; ++s) {
      INFO("p = " << p << ", stage " << s);
      const ppsim::ShardingCosts units = per_block.sharding(s);
      const ppsim::ShardingCosts one = whole.sharding(s);
      CHECK(units.per_block);
      CHECK_FALSE(one.per_block);
      // No latency: a collective's time is linear in its bytes.
      CHECK_THAT(units.unit_gathers, WithinRel(one.gather_time, 1e-12));
      CHECK_THAT(units.unit_reduces, WithinRel(one.reduce_time, 1e-12));
      if (p > 1) CHECK(units.parameter_bytes == one.parameter_bytes);
      if (p == 1) CHECK(units.parameter_bytes < one.parameter_bytes);
    }
  }
}

TEST_CASE("FSDP with context parallelism shards over d x c, as torchtitan's dp_shard_cp mesh") {
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  TrainingLayout with_cp = sharded(4, 2);
  with_cp.context_parallel = 2;
  const ppsim::TransformerCostModel cp({ppsim::test::gpt(4), with_cp, machine}, {0, 1});
  const ppsim::TransformerCostModel wide({ppsim::test::gpt(4), sharded(8, 2), machine}, {0, 1});
  CHECK(with_cp.fsdp_shards() == 8);
  for (std::size_t d = 0; d < 2; ++d) {
    CHECK(cp.static_memory()[d].parameters == wide.static_memory()[d].parameters);
    CHECK(cp.static_memory()[d].optimizer == wide.static_memory()[d].optimizer);
  }
  CHECK(cp.sharding(0).unit_gathers == wide.sharding(0).unit_gathers);
}

TEST_CASE("An FP8 all-gather moves the linear weights in one byte and everything else in two") {
  TrainingLayout fp8 = sharded(2);
  fp8.precision = "fp8";
  CHECK(ppsim::fsdp_gather_bytes(fp8, 10, 6) == 20);  // without --fsdp-float8-all-gather: bf16
  fp8.fsdp_float8_all_gather = true;
  CHECK(ppsim::fsdp_gather_bytes(fp8, 10, 6) == 6 + 2 * 4);
  TrainingLayout bf16 = sharded(2);
  bf16.fsdp_float8_all_gather = true;  // refused by the study; the bytes stay bf16
  CHECK(ppsim::fsdp_gather_bytes(bf16, 10, 6) == 20);
}
