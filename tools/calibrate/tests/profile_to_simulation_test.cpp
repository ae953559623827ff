// SPDX-License-Identifier: Apache-2.0
// The whole path: a profile the CPU backend measured drives the transformer cost model and a
// pipeline simulation, and the cost model's times move exactly as the profile's tables say.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "models/json/hardware_profile_json.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/transformer_cost_model.hpp"
#include "schedules/registry.hpp"
#include "sim/engine.hpp"
#include "tools/calibrate/cli.hpp"
#include "tools/calibrate/cpu_backend.hpp"

using Catch::Matchers::WithinRel;
using ppsim::EfficiencyPoint;
using ppsim::EfficiencyTable;
using ppsim::HardwareProfile;

namespace {

// The CPU backend's --quick profile, measured once and read back as ppsim reads --hardware FILE.
const HardwareProfile& measured_cpu_profile() {
  static const HardwareProfile profile = [] {
    std::ostringstream out, err;
    const int status = ppsim::calibrate::run_calibrate_cli({"--backend", "cpu", "--quick"},
                                                           {ppsim::calibrate::cpu_backend_entry()}, out, err);
    INFO(err.str());
    REQUIRE(status == 0);
    return ppsim::hardware_profile_from_json(nlohmann::json::parse(out.str()), "calibrated").profile;
  }();
  return profile;
}

// A small Llama-style model, so the CPU's measured sizes cover the layer's kernels.
ppsim::Architecture small_model() {
  ppsim::Architecture arch = *ppsim::find_architecture_preset("llama3.1-8b");
  arch.name = "small-llama";
  arch.layers = 4;
  arch.hidden = 256;
  arch.heads = 4;
  arch.kv_heads = 2;
  arch.ffn_hidden = 512;
  arch.vocab = 1024;
  return arch;
}

ppsim::TrainingLayout small_layout() {
  ppsim::TrainingLayout l;
  l.seq = 128;
  l.micro_batch = 1;
  l.pipeline = 2;
  l.global_batch = 4;
  l.flash_attention = false;
  return l;
}

// Every fraction of `table` times `factor`.
EfficiencyTable scaled(const EfficiencyTable& table, double factor) {
  std::vector<EfficiencyPoint> points(table.points().begin(), table.points().end());
  for (EfficiencyPoint& p : points) p.fraction *= factor;
  auto result = EfficiencyTable::create(points);
  REQUIRE(result.ok);
  return result.value;
}

double simulate_1f1b(const HardwareProfile& profile) {
  const ppsim::TrainingLayout layout = small_layout();
  const ppsim::Program program = ppsim::find_schedule("1f1b")->build({layout.pipeline, 4, 1});
  const ppsim::TransformerCostModel model({small_model(), layout, profile}, program.stage_device);
  ppsim::Engine engine;
  const ppsim::SimulationOutcome outcome = engine.run(program, model);
  REQUIRE(outcome.result.has_value());
  return outcome.result->makespan;
}

}  // namespace

TEST_CASE("A measured CPU profile drives the transformer cost model and a 1F1B simulation") {
  const HardwareProfile& profile = measured_cpu_profile();
  const ppsim::TrainingLayout layout = small_layout();
  const ppsim::Program program = ppsim::find_schedule("1f1b")->build({layout.pipeline, 4, 1});
  const ppsim::TransformerCostModel model({small_model(), layout, profile}, program.stage_device);
  for (int stage = 0; stage < program.num_stages(); ++stage) {
    INFO("stage " << stage);
    for (const ppsim::Op op : {ppsim::Op::kForward, ppsim::Op::kBackward}) {
      const double t = model.compute_time(op, stage);
      CHECK(std::isfinite(t));
      CHECK(t > 0);
    }
  }
  const double makespan = simulate_1f1b(profile);
  CHECK(std::isfinite(makespan));
  CHECK(makespan > 0);
}

TEST_CASE("The cost model's layer times follow the measured tables: halve a table, double its kernels' time") {
  const HardwareProfile& measured = measured_cpu_profile();
  const ppsim::Architecture arch = small_model();
  const ppsim::TrainingLayout layout = small_layout();
  const ppsim::PassTimes base = ppsim::layer_pass_times(arch, layout, measured);
  REQUIRE(base.forward.gemm > 0);
  REQUIRE(base.forward.memory > 0);

  HardwareProfile slow_gemm = measured;
  slow_gemm.gemm = scaled(measured.gemm, 0.5);
  const ppsim::PassTimes gemm_half = ppsim::layer_pass_times(arch, layout, slow_gemm);
  CHECK_THAT(gemm_half.forward.gemm, WithinRel(2 * base.forward.gemm, 1e-12));
  CHECK_THAT(gemm_half.forward.attention, WithinRel(2 * base.forward.attention, 1e-12));
  CHECK_THAT(gemm_half.weight_grad.gemm, WithinRel(2 * base.weight_grad.gemm, 1e-12));
  CHECK(gemm_half.forward.memory == base.forward.memory);

  HardwareProfile slow_memory = measured;
  slow_memory.memory = scaled(measured.memory, 0.5);
  const ppsim::PassTimes memory_half = ppsim::layer_pass_times(arch, layout, slow_memory);
  CHECK_THAT(memory_half.forward.memory, WithinRel(2 * base.forward.memory, 1e-12));
  CHECK_THAT(memory_half.input_grad.memory, WithinRel(2 * base.input_grad.memory, 1e-12));
  CHECK(memory_half.forward.gemm == base.forward.gemm);

  // And the simulated pipeline is slower with the slower GEMMs.
  CHECK(simulate_1f1b(slow_gemm) > simulate_1f1b(measured));
}

TEST_CASE("The CPU stand-in's measured all-reduce times a tensor-parallel layer's collectives") {
  const HardwareProfile& profile = measured_cpu_profile();
  const ppsim::CollectiveTable* all_reduce = profile.collective_table(ppsim::Collective::kAllReduce, 2);
  if (profile.devices_per_node < 2) {
    CHECK(all_reduce == nullptr);  // one hardware thread: no group fits, the tables are dropped
    return;
  }
  REQUIRE(all_reduce != nullptr);
  ppsim::TrainingLayout layout = small_layout();
  layout.tensor_parallel = 2;
  // Two all-reduces of the T x h bf16 activations in F, each as the table says.
  const double bytes = 2.0 * static_cast<double>(layout.seq * layout.micro_batch * small_model().hidden);
  const ppsim::PassTimes times = ppsim::layer_pass_times(small_model(), layout, profile);
  CHECK_THAT(times.forward.collective, WithinRel(2 * all_reduce->time(bytes), 1e-12));
}
