// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs a CalibrationPlan on a backend and keeps every timing with what was timed.

#include <iosfwd>
#include <string>
#include <vector>

#include "tools/calibrate/backend.hpp"
#include "tools/calibrate/plan.hpp"

namespace ppsim::calibrate {

struct GemmMeasurement {
  PlannedGemm planned;
  Precision precision = Precision::kBf16;
  Spread seconds;
};

struct MemoryMeasurement {
  PlannedMemory planned;
  double bytes = 0;  // moved by the kernel at its actual shape (memory_kernel_bytes)
  Spread seconds;
};

struct LinkMeasurement {
  LinkSpec link;
  std::int64_t bytes = 0;
  Spread seconds;
};

struct CollectiveMeasurement {
  Collective op = Collective::kAllReduce;
  int ranks = 2;
  std::int64_t bytes = 0;
  Spread seconds;
};

struct Measurements {
  std::string backend;
  std::string method;
  int element_bytes = 0;
  DeviceInfo device;
  std::vector<GemmMeasurement> gemms;
  std::vector<MemoryMeasurement> memory;
  std::vector<LinkMeasurement> links;
  std::vector<CollectiveMeasurement> collectives;
  // CRC32 over a checkpoint-sized buffer on the host (zlib), whatever the backend: --checksum crc32.
  std::int64_t checksum_bytes = 0;
  Spread checksum_seconds;
};

// Times every planned operation once per plan entry (GEMMs once per precision). `progress`, when
// not null, gets one line per group of measurements.
Measurements run_plan(Backend& backend, const CalibrationPlan& plan, std::ostream* progress);

}  // namespace ppsim::calibrate
