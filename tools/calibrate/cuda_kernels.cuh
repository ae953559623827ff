// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CUDA backend's own kernels: random fill, the memory-bound kernels of a transformer layer in
// bf16 with FP32 math (as Megatron-LM and Transformer Engine compute them), the FP32 Adam update,
// and a clock-reading spin for the SM clock seen. Every launcher checks its launch.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "tools/calibrate/backend.hpp"

namespace ppsim::calibrate::cuda {

using bf16 = __nv_bfloat16;

// Non-zero values in [-1, -0.1] u [0.1, 1] (|values| only when `positive`), a hash of the index.
void fill_random(bf16* data, std::int64_t n, std::uint64_t seed, cudaStream_t stream);
void fill_random(__half* data, std::int64_t n, std::uint64_t seed, cudaStream_t stream);
void fill_random(float* data, std::int64_t n, std::uint64_t seed, bool positive, cudaStream_t stream);

// Inputs `x`, `x2` (SwiGLU's up projection; softmax backward's output gradient, with `x` the
// softmax output), output `y`, `width` norm weights `gamma` and `beta`; Adam uses the FP32 arrays.
struct MemoryKernelBuffers {
  const bf16* x = nullptr;
  const bf16* x2 = nullptr;
  bf16* y = nullptr;
  const bf16* gamma = nullptr;
  const bf16* beta = nullptr;
  float* param = nullptr;
  const float* grad = nullptr;
  float* m = nullptr;
  float* v = nullptr;
};

void launch_memory_kernel(MemoryKernel kernel, const MemoryShape& shape, const MemoryKernelBuffers& buffers,
                          cudaStream_t stream);

// One thread spins until `cycles` SM clock cycles (clock64) have passed; timed with events, this
// gives the SM clock the GPU ran at.
void launch_clock_spin(long long cycles, cudaStream_t stream);

}  // namespace ppsim::calibrate::cuda
