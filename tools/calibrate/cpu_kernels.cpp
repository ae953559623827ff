// SPDX-License-Identifier: Apache-2.0
#include "tools/calibrate/cpu_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace ppsim::calibrate {
namespace {

// Blocking after Goto and van de Geijn, "Anatomy of High-Performance Matrix Multiplication"
// (ACM TOMS 2008): a kc x nc panel of B and an mc x kc block of A are packed into contiguous,
// micro-panel-ordered buffers so the inner kernel streams both from cache, and a kMr x kNr block of
// C stays in registers across the kc loop. The sizes fit a 32-64 KiB L1 (A micro-panel + B
// micro-panel) and a 512 KiB-1 MiB L2 (the packed A block); the inner loops are plain C++ that
// the compiler vectorizes.
constexpr std::int64_t kMr = 4;
constexpr std::int64_t kNr = 16;
constexpr std::int64_t kKc = 256;
constexpr std::int64_t kMc = 64;
constexpr std::int64_t kNc = 1024;

struct Operand {
  const float* data;
  std::int64_t ld;
  bool transposed;
  // Element (row, col) of op(X).
  float at(std::int64_t row, std::int64_t col) const {
    return transposed ? data[col * ld + row] : data[row * ld + col];
  }
};

// Packs op(A)[i0 : i0+mc, p0 : p0+kc] as micro-panels of kMr rows: panel r holds, for each p, the
// kMr values of rows r*kMr.. (zero beyond the block), so the kernel reads it sequentially.
void pack_a(const Operand& a, std::int64_t i0, std::int64_t mc, std::int64_t p0, std::int64_t kc, float* out) {
  for (std::int64_t r = 0; r < mc; r += kMr) {
    const std::int64_t rows = std::min(kMr, mc - r);
    for (std::int64_t p = 0; p < kc; ++p) {
      for (std::int64_t i = 0; i < kMr; ++i) *out++ = i < rows ? a.at(i0 + r + i, p0 + p) : 0.0f;
    }
  }
}

// Packs op(B)[p0 : p0+kc, j0 : j0+nc] as micro-panels of kNr columns.
void pack_b(const Operand& b, std::int64_t p0, std::int64_t kc, std::int64_t j0, std::int64_t nc, float* out) {
  for (std::int64_t c = 0; c < nc; c += kNr) {
    const std::int64_t cols = std::min(kNr, nc - c);
    for (std::int64_t p = 0; p < kc; ++p) {
      if (!b.transposed && cols == kNr) {
        std::memcpy(out, b.data + (p0 + p) * b.ld + j0 + c, kNr * sizeof(float));
        out += kNr;
        continue;
      }
      for (std::int64_t j = 0; j < kNr; ++j) *out++ = j < cols ? b.at(p0 + p, j0 + c + j) : 0.0f;
    }
  }
}

// C[rows x cols] (+)= Ap . Bp over kc, with Ap and Bp one packed micro-panel each.
void micro_kernel(std::int64_t kc, const float* ap, const float* bp, float* c, std::int64_t ldc, std::int64_t rows,
                  std::int64_t cols, bool accumulate) {
  float acc[kMr][kNr] = {};
  for (std::int64_t p = 0; p < kc; ++p) {
    const float* a = ap + p * kMr;
    const float* b = bp + p * kNr;
    for (std::int64_t i = 0; i < kMr; ++i) {
      const float ai = a[i];
      for (std::int64_t j = 0; j < kNr; ++j) acc[i][j] += ai * b[j];
    }
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    float* row = c + i * ldc;
    for (std::int64_t j = 0; j < cols; ++j) row[j] = accumulate ? row[j] + acc[i][j] : acc[i][j];
  }
}

float gelu(float x) {
  // tanh approximation, as GPT-2 and Megatron-LM use it.
  constexpr float kSqrt2OverPi = 0.7978845608f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }

}  // namespace

void cpu_gemm(const GemmShape& shape, const float* a, const float* b, float* c) {
  const std::int64_t m = shape.m, n = shape.n, k = shape.k;
  const Operand op_a{a, shape.transpose_a ? m : k, shape.transpose_a};
  const Operand op_b{b, shape.transpose_b ? k : n, shape.transpose_b};
  if (k == 0) {
    std::fill(c, c + m * n, 0.0f);
    return;
  }
  // Packed buffers, rounded up to whole micro-panels; thread_local so repeated runs reuse them.
  thread_local std::vector<float> a_packed, b_packed;
  a_packed.resize(static_cast<std::size_t>((kMc + kMr) * kKc));
  b_packed.resize(static_cast<std::size_t>((kNc + kNr) * kKc));
  for (std::int64_t j0 = 0; j0 < n; j0 += kNc) {
    const std::int64_t nc = std::min(kNc, n - j0);
    for (std::int64_t p0 = 0; p0 < k; p0 += kKc) {
      const std::int64_t kc = std::min(kKc, k - p0);
      pack_b(op_b, p0, kc, j0, nc, b_packed.data());
      for (std::int64_t i0 = 0; i0 < m; i0 += kMc) {
        const std::int64_t mc = std::min(kMc, m - i0);
        pack_a(op_a, i0, mc, p0, kc, a_packed.data());
        for (std::int64_t jr = 0; jr < nc; jr += kNr) {
          for (std::int64_t ir = 0; ir < mc; ir += kMr) {
            micro_kernel(kc, a_packed.data() + ir * kc, b_packed.data() + jr * kc, c + (i0 + ir) * n + j0 + jr, n,
                         std::min(kMr, mc - ir), std::min(kNr, nc - jr), p0 > 0);
          }
        }
      }
    }
  }
}

void cpu_memory_kernel(MemoryKernel kernel, const MemoryShape& shape, const float* x, const float* x2, float* y,
                       const float* gamma, const float* beta, const AdamBuffers& adam) {
  const std::int64_t rows = shape.rows;
  const std::int64_t width = shape.width;
  const std::int64_t n = shape.elements();
  constexpr float kEps = 1e-5f;
  switch (kernel) {
    case MemoryKernel::kCopy:
      std::memcpy(y, x, static_cast<std::size_t>(n) * sizeof(float));
      return;
    case MemoryKernel::kRmsNorm:
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* in = x + r * width;
        float* out = y + r * width;
        float sum = 0;
        for (std::int64_t i = 0; i < width; ++i) sum += in[i] * in[i];
        const float scale = 1.0f / std::sqrt(sum / static_cast<float>(width) + kEps);
        for (std::int64_t i = 0; i < width; ++i) out[i] = in[i] * scale * gamma[i];
      }
      return;
    case MemoryKernel::kLayerNorm:
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* in = x + r * width;
        float* out = y + r * width;
        float sum = 0, sum_sq = 0;
        for (std::int64_t i = 0; i < width; ++i) {
          sum += in[i];
          sum_sq += in[i] * in[i];
        }
        const float mean = sum / static_cast<float>(width);
        const float var = std::max(0.0f, sum_sq / static_cast<float>(width) - mean * mean);
        const float scale = 1.0f / std::sqrt(var + kEps);
        for (std::int64_t i = 0; i < width; ++i) out[i] = (in[i] - mean) * scale * gamma[i] + beta[i];
      }
      return;
    case MemoryKernel::kGelu:
      for (std::int64_t i = 0; i < n; ++i) y[i] = gelu(x[i]);
      return;
    case MemoryKernel::kSwiglu:
      for (std::int64_t i = 0; i < n; ++i) y[i] = silu(x[i]) * x2[i];
      return;
    case MemoryKernel::kSoftmaxForward:
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* in = x + r * width;
        float* out = y + r * width;
        const float top = *std::max_element(in, in + width);
        float sum = 0;
        for (std::int64_t i = 0; i < width; ++i) {
          out[i] = std::exp(in[i] - top);
          sum += out[i];
        }
        const float inv = 1.0f / sum;
        for (std::int64_t i = 0; i < width; ++i) out[i] *= inv;
      }
      return;
    case MemoryKernel::kSoftmaxBackward:
      // x holds the softmax output y, x2 the output gradient dy.
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* out = x + r * width;
        const float* grad = x2 + r * width;
        float* dx = y + r * width;
        float dot = 0;
        for (std::int64_t i = 0; i < width; ++i) dot += out[i] * grad[i];
        for (std::int64_t i = 0; i < width; ++i) dx[i] = out[i] * (grad[i] - dot);
      }
      return;
    case MemoryKernel::kAdam: {
      // AdamW with the usual hyper-parameters at step 1; the bias corrections are constants.
      constexpr float kLr = 1e-4f, kBeta1 = 0.9f, kBeta2 = 0.95f, kDecay = 0.1f, kAdamEps = 1e-8f;
      constexpr float kCorrection1 = 1.0f / (1.0f - kBeta1), kCorrection2 = 1.0f / (1.0f - kBeta2);
      for (std::int64_t i = 0; i < n; ++i) {
        const float g = adam.grad[i];
        const float m = kBeta1 * adam.m[i] + (1 - kBeta1) * g;
        const float v = kBeta2 * adam.v[i] + (1 - kBeta2) * g * g;
        adam.m[i] = m;
        adam.v[i] = v;
        const float update = (m * kCorrection1) / (std::sqrt(v * kCorrection2) + kAdamEps);
        adam.param[i] -= kLr * (update + kDecay * adam.param[i]);
      }
      return;
    }
  }
}

}  // namespace ppsim::calibrate
