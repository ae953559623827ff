// SPDX-License-Identifier: Apache-2.0
// From measurements to a profile: tables sorted, merged and kept in (0, 1]; links fitted to
// latency + bytes / bandwidth; peaks from datasheets for known GPUs and from the best rate
// otherwise; a synthetic machine with known curves is recovered.
#include "tools/calibrate/profile_builder.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "models/json/hardware_profile_json.hpp"
#include "tools/calibrate/plan.hpp"
#include "tools/calibrate/runner.hpp"
#include "tools/calibrate/tests/fake_backend.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;
using ppsim::EfficiencyPoint;
using ppsim::HardwareProfile;
using ppsim::calibrate::testing::FakeBackend;
using ppsim::calibrate::testing::FakeMachine;

namespace {

ppsim::calibrate::BuiltProfile calibrate_fake(const FakeMachine& machine, FakeBackend** keep = nullptr) {
  static thread_local std::unique_ptr<FakeBackend> backend;
  backend = std::make_unique<FakeBackend>(machine);
  if (keep != nullptr) *keep = backend.get();
  const auto plan =
      ppsim::calibrate::make_plan(std::nullopt, {2048, 1, 1}, {ppsim::calibrate::Precision::kBf16},
                                  ppsim::calibrate::plan_scale(machine.backend, false), backend->element_bytes());
  const auto measured = ppsim::calibrate::run_plan(*backend, plan, nullptr);
  return ppsim::calibrate::build_profile(measured,
                                         {"ppsim-calibrate test", "ppsim-calibrate --test", "2025-01-01T00:00:00Z"});
}

}  // namespace

TEST_CASE("Efficiency points are sorted, equal sizes merge at their median, fractions stay above 0 and at most 1") {
  int clamped = -1;
  const auto points = ppsim::calibrate::efficiency_points(
      {{1e9, 0.5}, {1e6, 0.2}, {1e9, 0.7}, {1e9, 0.6}, {1e12, 1.3}, {1e7, 0.0}, {1e8, 0.123456789}}, &clamped);
  REQUIRE(points.size() == 4);  // 1e7's zero fraction is no measurement
  CHECK(points[0] == EfficiencyPoint{1e6, 0.2});
  CHECK(points[1] == EfficiencyPoint{1e8, 0.1235});  // 4 significant digits
  CHECK(points[2] == EfficiencyPoint{1e9, 0.6});     // median of 0.5, 0.7, 0.6
  CHECK(points[3] == EfficiencyPoint{1e12, 1.0});    // above the peak: clamped, and counted
  CHECK(clamped == 1);
  CHECK(ppsim::EfficiencyTable::create(points).ok);
}

TEST_CASE("Significant-digit rounding keeps small positive values positive") {
  CHECK(ppsim::calibrate::round_significant(0.123456, 4) == 0.1235);
  CHECK(ppsim::calibrate::round_significant(123456.0, 2) == 120000.0);
  CHECK(ppsim::calibrate::round_significant(2.5e-9, 1) > 0);
  CHECK(ppsim::calibrate::round_significant(0.0, 4) == 0.0);
}

TEST_CASE("A link that is exactly latency + bytes / bandwidth is fitted back exactly") {
  const double latency = GENERATE(0.0, 2e-6, 25e-6);
  const double bandwidth = GENERATE(1e10, 4.5e11);
  std::vector<std::pair<double, double>> points;
  for (double bytes = 4096; bytes <= 1 << 30; bytes *= 4) points.emplace_back(bytes, latency + bytes / bandwidth);
  const auto model = ppsim::calibrate::fit_link(points);
  INFO("latency " << latency << " bandwidth " << bandwidth);
  CHECK(model.latency >= 0);
  CHECK(std::abs(model.latency - latency) <= 1e-3 * latency + 1e-15);
  CHECK_THAT(model.bandwidth, WithinRel(bandwidth, 1e-3));
  for (const EfficiencyPoint& p : model.table) CHECK(p.fraction > 0.998);
  CHECK(model.clamped == 0);
}

TEST_CASE("A link fit stays below every measured time and gives each one back") {
  // Measured medians with a slow start, a dip and a slow middle, as real sweeps have.
  const std::vector<std::pair<double, double>> points = {{4096, 9e-6},       {16384, 8e-6},      {65536, 1.2e-5},
                                                         {262144, 4.0e-5},   {1048576, 6.1e-5},  {4194304, 2.3e-4},
                                                         {16777216, 8.9e-4}, {67108864, 3.6e-3}, {268435456, 1.41e-2}};
  const auto model = ppsim::calibrate::fit_link(points);
  REQUIRE(model.latency >= 0);
  REQUIRE(model.latency <= 8e-6);
  CHECK(model.clamped == 0);
  auto table = ppsim::EfficiencyTable::create(model.table);
  REQUIRE(table.ok);
  HardwareProfile p;
  p.inter_node_latency = model.latency;
  p.inter_node_bandwidth = model.bandwidth;
  p.inter_link = table.value;
  int on_the_line = 0;
  for (const auto& [bytes, seconds] : points) {
    INFO(bytes);
    CHECK(model.latency + bytes / model.bandwidth <= seconds * (1 + 1e-3));  // the line is a lower bound
    CHECK_THAT(p.message_time(bytes, true), WithinRel(seconds, 2e-3));       // the table makes up the rest
    on_the_line += p.inter_link.at(bytes) > 0.999;
  }
  CHECK(on_the_line >= 2);  // the line touches the points it runs through
}

TEST_CASE("Known GPU names map to the preset with the same datasheet peaks, others to none") {
  struct Case {
    const char* device;
    const char* preset;  // nullptr: none
  };
  const Case c = GENERATE(values<Case>({{"NVIDIA H200", "H200-SXM-141GB"},
                                        {"NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"},
                                        {"NVIDIA H100 SXM5 80GB", "H100-SXM5-80GB"},
                                        {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
                                        {"NVIDIA H100 PCIe", nullptr},
                                        {"NVIDIA H100 NVL", nullptr},
                                        {"NVIDIA H200 NVL", nullptr},
                                        {"NVIDIA GH200 480GB", nullptr},
                                        {"NVIDIA A100-SXM4-40GB", nullptr},
                                        {"NVIDIA GeForce RTX 4090", nullptr}}));
  INFO(c.device);
  const HardwareProfile* preset = ppsim::calibrate::preset_for_device(c.device);
  if (c.preset == nullptr) {
    CHECK(preset == nullptr);
  } else {
    REQUIRE(preset != nullptr);
    CHECK(preset->name == c.preset);
  }
}

TEST_CASE("A CPU-like machine with known curves is recovered: best rates as peaks, fractions of them") {
  FakeMachine machine;
  FakeBackend* backend = nullptr;
  const auto built = calibrate_fake(machine, &backend);
  const HardwareProfile& p = built.profile;
  REQUIRE(ppsim::validate_hardware_profile(p).empty());
  CHECK_FALSE(p.efficiency_assumed);
  CHECK_FALSE(p.latency_assumed);
  CHECK_THAT(p.source, Contains("best measured GEMM rate"));

  // The peak is the biggest GEMM's rate; every GEMM's fraction is its efficiency relative to that.
  const auto& points = p.gemm.points();
  REQUIRE(points.size() >= 3);
  const double best = backend->gemm_efficiency(points.back().size);
  CHECK_THAT(*p.peak_flops("bf16"), WithinRel(machine.peak_flops * best, 1e-3));
  for (const EfficiencyPoint& point : points) {
    INFO(point.size);
    CHECK_THAT(point.fraction, WithinRel(backend->gemm_efficiency(point.size) / best, 1e-3));
    CHECK(p.gemm.at(point.size) == point.fraction);
  }
  // Memory: the peak is the best copy; the table rises with size.
  CHECK(p.memory_bandwidth <= machine.bandwidth);
  CHECK(p.memory.points().front().fraction < p.memory.points().back().fraction);
  // Links: the fit finds the latency and the bandwidth; the table is flat at 1.
  CHECK_THAT(p.intra_node_latency, WithinRel(machine.link_latency, 1e-3));
  CHECK_THAT(p.intra_node_bandwidth, WithinRel(machine.link_bandwidth, 1e-3));
  for (const EfficiencyPoint& point : p.intra_link.points()) CHECK(point.fraction > 0.998);
  CHECK(p.inter_node_bandwidth == p.intra_node_bandwidth);  // the CPU has one kind of copy
  // The record says how every number came about.
  const auto& cal = built.calibration;
  CHECK(cal.at("backend") == "cpu");
  CHECK(cal.at("date") == "2025-01-01T00:00:00Z");
  CHECK(cal.at("device").at("fake") == "yes");
  CHECK(cal.at("peaks").at("flops").at("bf16").at("from") == "best measured GEMM rate");
  CHECK(cal.at("gemm").size() == 3 * ppsim::calibrate::plan_scale("cpu", false).gemm_dims.size() + 6);
  for (const auto& g : cal.at("gemm")) {
    CHECK(g.at("seconds").at("min") <= g.at("seconds").at("median"));
    CHECK(g.at("seconds").at("median") <= g.at("seconds").at("max"));
  }
}

TEST_CASE("A known GPU keeps its datasheet peaks, and with one GPU its preset's NVLink figures") {
  FakeMachine machine;
  machine.backend = "cuda";
  machine.device_name = "NVIDIA H200";
  const auto built = calibrate_fake(machine);
  const HardwareProfile& p = built.profile;
  const HardwareProfile& h200 = *ppsim::find_hardware_preset("H200-SXM-141GB");
  REQUIRE(ppsim::validate_hardware_profile(p).empty());
  CHECK(p.name == "H200-SXM-141GB (measured)");
  CHECK(p.dense_peak_flops == h200.dense_peak_flops);
  CHECK(p.memory_bandwidth == h200.memory_bandwidth);
  // The fake reaches only 1e12 FLOP/s: a small fraction of the datasheet's 989 TFLOP/s.
  CHECK(p.gemm.points().back().fraction < 1e12 / 989.4e12 + 1e-6);
  // One GPU: no peer to measure, so the NVLink figures stay the preset's and are marked assumed.
  CHECK(p.intra_node_bandwidth == h200.intra_node_bandwidth);
  CHECK(p.intra_link == h200.intra_link);
  CHECK(p.latency_assumed);
  // The network stands in as the host-device copies.
  CHECK_THAT(p.inter_node_bandwidth, WithinRel(machine.host_link_bandwidth, 1e-3));
  CHECK_THAT(p.source, Contains("datasheet figures of H200-SXM-141GB"));
  CHECK_THAT(p.source, Contains("host-device copies"));
}

TEST_CASE("Several GPUs give the intra-node link from their peer-to-peer copies") {
  FakeMachine machine;
  machine.backend = "cuda";
  machine.device_name = "NVIDIA Unknown Accelerator";
  machine.devices = 4;
  const auto built = calibrate_fake(machine);
  const HardwareProfile& p = built.profile;
  CHECK(p.devices_per_node == 4);
  CHECK_FALSE(p.latency_assumed);
  CHECK_THAT(p.intra_node_bandwidth, WithinRel(machine.link_bandwidth, 1e-3));
  CHECK_THAT(p.intra_node_latency, WithinRel(machine.link_latency, 1e-3));
  CHECK(built.calibration.at("link_fits").at("intra_node").at("links").size() == 12);  // 4 x 3 ordered pairs
  // An unknown GPU's peaks are its best measured rates.
  CHECK(built.calibration.at("peaks").at("flops").at("bf16").at("from") == "best measured GEMM rate");
}

TEST_CASE("A built profile survives the JSON writer and reader unchanged") {
  const auto built = calibrate_fake(FakeMachine{});
  const auto json = ppsim::hardware_profile_to_json(built.profile, built.calibration);
  const auto loaded = ppsim::hardware_profile_from_json(nlohmann::json::parse(json.dump()), "round trip");
  CHECK(loaded.profile == built.profile);
  // The reader parses into a sorted-key document, so compare values, not key order.
  CHECK(nlohmann::json::parse(loaded.calibration.dump()) == nlohmann::json::parse(built.calibration.dump()));
}

TEST_CASE("Collectives become bus-bandwidth tables per operation and group size that give back each time") {
  FakeMachine machine;
  machine.backend = "cuda";
  machine.device_name = "NVIDIA H100 80GB HBM3";
  machine.devices = 8;
  const auto built = calibrate_fake(machine);
  const HardwareProfile& p = built.profile;
  REQUIRE(ppsim::validate_hardware_profile(p).empty());
  REQUIRE(p.collectives.size() == 4 * 3);  // 4 operations x groups of 2, 4 and 8
  CHECK_THAT(p.source, Contains("Collectives: NCCL"));
  for (const ppsim::Collective op : ppsim::kAllCollectives) {
    for (const int ranks : {2, 4, 8}) {
      const ppsim::CollectiveTable* table = p.collective_table(op, ranks);
      REQUIRE(table != nullptr);
      for (const ppsim::BusBandwidthPoint& point : table->points()) {
        INFO(ppsim::collective_name(op) << " over " << ranks << " at " << point.bytes);
        const double seconds = machine.collective_latency + point.bytes * ppsim::bus_factor(op, ranks) /
                                                                machine.collective_bus_bandwidth;
        CHECK_THAT(point.bandwidth, WithinRel(point.bytes * ppsim::bus_factor(op, ranks) / seconds, 1e-3));
        CHECK_THAT(table->time(point.bytes), WithinRel(seconds, 1e-3));
        // Latency weighs less as messages grow: the bus bandwidth rises towards the machine's.
        CHECK(point.bandwidth < machine.collective_bus_bandwidth);
      }
      CHECK(table->points().back().bandwidth > table->points().front().bandwidth);
    }
  }
  CHECK(built.calibration.at("collectives").size() == 4 * 3 * ppsim::calibrate::plan_scale("cuda", false).link_bytes.size());
}
