// SPDX-License-Identifier: Apache-2.0
#pragma once
// A backend with a known machine inside: its "timings" follow closed forms, so a test can check
// that the profile built from them describes that machine.

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "tools/calibrate/backend.hpp"

namespace ppsim::calibrate::testing {

struct FakeMachine {
  std::string backend = "cpu";
  std::string device_name = "Fake Device";
  int devices = 1;
  double peak_flops = 1e12;      // reached by huge GEMMs only
  double gemm_half_flops = 1e8;  // a GEMM of this many FLOPs runs at half the peak
  double bandwidth = 1e11;       // reached by huge kernels only
  double memory_half_bytes = 1e6;
  double link_latency = 5e-6;  // every copy: latency + bytes / link_bandwidth
  double link_bandwidth = 2e10;
  double host_link_bandwidth = 1e10;
  // Collectives among 2 .. `devices` ranks (none with one device): every one takes
  // collective_latency + bytes * bus_factor / collective_bus_bandwidth.
  double collective_latency = 10e-6;
  double collective_bus_bandwidth = 1e11;
};

class FakeBackend final : public Backend {
 public:
  explicit FakeBackend(FakeMachine machine) : machine_(std::move(machine)) {}

  // The efficiency curves the fake follows: x / (x + half).
  double gemm_efficiency(double flops) const { return flops / (flops + machine_.gemm_half_flops); }
  double memory_efficiency(double bytes) const { return bytes / (bytes + machine_.memory_half_bytes); }

  std::string name() const override { return machine_.backend; }
  DeviceInfo device_info() override {
    return DeviceInfo{machine_.device_name, std::int64_t{16} << 30, machine_.devices, {{"fake", std::string("yes")}}};
  }
  std::string method() const override { return "closed forms"; }
  int element_bytes() const override { return 2; }
  Spread gemm(const GemmShape& shape, Precision) override {
    const double f = shape.flops();
    return exact(f / (machine_.peak_flops * gemm_efficiency(f)));
  }
  Spread memory_kernel(MemoryKernel kernel, const MemoryShape& shape) override {
    const double bytes = memory_kernel_bytes(kernel, shape, element_bytes());
    return exact(bytes / (machine_.bandwidth * memory_efficiency(bytes)));
  }
  std::vector<LinkSpec> links() override {
    std::vector<LinkSpec> links{{LinkSpec::kDeviceToDevice, 0, 0, "d2d", true}};
    if (machine_.backend != "cpu") {
      links.push_back({LinkSpec::kHostToDevice, 0, 0, "h2d", true});
      links.push_back({LinkSpec::kDeviceToHost, 0, 0, "d2h", true});
      for (int a = 0; a < machine_.devices; ++a) {
        for (int b = 0; b < machine_.devices; ++b) {
          if (a != b)
            links.push_back({LinkSpec::kPeer, a, b, "p2p " + std::to_string(a) + "->" + std::to_string(b), true});
        }
      }
    }
    return links;
  }
  Spread link_copy(const LinkSpec& link, std::int64_t bytes) override {
    const bool host = link.kind == LinkSpec::kHostToDevice || link.kind == LinkSpec::kDeviceToHost;
    return exact(machine_.link_latency +
                 static_cast<double>(bytes) / (host ? machine_.host_link_bandwidth : machine_.link_bandwidth));
  }
  std::vector<int> collective_ranks() override {
    std::vector<int> ranks;
    for (int n = 2; n <= machine_.devices; n *= 2) ranks.push_back(n);
    return ranks;
  }
  Spread collective(Collective op, int ranks, std::int64_t bytes) override {
    return exact(machine_.collective_latency +
                 static_cast<double>(bytes) * bus_factor(op, ranks) / machine_.collective_bus_bandwidth);
  }

 private:
  static Spread exact(double seconds) { return Spread{seconds, seconds, seconds, 3}; }
  FakeMachine machine_;
};

}  // namespace ppsim::calibrate::testing
