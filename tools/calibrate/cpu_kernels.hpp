// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CPU backend's kernels, in FP32 on one thread: a cache-blocked GEMM and the memory-bound
// kernels of a transformer layer. They compute real results (the tests compare the GEMM with a
// naive product) so the timings are of real work, not of loops a compiler could drop.

#include <cstdint>

#include "tools/calibrate/backend.hpp"

namespace ppsim::calibrate {

// C[m x n] = op(A) . op(B) on row-major matrices (shape as in GemmShape, batch ignored): A is m x k
// (k x m when transposed), B is k x n (n x k when transposed), C is overwritten.
void cpu_gemm(const GemmShape& shape, const float* a, const float* b, float* c);

// Buffers of a memory-bound kernel: `x` (and `x2`, the second input of SwiGLU and the gradient of
// softmax backward) are inputs, `y` the output; `gamma`/`beta` hold `width` norm parameters. The
// Adam update uses `adam` instead.
struct AdamBuffers {
  float* param = nullptr;
  const float* grad = nullptr;
  float* m = nullptr;
  float* v = nullptr;
};

void cpu_memory_kernel(MemoryKernel kernel, const MemoryShape& shape, const float* x, const float* x2, float* y,
                       const float* gamma, const float* beta, const AdamBuffers& adam);

}  // namespace ppsim::calibrate
