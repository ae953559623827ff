// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CUDA backend (cuda_backend.cu): cuBLASLt for the layer's GEMMs, cuBLAS's strided-batched
// GEMM for attention's per-head products, hand-written kernels for the memory-bound ones, and
// cudaMemcpy for the links; timed with CUDA events. Plain C++ here, so main.cpp needs no CUDA.

#include "tools/calibrate/backend.hpp"

namespace ppsim::calibrate {

// Available when the driver reports at least one device; asking is the first CUDA call the
// program makes, so --help and --version never touch the GPU. Full runs: 5 warm-up runs, then 20
// to 200 timed runs within 0.2 s; --quick: 2 warm-up runs, 5 timed runs. The L2 cache is flushed
// before every timed run.
BackendEntry cuda_backend_entry();

}  // namespace ppsim::calibrate
