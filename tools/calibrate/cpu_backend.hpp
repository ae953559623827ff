// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CPU backend: times the kernels of cpu_kernels.hpp on one thread with std::chrono's steady
// clock. It writes the same profile as the CUDA backend, so the whole path from microbenchmark to
// simulation runs on machines without a GPU (CI, laptops); its numbers describe the CPU, not a GPU.

#include <cstdint>
#include <memory>

#include "tools/calibrate/backend.hpp"

namespace ppsim::calibrate {

struct CpuBackendOptions {
  MeasureOptions measure;
  // Bytes written between timed runs to evict the inputs from the caches, so a run does not time
  // data the previous run left there; 0 turns it off (the --quick runs of tests).
  std::int64_t cache_flush_bytes = 0;
};

// Twice the last-level cache the system reports, at most 256 MiB (64 MiB when it reports none).
std::int64_t default_cpu_cache_flush_bytes();

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options);

// Always available. Full runs: 1 warm-up, 5 to 50 runs within 0.3 s, caches flushed; --quick:
// 1 warm-up, 3 runs, no flush.
BackendEntry cpu_backend_entry();

}  // namespace ppsim::calibrate
