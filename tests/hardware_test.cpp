// SPDX-License-Identifier: Apache-2.0
// Hardware profiles: the efficiency-table interpolation, the built-in presets against the vendors'
// datasheets, the time functions, and the configs/hardware/*.json files against the C++ presets
// (so the two cannot drift apart).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/hardware/efficiency.hpp"
#include "models/hardware/profile.hpp"
#include "models/json/hardware_profile_json.hpp"
#include "models/transformer/architecture.hpp"
#include "models/transformer/pass_costs.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;
using ppsim::EfficiencyPoint;
using ppsim::EfficiencyTable;
using ppsim::HardwareProfile;

namespace {

EfficiencyTable make_table(std::vector<EfficiencyPoint> points) {
  auto table = EfficiencyTable::create(std::move(points));
  INFO(table.error);
  REQUIRE(table.ok);
  return table.value;
}

const HardwareProfile& preset(const char* name) {
  const HardwareProfile* p = ppsim::find_hardware_preset(name);
  INFO(name);
  REQUIRE(p != nullptr);
  return *p;
}

// Sizes from lo to hi, evenly spaced in log(size), with the floating-point neighbours of every
// table point added, since a kink or a rounding slip would show right next to a point.
std::vector<double> sweep(const EfficiencyTable& table, double lo, double hi, int steps) {
  std::vector<double> sizes;
  for (int i = 0; i <= steps; ++i) {
    sizes.push_back(lo * std::pow(hi / lo, static_cast<double>(i) / steps));
  }
  for (const EfficiencyPoint& p : table.points()) {
    sizes.push_back(std::nextafter(p.size, 0.0));
    sizes.push_back(p.size);
    sizes.push_back(std::nextafter(p.size, std::numeric_limits<double>::infinity()));
  }
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

}  // namespace

TEST_CASE("An efficiency table is exact at its points") {
  const EfficiencyTable table = make_table({{1e8, 0.2}, {1e9, 0.35}, {1e10, 0.55}, {1e12, 0.75}});
  for (const EfficiencyPoint& p : table.points()) {
    INFO(p.size);
    CHECK(table.at(p.size) == p.fraction);
  }
  // A single point is a constant.
  const EfficiencyTable one = make_table({{4096, 0.5}});
  CHECK(one.at(1.0) == 0.5);
  CHECK(one.at(4096) == 0.5);
  CHECK(one.at(1e12) == 0.5);
}

TEST_CASE("An efficiency table interpolates linearly in log(size)") {
  const EfficiencyTable table = make_table({{1e6, 0.3}, {1e8, 0.7}});
  // 1e7 is halfway between 1e6 and 1e8 on a log axis, so the fraction is halfway too.
  CHECK_THAT(table.at(1e7), WithinRel(0.5, 1e-12));
  // A quarter of the way in log: 10^6.5.
  CHECK_THAT(table.at(std::pow(10.0, 6.5)), WithinRel(0.4, 1e-12));
}

TEST_CASE("An efficiency table is monotone between its points over a dense sweep") {
  SECTION("rising table (the usual shape)") {
    const EfficiencyTable table =
        make_table({{4096, 0.1}, {65536, 0.3}, {1048576, 0.6}, {16777216, 0.85}, {67108864, 0.9}});
    const auto sizes = sweep(table, 1.0, 1e9, 20000);
    for (std::size_t i = 1; i < sizes.size(); ++i) {
      INFO("sizes " << sizes[i - 1] << " -> " << sizes[i]);
      REQUIRE(table.at(sizes[i]) >= table.at(sizes[i - 1]));
    }
  }
  SECTION("falling table") {
    const EfficiencyTable table = make_table({{1e3, 0.9}, {1e5, 0.7}, {1e6, 0.2}});
    const auto sizes = sweep(table, 1.0, 1e8, 20000);
    for (std::size_t i = 1; i < sizes.size(); ++i) {
      INFO("sizes " << sizes[i - 1] << " -> " << sizes[i]);
      REQUIRE(table.at(sizes[i]) <= table.at(sizes[i - 1]));
    }
  }
  SECTION("every preset table") {
    for (const HardwareProfile& p : ppsim::hardware_presets()) {
      for (const EfficiencyTable* table : {&p.gemm, &p.memory, &p.intra_link, &p.inter_link}) {
        const auto sizes = sweep(*table, 1.0, 1e15, 5000);
        for (std::size_t i = 1; i < sizes.size(); ++i) {
          INFO(p.name << " sizes " << sizes[i - 1] << " -> " << sizes[i]);
          REQUIRE(table->at(sizes[i]) >= table->at(sizes[i - 1]));
        }
      }
    }
  }
}

TEST_CASE("An efficiency table clamps outside its range") {
  const EfficiencyTable table = make_table({{1e6, 0.3}, {1e9, 0.85}});
  CHECK(table.at(1e5) == 0.3);
  CHECK(table.at(1.0) == 0.3);
  CHECK(table.at(0.0) == 0.3);
  CHECK(table.at(-5.0) == 0.3);
  CHECK(table.at(std::numeric_limits<double>::quiet_NaN()) == 0.3);
  CHECK(table.at(1e10) == 0.85);
  CHECK(table.at(std::numeric_limits<double>::infinity()) == 0.85);
}

TEST_CASE("An empty efficiency table is the ideal machine") {
  const EfficiencyTable table;
  CHECK(table.empty());
  CHECK(table.at(1.0) == 1.0);
  CHECK(table.at(1e12) == 1.0);
}

TEST_CASE("Bad efficiency tables are refused with a message naming the bad point") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    std::vector<EfficiencyPoint> points;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{}, "at least one point"},
      {{{0.0, 0.5}}, "point 0 (size 0, fraction 0.5): size must be finite and > 0"},
      {{{1e6, 0.3}, {-1.0, 0.5}}, "point 1 (size -1, fraction 0.5): size must be"},
      {{{nan, 0.5}}, "point 0 (size nan, fraction 0.5): size must be finite"},
      {{{1e6, 0.3}, {1e6, 0.5}}, "point 1 (size 1e+06, fraction 0.5): sizes must be strictly"},
      {{{1e6, 0.3}, {1e9, 0.8}, {1e8, 0.9}}, "point 2 (size 1e+08, fraction 0.9): sizes must be"},
      {{{1e6, 0.3}, {1e9, 0.0}}, "point 1 (size 1e+09, fraction 0): fraction must be in (0, 1]"},
      {{{1e6, 1.2}}, "point 0 (size 1e+06, fraction 1.2): fraction must be in (0, 1]"},
      {{{1e6, -0.1}}, "point 0 (size 1e+06, fraction -0.1): fraction must be"},
      {{{1e6, nan}}, "point 0 (size 1e+06, fraction nan): fraction must be"},
  };
  for (const Case& c : cases) {
    const auto table = EfficiencyTable::create(c.points);
    INFO(c.message);
    CHECK_FALSE(table.ok);
    CHECK_THAT(table.error, Contains(c.message));
  }
  // A fraction of exactly 1 (the peak) is allowed.
  CHECK(EfficiencyTable::create({{1.0, 1.0}}).ok);
}

TEST_CASE("The presets carry the datasheet numbers") {
  SECTION("A100-SXM4-80GB") {
    const HardwareProfile& p = preset("A100-SXM4-80GB");
    CHECK(p.peak_flops("bf16") == 312e12);  // datasheet: 312 TFLOPS dense, 624 with sparsity
    CHECK(p.peak_flops("fp16") == 312e12);
    CHECK(p.peak_flops("tf32") == 156e12);
    CHECK(p.peak_flops("fp32") == 19.5e12);
    CHECK_FALSE(p.peak_flops("fp8").has_value());  // Ampere has no FP8 tensor cores
    CHECK(p.memory_bandwidth == 2039e9);           // 2,039 GB/s
    CHECK(p.memory_capacity == 80LL * 1024 * 1024 * 1024);
    CHECK(p.intra_node_bandwidth == 600e9 / 2);  // NVLink 600 GB/s counts both directions
    CHECK(p.inter_node_bandwidth == 200e9 / 8);  // one 200 Gb/s HDR port per GPU, in bytes/s
  }
  SECTION("H100-SXM5-80GB") {
    const HardwareProfile& p = preset("H100-SXM5-80GB");
    CHECK(p.peak_flops("bf16") == 989.4e12);  // 1,979 with sparsity; whitepaper 989.4 dense
    CHECK(p.peak_flops("fp16") == 989.4e12);
    CHECK(p.peak_flops("fp8") == 1978.9e12);
    CHECK(p.peak_flops("tf32") == 494.7e12);
    CHECK(p.peak_flops("fp32") == 66.9e12);
    CHECK(p.memory_bandwidth == 3.35e12);  // 3.35 TB/s
    CHECK(p.memory_capacity == 80LL * 1024 * 1024 * 1024);
    CHECK(p.intra_node_bandwidth == 900e9 / 2);  // NVLink 900 GB/s counts both directions
    CHECK(p.inter_node_bandwidth == 400e9 / 8);  // one 400 Gb/s NDR port per GPU, in bytes/s
  }
  SECTION("H200-SXM-141GB") {
    const HardwareProfile& p = preset("H200-SXM-141GB");
    CHECK(p.peak_flops("bf16") == 989.4e12);  // same GH100 tensor peak as H100 SXM
    CHECK(p.peak_flops("fp8") == 1978.9e12);
    CHECK(p.memory_bandwidth == 4.8e12);  // 4.8 TB/s
    CHECK(p.memory_capacity == 141LL * 1024 * 1024 * 1024);
    CHECK(p.intra_node_bandwidth == 900e9 / 2);
    CHECK(p.inter_node_bandwidth == 400e9 / 8);
  }
  SECTION("B200-SXM-180GB") {
    const HardwareProfile& p = preset("B200-SXM-180GB");
    CHECK(p.peak_flops("bf16") == 2250e12);  // DGX B200: 36 PFLOPS sparse over 8 GPUs, dense half
    CHECK(p.peak_flops("fp8") == 4500e12);   // 72 PFLOPS sparse over 8
    CHECK(p.memory_bandwidth == 8e12);       // 64 TB/s over 8
    CHECK(p.memory_capacity == 180LL * 1024 * 1024 * 1024);
    CHECK(p.intra_node_bandwidth == 1800e9 / 2);
    CHECK(p.gemm_model.sm_count == 148);
    CHECK(p.nvls_bus_bandwidth == 838e9);
  }
  SECTION("MI300X-OAM-192GB") {
    const HardwareProfile& p = preset("MI300X-OAM-192GB");
    CHECK(p.peak_flops("bf16") == 1307.4e12);
    CHECK(p.peak_flops("fp8") == 2614.9e12);
    CHECK(p.memory_bandwidth == 5.3e12);
    CHECK(p.memory_capacity == 192LL * 1024 * 1024 * 1024);
    CHECK(p.intra_node_bandwidth == 7 * 64e9);  // seven links to the other GPUs together
    CHECK(p.nvls_bus_bandwidth == 0);           // no switch, no in-fabric reduction
  }
  for (const HardwareProfile& p : ppsim::hardware_presets()) {
    INFO(p.name);
    CHECK(ppsim::validate_hardware_profile(p).empty());
    CHECK(p.devices_per_node == 8);
    // The efficiencies come from published microbenchmarks, each cited; the latencies are assumed.
    CHECK_FALSE(p.efficiency_assumed);
    CHECK(p.efficiency_published);
    CHECK(std::string(p.efficiency_marker()) == "published");
    CHECK(p.sources.size() >= 4);
    CHECK(p.latency_assumed);
    CHECK_THAT(p.source, Contains("datasheet"));
    CHECK_THAT(p.source, Contains("Latencies are assumed"));
    CHECK_FALSE(p.gemm_model.empty());
    // No per-length fused-attention figure is published for B200 or MI300X: no table, said in a source.
    const bool attention_published = p.name != "B200-SXM-180GB" && p.name != "MI300X-OAM-192GB";
    CHECK(p.attention_forward.empty() == !attention_published);
    CHECK(p.attention_backward.empty() == !attention_published);
    CHECK(std::any_of(p.sources.begin(), p.sources.end(), [](const std::string& s) { return s.starts_with("attention"); }));
    CHECK_FALSE(p.gemm.empty());
    CHECK_FALSE(p.memory.empty());
    CHECK_FALSE(p.intra_link.empty());
    CHECK_FALSE(p.inter_link.empty());
  }
  CHECK(ppsim::hardware_presets().size() == 5);
  CHECK(ppsim::find_hardware_preset("H100") == nullptr);  // exact names only
}

TEST_CASE("GEMM time is FLOPs over peak times the table's efficiency") {
  // The FLOP-keyed tables (the datasheet-only assumption the presets keep for GEMMs of unknown
  // shape) time a GEMM given by its FLOPs alone.
  const HardwareProfile& h100 = preset("H100-SXM5-80GB");
  // 1e12 FLOPs is the table's top point: 0.75 of 989.4 TFLOP/s, about 1.35 ms.
  REQUIRE(h100.gemm.at(1e12) == 0.75);
  CHECK_THAT(h100.gemm_time(1e12), WithinRel(1e12 / (989.4e12 * 0.75), 1e-15));
  CHECK_THAT(h100.gemm_time(1e12), WithinRel(1.3476e-3, 1e-4));
  // A small GEMM runs at a lower fraction: 1e9 FLOPs take more than 1/1000 of 1e12's time.
  CHECK(h100.gemm_time(1e9) > h100.gemm_time(1e12) / 1000);
  CHECK_THAT(h100.gemm_time(1e9), WithinRel(1e9 / (989.4e12 * 0.35), 1e-15));
  // FP8 doubles the peak, with its own table: 1e12 FLOPs lies between its points 2e11 (0.59) and
  // 2e12 (0.65), log-linearly: 0.59 + 0.06 * log(5) / log(10).
  const double fp8_fraction = 0.59 + 0.06 * std::log(5.0) / std::log(10.0);
  CHECK_THAT(h100.gemm_fp8.at(1e12), WithinRel(fp8_fraction, 1e-12));
  CHECK_THAT(h100.gemm_time(1e12, "fp8"), WithinRel(1e12 / (1978.9e12 * fp8_fraction), 1e-12));
  // A profile without an fp8 table times FP8 GEMMs with the bf16 table at the fp8 peak.
  HardwareProfile no_fp8_table = h100;
  no_fp8_table.gemm_fp8 = {};
  CHECK_THAT(no_fp8_table.gemm_time(1e12, "fp8"), WithinRel(1e12 / (1978.9e12 * 0.75), 1e-12));
  CHECK(h100.gemm_time(0.0) == 0.0);
  // The same GEMM on A100 is 989.4 / 312 times slower (same table).
  const HardwareProfile& a100 = preset("A100-SXM4-80GB");
  CHECK_THAT(a100.gemm_time(1e12) / h100.gemm_time(1e12), WithinRel(989.4 / 312, 1e-12));
  CHECK_THROWS_WITH(a100.gemm_time(1e12, "fp8"), Contains("A100-SXM4-80GB has no fp8 peak"));
}

TEST_CASE("Memory-bound time is bytes over HBM bandwidth times the table's efficiency") {
  const HardwareProfile& h100 = preset("H100-SXM5-80GB");
  // The table's top: Liger-Kernel's LayerNorm forward on H100, 4096 x 16384 fp32 read and written
  // (2 * 4096 * 16384 * 4 bytes) in 0.1848 ms; above it the table stays at that fraction.
  const double top_bytes = 2.0 * 4096 * 16384 * 4;
  const double top_fraction = top_bytes / 0.1848e-3 / 3.35e12;
  CHECK_THAT(h100.memory.at(top_bytes), WithinRel(top_fraction, 1e-15));
  CHECK_THAT(h100.memory_time(1e9), WithinRel(1e9 / (3.35e12 * top_fraction), 1e-15));
  // Below the published sizes the assumed ramp: 0.3 at 1 MB.
  CHECK_THAT(h100.memory_time(1e6), WithinRel(1e6 / (3.35e12 * 0.3), 1e-15));
  CHECK(h100.memory_time(0.0) == 0.0);
  // H200's faster HBM shortens the same kernel by 4.8 / 3.35 (H100's fractions carry over).
  const HardwareProfile& h200 = preset("H200-SXM-141GB");
  CHECK_THAT(h100.memory_time(1e9) / h200.memory_time(1e9), WithinRel(4.8 / 3.35, 1e-12));
}

TEST_CASE("Message time is latency plus bytes over link bandwidth times NCCL's published efficiency") {
  const HardwareProfile& h100 = preset("H100-SXM5-80GB");
  const double big = 67108864;  // 64 MiB, where the link tables reach NCCL's large-message figure
  const double intra = h100.message_time(big, false);
  const double inter = h100.message_time(big, true);
  // NVLink 4: 370 of 450 GB/s (nccl-tests issue 212); NDR: 47 of 50 GB/s per NIC (issue 290).
  CHECK_THAT(intra, WithinRel(3e-6 + big / (450e9 * (370.0 / 450)), 1e-15));
  CHECK_THAT(inter, WithinRel(8e-6 + big / (50e9 * (47.0 / 50)), 1e-15));
  // Between nodes a large message takes 370 / 47, about 7.9x, longer.
  CHECK(inter / intra > 7.5);
  CHECK(inter / intra < 8.0);
  // A small message is mostly latency: 4 KiB over NVLink takes latency + 4096 / (0.1 * 450 GB/s).
  CHECK_THAT(h100.message_time(4096, false), WithinRel(3e-6 + 4096 / (450e9 * 0.1), 1e-15));
  CHECK(h100.message_time(4096, true) > h100.message_time(4096, false));
  // An empty message is not sent.
  CHECK(h100.message_time(0.0, false) == 0.0);
  CHECK(h100.message_time(0.0, true) == 0.0);
}

TEST_CASE("validate_hardware_profile names what is wrong") {
  HardwareProfile p = preset("H100-SXM5-80GB");
  REQUIRE(ppsim::validate_hardware_profile(p).empty());
  SECTION("no name") {
    p.name.clear();
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("no name"));
  }
  SECTION("no bf16 peak") {
    p.dense_peak_flops.erase("bf16");
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("no bf16 peak"));
  }
  SECTION("negative peak") {
    p.dense_peak_flops["fp8"] = -1;
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("fp8 peak must be finite and > 0"));
  }
  SECTION("zero bandwidth") {
    p.inter_node_bandwidth = 0;
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("inter_node_bandwidth"));
  }
  SECTION("no devices") {
    p.devices_per_node = 0;
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("devices_per_node"));
  }
  SECTION("negative latency") {
    p.intra_node_latency = -1e-6;
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("intra_node_latency"));
  }
  SECTION("a GEMM model built in code with negative SMs, a half tile or a fraction above 1") {
    p.gemm_model.sm_count = -5;
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("gemm_model.sm_count"));
    p.gemm_model.sm_count = 132;
    p.gemm_model.tile_rows = 0.5;
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("gemm_model.tile"));
    p.gemm_model.tile_rows = 128;
    p.gemm_model.peak_fraction["bf16"] = 1.5;
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("gemm_model.peak_fraction.bf16"));
  }
  SECTION("published efficiencies without sources, or both assumed and published") {
    p.sources.clear();
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("published efficiencies need their sources"));
    p.sources = {"x"};
    p.efficiency_assumed = true;
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("both assumed and published"));
  }
  SECTION("one fused-attention table without the other") {
    p.attention_backward = {};
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("come as a pair"));
  }
  SECTION("a sustained clock of 0") {
    p.sustained_clock = 0;
    CHECK_THAT(ppsim::validate_hardware_profile(p), Contains("sustained_clock"));
  }
}

TEST_CASE("A GEMM model with extreme but accepted figures gives finite layer times") {
  HardwareProfile p = preset("H100-SXM5-80GB");
  p.gemm_model.sm_count = 1;
  p.gemm_model.tile_rows = 4096;
  p.gemm_model.tile_cols = 4096;
  p.gemm_model.min_split_k = 1e9;
  p.gemm_model.kernel_overhead = 1;
  p.gemm_model.peak_fraction = {{"bf16", 1e-3}, {"fp8", 1e-3}};
  p.sustained_clock = 1e-3;
  REQUIRE(ppsim::validate_hardware_profile(p).empty());
  ppsim::TrainingLayout l;
  l.tensor_parallel = 8;
  l.sequence_parallel = true;
  l.tp_comm_overlap = true;
  const ppsim::Architecture arch = *ppsim::find_architecture_preset("llama3.1-8b");
  const ppsim::PassTimes times = ppsim::layer_pass_times(arch, l, p);
  for (const double t : {times.forward.total(), times.input_grad.total(), times.weight_grad.total()}) {
    CHECK(std::isfinite(t));
    CHECK(t > 0);
  }
}

namespace {

using nlohmann::json;

// The library's reader, so the test checks the files as ppsim reads them.
HardwareProfile profile_from_json(const json& j) { return ppsim::hardware_profile_from_json(j, "test").profile; }

void check_tables_equal(const EfficiencyTable& a, const EfficiencyTable& b) {
  REQUIRE(a.points().size() == b.points().size());
  for (std::size_t i = 0; i < a.points().size(); ++i) {
    INFO("point " << i);
    CHECK(a.points()[i].size == b.points()[i].size);
    CHECK(a.points()[i].fraction == b.points()[i].fraction);
  }
}

}  // namespace

TEST_CASE("configs/hardware/*.json equal the C++ presets field by field") {
  struct Case {
    const char* file;
    const char* name;
  };
  const Case c = GENERATE(values<Case>({
      {"a100-sxm4-80gb.json", "A100-SXM4-80GB"},
      {"h100-sxm5-80gb.json", "H100-SXM5-80GB"},
      {"h200-sxm-141gb.json", "H200-SXM-141GB"},
  }));
  const std::string path = std::string(PPSIM_SOURCE_DIR) + "/configs/hardware/" + c.file;
  INFO(path);
  std::ifstream in(path);
  REQUIRE(in.good());
  const json j = json::parse(in);
  // The markers a reader of the file relies on.
  CHECK(j.at("efficiency").get<std::string>() == "published");
  CHECK(j.at("sources").size() >= 4);
  CHECK(j.at("latency").get<std::string>() == "assumed");
  CHECK(j.contains("units"));

  const HardwareProfile loaded = profile_from_json(j);
  const HardwareProfile& expected = preset(c.name);
  CHECK(loaded.name == expected.name);
  CHECK(loaded.source == expected.source);
  CHECK(loaded.dense_peak_flops == expected.dense_peak_flops);
  CHECK(loaded.memory_bandwidth == expected.memory_bandwidth);
  CHECK(loaded.memory_capacity == expected.memory_capacity);
  CHECK(loaded.devices_per_node == expected.devices_per_node);
  CHECK(loaded.intra_node_bandwidth == expected.intra_node_bandwidth);
  CHECK(loaded.intra_node_latency == expected.intra_node_latency);
  CHECK(loaded.inter_node_bandwidth == expected.inter_node_bandwidth);
  CHECK(loaded.inter_node_latency == expected.inter_node_latency);
  check_tables_equal(loaded.gemm, expected.gemm);
  check_tables_equal(loaded.gemm_fp8, expected.gemm_fp8);
  check_tables_equal(loaded.memory, expected.memory);
  check_tables_equal(loaded.attention_forward, expected.attention_forward);
  check_tables_equal(loaded.attention_backward, expected.attention_backward);
  CHECK(loaded.gemm_model == expected.gemm_model);
  CHECK(loaded.sources == expected.sources);
  check_tables_equal(loaded.intra_link, expected.intra_link);
  check_tables_equal(loaded.inter_link, expected.inter_link);
  CHECK(loaded.efficiency_assumed == expected.efficiency_assumed);
  CHECK(loaded.latency_assumed == expected.latency_assumed);
  // And as a whole, so that a field added to HardwareProfile but not to the files shows up here.
  CHECK(loaded == expected);
}

TEST_CASE("A collective table gives nccl-tests' bus bandwidth by size and times a tensor from it") {
  // nccl-tests (doc/PERFORMANCE.md): bus bandwidth = algorithm bandwidth * 2(n-1)/n for all-reduce,
  // (n-1)/n for the others.
  CHECK(ppsim::bus_factor(ppsim::Collective::kAllReduce, 8) == 1.75);
  CHECK(ppsim::bus_factor(ppsim::Collective::kReduceScatter, 4) == 0.75);
  CHECK(ppsim::bus_factor(ppsim::Collective::kAllToAll, 1) == 0);
  const auto table = ppsim::CollectiveTable::create(ppsim::Collective::kAllReduce, 8, {{1e6, 1e11}, {1e8, 3e11}});
  REQUIRE(table.ok);
  CHECK(table.value.bus_bandwidth(1e6) == 1e11);
  CHECK(table.value.bus_bandwidth(1e7) == 2e11);  // halfway in log(size)
  CHECK(table.value.bus_bandwidth(1e3) == 1e11);  // clamped below
  CHECK(table.value.bus_bandwidth(1e12) == 3e11);  // and above
  CHECK_THAT(table.value.time(1e7), WithinRel(1e7 * 1.75 / 2e11, 1e-15));
  CHECK(table.value.time(0) == 0);
  CHECK_FALSE(ppsim::CollectiveTable::create(ppsim::Collective::kAllGather, 1, {{1e6, 1e11}}).ok);
  CHECK_FALSE(ppsim::CollectiveTable::create(ppsim::Collective::kAllGather, 2, {{1e6, 1e11}, {1e6, 2e11}}).ok);
  CHECK(ppsim::parse_collective("reduce_scatter") == ppsim::Collective::kReduceScatter);
  CHECK_FALSE(ppsim::parse_collective("reduce-scatter"));
}

TEST_CASE("A collective smaller than the smallest measured size takes that size's time") {
  const auto table = ppsim::CollectiveTable::create(ppsim::Collective::kAllGather, 4, {{4096, 1e9}, {1e6, 1e11}});
  REQUIRE(table.ok);
  CHECK(table.value.time(100) == table.value.time(4096));
  CHECK_THAT(table.value.time(4096), WithinRel(4096 * 0.75 / 1e9, 1e-15));
  CHECK_THAT(table.value.time(1e6), WithinRel(1e6 * 0.75 / 1e11, 1e-15));  // above it, the table as it is
}

TEST_CASE("A profile's provenance counts its published sources, or says it is the datasheet's, or when ppsim-calibrate measured it") {
  ppsim::HardwareProfile profile = preset("H100-SXM5-80GB");
  CHECK(profile.provenance() == "published microbenchmarks (" + std::to_string(profile.sources.size()) + " sources)");
  profile.efficiency_published = false;
  profile.sources.clear();
  profile.efficiency_assumed = true;
  CHECK(profile.provenance() == "datasheet only (assumed)");
  profile.efficiency_assumed = false;
  profile.calibrated_on = "2026-12-03T11:34:30Z";
  CHECK(profile.provenance() == "measured on this machine (ppsim-calibrate, 2026-12-03T11:34:30Z)");
  // Read from a calibrated file: the date comes from its calibration record.
  nlohmann::json json = nlohmann::json::parse(ppsim::hardware_profile_to_json(profile, nullptr).dump());
  json["calibration"] = {{"date", "2026-12-01T08:00:00Z"}};
  CHECK(ppsim::hardware_profile_from_json(json, "measured.json").profile.provenance() ==
        "measured on this machine (ppsim-calibrate, 2026-12-01T08:00:00Z)");
}

TEST_CASE("The link studies' profiles are the H100 preset but for their name, node size and inter-node link") {
  const HardwareProfile& h100 = preset("H100-SXM5-80GB");
  for (const char* file : {"h100-infiniband-400g.json", "h100-ethernet-1g.json"}) {
    INFO(file);
    std::ifstream in(std::string(PPSIM_SOURCE_DIR) + "/configs/studies/links/" + file);
    REQUIRE(in.good());
    HardwareProfile loaded = profile_from_json(json::parse(in));
    CHECK(loaded.devices_per_node == 1);
    loaded.name = h100.name;
    loaded.source = h100.source;
    loaded.devices_per_node = h100.devices_per_node;
    loaded.inter_node_bandwidth = h100.inter_node_bandwidth;
    loaded.inter_node_latency = h100.inter_node_latency;
    CHECK(loaded == h100);
  }
}
