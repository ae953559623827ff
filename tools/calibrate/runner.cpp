// SPDX-License-Identifier: Apache-2.0
#include "tools/calibrate/runner.hpp"

#include <algorithm>
#include <ostream>

#include "tools/calibrate/host_checksum.hpp"

namespace ppsim::calibrate {

Measurements run_plan(Backend& backend, const CalibrationPlan& plan, std::ostream* progress) {
  Measurements m;
  m.backend = backend.name();
  m.method = backend.method();
  m.element_bytes = backend.element_bytes();
  m.device = backend.device_info();
  auto say = [&](const std::string& line) {
    if (progress != nullptr) *progress << "ppsim-calibrate: " << line << std::endl;
  };
  say(m.backend + " backend on " + m.device.name);

  for (const Precision precision : plan.precisions) {
    say("GEMMs in " + std::string(precision_name(precision)) + ": " + std::to_string(plan.gemms.size()) + " shapes");
    for (const PlannedGemm& g : plan.gemms) m.gemms.push_back({g, precision, backend.gemm(g.shape, precision)});
  }
  say("memory-bound kernels: " + std::to_string(plan.memory.size()) + " sizes");
  for (const PlannedMemory& k : plan.memory) {
    m.memory.push_back(
        {k, memory_kernel_bytes(k.kernel, k.shape, m.element_bytes), backend.memory_kernel(k.kernel, k.shape)});
  }
  const std::vector<LinkSpec> links = backend.links();
  say("links: " + std::to_string(links.size()) + " x " + std::to_string(plan.link_bytes.size()) + " sizes");
  for (const LinkSpec& link : links) {
    for (const std::int64_t bytes : plan.link_bytes) m.links.push_back({link, bytes, backend.link_copy(link, bytes)});
  }
  const std::vector<int> groups = backend.collective_ranks();
  if (!groups.empty()) {
    say("collectives: 4 operations x " + std::to_string(groups.size()) + " group sizes x " +
        std::to_string(plan.link_bytes.size()) + " sizes");
  }
  for (const Collective op : kAllCollectives) {
    for (const int ranks : groups) {
      for (const std::int64_t bytes : plan.link_bytes) {
        // Whole 4-byte elements, split evenly over the ranks.
        const std::int64_t unit = 4 * std::int64_t{ranks};
        const std::int64_t size = std::max(unit, bytes / unit * unit);
        m.collectives.push_back({op, ranks, size, backend.collective(op, ranks, size)});
      }
    }
  }
  say("CRC32 on the host: " + std::to_string(kChecksumBytes >> 20) + " MiB");
  m.checksum_bytes = kChecksumBytes;
  m.checksum_seconds = host_crc32_seconds(kChecksumBytes);
  for (auto& fact : backend.facts_after_run()) m.device.details.push_back(std::move(fact));
  return m;
}

}  // namespace ppsim::calibrate
