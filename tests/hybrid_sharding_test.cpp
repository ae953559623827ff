// SPDX-License-Identifier: Apache-2.0
// HSDP (--data-parallel-replicate): FSDP2's shards over d / R consecutive ranks, replicated R times,
// by hand on the ideal machine (no latency, no efficiency tables).
#include <catch2/catch.hpp>

#include "models/transformer/fully_sharded.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/transformer_cost_model.hpp"
#include "support/ideal_machine.hpp"

using Catch::Matchers::WithinRel;
using ppsim::Collective;
using ppsim::TrainingLayout;

namespace {

TrainingLayout sharded(int d, int replicas) {
  TrainingLayout l;
  l.pipeline = 2;
  l.data_parallel = d;
  l.fsdp = true;
  l.data_parallel_replicate = replicas;
  return l;
}

}  // namespace

TEST_CASE("HSDP gathers and reduce-scatters among a replica's shards, then all-reduces each shard over the replicas") {
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::TransformerSetup setup{ppsim::test::gpt(4), sharded(16, 2), machine};
  const double parameters = 1e9;
  const ppsim::ShardingCosts costs = ppsim::fully_sharded_stage(setup, parameters);
  // Eight shards fill one node of eight: NVLink; the two replicas, eight ranks apart, sit in two nodes.
  CHECK_THAT(costs.gather_time,
             WithinRel(ppsim::collective_time(machine, Collective::kAllGather, 2 * parameters, 8, false, 8), 1e-12));
  CHECK_THAT(costs.gather_time, WithinRel(7.0 / 8 * 2 * parameters / ppsim::test::kNvlink, 1e-12));
  CHECK_THAT(costs.reduce_time,
             WithinRel(ppsim::collective_time(machine, Collective::kReduceScatter, 4 * parameters, 8, false, 8) +
                           ppsim::collective_time(machine, Collective::kAllReduce, 4 * parameters / 8, 2, true, 1),
                       1e-12));
  // The unsharded buffers do not depend on the sharding.
  const ppsim::ShardingCosts plain = ppsim::fully_sharded_stage({ppsim::test::gpt(4), sharded(16, 1), machine}, parameters);
  CHECK(costs.parameter_bytes == plain.parameter_bytes);
  CHECK(costs.gradient_bytes == plain.gradient_bytes);
  // One replica is FSDP over all 16 ranks, across the two nodes.
  CHECK_THAT(plain.gather_time,
             WithinRel(ppsim::collective_time(machine, Collective::kAllGather, 2 * parameters, 16, true, 8), 1e-12));
}

TEST_CASE("HSDP keeps the state of d / R shard ranks: the memory of FSDP over d / R") {
  const ppsim::HardwareProfile machine = ppsim::test::ideal_machine();
  const ppsim::TransformerCostModel hybrid({ppsim::test::gpt(8), sharded(16, 4), machine}, {0, 1});
  const ppsim::TransformerCostModel fsdp({ppsim::test::gpt(8), sharded(4, 1), machine}, {0, 1});
  for (std::size_t d = 0; d < 2; ++d) {
    CHECK(hybrid.static_memory()[d].parameters == fsdp.static_memory()[d].parameters);
    CHECK(hybrid.static_memory()[d].gradients == fsdp.static_memory()[d].gradients);
    CHECK(hybrid.static_memory()[d].optimizer == fsdp.static_memory()[d].optimizer);
  }
}
