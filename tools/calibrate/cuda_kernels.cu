// SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include "tools/calibrate/cuda_check.cuh"
#include "tools/calibrate/cuda_kernels.cuh"

namespace ppsim::calibrate::cuda {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;  // grid-stride loops cover the rest

int elementwise_blocks(std::int64_t work_items) {
  return static_cast<int>(std::clamp<std::int64_t>((work_items + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// SplitMix64's finalizer, as the CPU backend uses it.
__device__ float random_value(std::uint64_t index, std::uint64_t seed, bool positive) {
  std::uint64_t z = index + seed * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const float unit = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
  const float magnitude = 0.1f + 0.9f * unit;
  return (positive || (z & 1)) ? magnitude : -magnitude;
}

__global__ void fill_bf16_kernel(bf16* data, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    data[i] = __float2bfloat16(random_value(static_cast<std::uint64_t>(i), seed, false));
  }
}

__global__ void fill_f16_kernel(__half* data, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    data[i] = __float2half(random_value(static_cast<std::uint64_t>(i), seed, false));
  }
}

__global__ void fill_f32_kernel(float* data, std::int64_t n, std::uint64_t seed, bool positive) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    data[i] = random_value(static_cast<std::uint64_t>(i), seed, positive);
  }
}

// --- elementwise kernels, 8 bf16 (16 bytes) per load where the buffer allows -------------------

constexpr int kVector = 8;

struct alignas(16) Pack {
  bf16 v[kVector];
};

__device__ float gelu(float x) {
  // tanh approximation (GPT-2, Megatron-LM).
  const float inner = 0.7978845608f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

__device__ float silu(float x) { return x / (1.0f + __expf(-x)); }

enum class Elementwise { kCopy, kGelu, kSwiglu };

template <Elementwise kOp>
__device__ bf16 apply(bf16 a, bf16 b) {
  if constexpr (kOp == Elementwise::kCopy) {
    return a;
  } else if constexpr (kOp == Elementwise::kGelu) {
    return __float2bfloat16(gelu(__bfloat162float(a)));
  } else {
    return __float2bfloat16(silu(__bfloat162float(a)) * __bfloat162float(b));
  }
}

// y[i] = op(x[i], x2[i]); `x2` is read only by SwiGLU. cudaMalloc'd buffers are 256-byte aligned,
// so the packs are aligned; the tail past the last whole pack is done one element at a time.
template <Elementwise kOp>
__global__ void elementwise_kernel(const bf16* x, const bf16* x2, bf16* y, std::int64_t n) {
  const std::int64_t packs = n / kVector;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t first = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const Pack* xp = reinterpret_cast<const Pack*>(x);
  const Pack* x2p = reinterpret_cast<const Pack*>(x2);
  Pack* yp = reinterpret_cast<Pack*>(y);
  for (std::int64_t i = first; i < packs; i += stride) {
    const Pack a = xp[i];
    Pack b{};
    if constexpr (kOp == Elementwise::kSwiglu) b = x2p[i];
    Pack out;
#pragma unroll
    for (int j = 0; j < kVector; ++j) out.v[j] = apply<kOp>(a.v[j], b.v[j]);
    yp[i] = out;
  }
  for (std::int64_t i = packs * kVector + first; i < n; i += stride) {
    y[i] = apply<kOp>(x[i], kOp == Elementwise::kSwiglu ? x2[i] : x[i]);
  }
}

// --- row kernels: one block per row, FP32 reductions -------------------------------------------

// Sum (or max) over the block; every thread gets the result. `scratch` holds 33 floats.
template <bool kMax>
__device__ float block_reduce(float value, float* scratch) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffu, value, offset);
    value = kMax ? fmaxf(value, other) : value + other;
  }
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  if (warp == 0) {
    const int warps = (blockDim.x + 31) >> 5;
    value = lane < warps ? scratch[lane] : (kMax ? -INFINITY : 0.0f);
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      const float other = __shfl_xor_sync(0xffffffffu, value, offset);
      value = kMax ? fmaxf(value, other) : value + other;
    }
    if (lane == 0) scratch[32] = value;
  }
  __syncthreads();
  const float result = scratch[32];
  __syncthreads();  // scratch is reused by the next reduction
  return result;
}

constexpr float kNormEps = 1e-5f;

__global__ void rmsnorm_kernel(const bf16* x, const bf16* gamma, bf16* y, std::int64_t width) {
  __shared__ float scratch[33];
  const bf16* in = x + blockIdx.x * width;
  bf16* out = y + blockIdx.x * width;
  float sum_sq = 0;
  for (std::int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    const float v = __bfloat162float(in[i]);
    sum_sq += v * v;
  }
  const float scale = rsqrtf(block_reduce<false>(sum_sq, scratch) / static_cast<float>(width) + kNormEps);
  for (std::int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    out[i] = __float2bfloat16(__bfloat162float(in[i]) * scale * __bfloat162float(gamma[i]));
  }
}

__global__ void layernorm_kernel(const bf16* x, const bf16* gamma, const bf16* beta, bf16* y, std::int64_t width) {
  __shared__ float scratch[33];
  const bf16* in = x + blockIdx.x * width;
  bf16* out = y + blockIdx.x * width;
  float sum = 0, sum_sq = 0;
  for (std::int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    const float v = __bfloat162float(in[i]);
    sum += v;
    sum_sq += v * v;
  }
  const float mean = block_reduce<false>(sum, scratch) / static_cast<float>(width);
  const float var = fmaxf(0.0f, block_reduce<false>(sum_sq, scratch) / static_cast<float>(width) - mean * mean);
  const float scale = rsqrtf(var + kNormEps);
  for (std::int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    const float v = (__bfloat162float(in[i]) - mean) * scale;
    out[i] = __float2bfloat16(v * __bfloat162float(gamma[i]) + __bfloat162float(beta[i]));
  }
}

__global__ void softmax_forward_kernel(const bf16* x, bf16* y, std::int64_t width) {
  __shared__ float scratch[33];
  const bf16* in = x + blockIdx.x * width;
  bf16* out = y + blockIdx.x * width;
  float top = -INFINITY;
  for (std::int64_t i = threadIdx.x; i < width; i += blockDim.x) top = fmaxf(top, __bfloat162float(in[i]));
  top = block_reduce<true>(top, scratch);
  float sum = 0;
  for (std::int64_t i = threadIdx.x; i < width; i += blockDim.x) sum += __expf(__bfloat162float(in[i]) - top);
  const float inv = 1.0f / block_reduce<false>(sum, scratch);
  for (std::int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    out[i] = __float2bfloat16(__expf(__bfloat162float(in[i]) - top) * inv);
  }
}

// dx = y * (dy - sum(dy * y)) per row, with `y` the forward's output.
__global__ void softmax_backward_kernel(const bf16* y, const bf16* dy, bf16* dx, std::int64_t width) {
  __shared__ float scratch[33];
  const bf16* out = y + blockIdx.x * width;
  const bf16* grad = dy + blockIdx.x * width;
  bf16* result = dx + blockIdx.x * width;
  float dot = 0;
  for (std::int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    dot += __bfloat162float(out[i]) * __bfloat162float(grad[i]);
  }
  dot = block_reduce<false>(dot, scratch);
  for (std::int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    result[i] = __float2bfloat16(__bfloat162float(out[i]) * (__bfloat162float(grad[i]) - dot));
  }
}

// AdamW (Loshchilov and Hutter 2019) on FP32 master weights, FP32 gradients and moments, with the
// bias corrections of step 1 as constants.
__global__ void adam_kernel(float* param, const float* grad, float* m, float* v, std::int64_t n) {
  constexpr float kLr = 1e-4f, kBeta1 = 0.9f, kBeta2 = 0.95f, kDecay = 0.1f, kEps = 1e-8f;
  constexpr float kCorrection1 = 1.0f / (1.0f - kBeta1), kCorrection2 = 1.0f / (1.0f - kBeta2);
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const float g = grad[i];
    const float m1 = kBeta1 * m[i] + (1 - kBeta1) * g;
    const float v1 = kBeta2 * v[i] + (1 - kBeta2) * g * g;
    m[i] = m1;
    v[i] = v1;
    const float update = (m1 * kCorrection1) / (sqrtf(v1 * kCorrection2) + kEps);
    param[i] -= kLr * (update + kDecay * param[i]);
  }
}

__global__ void clock_spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Threads per row: enough to cover short rows without idle warps, 256 (8 warps) for long ones.
int row_threads(std::int64_t width) {
  if (width >= 1024) return kThreads;
  return static_cast<int>(std::max<std::int64_t>(32, (width + 31) / 32 * 32));
}

}  // namespace

void fill_random(bf16* data, std::int64_t n, std::uint64_t seed, cudaStream_t stream) {
  fill_bf16_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(data, n, seed);
  check_launch("fill_bf16_kernel<<<...>>>");
}

void fill_random(__half* data, std::int64_t n, std::uint64_t seed, cudaStream_t stream) {
  fill_f16_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(data, n, seed);
  check_launch("fill_f16_kernel<<<...>>>");
}

void fill_random(float* data, std::int64_t n, std::uint64_t seed, bool positive, cudaStream_t stream) {
  fill_f32_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(data, n, seed, positive);
  check_launch("fill_f32_kernel<<<...>>>");
}

void launch_memory_kernel(MemoryKernel kernel, const MemoryShape& shape, const MemoryKernelBuffers& b,
                          cudaStream_t stream) {
  const std::int64_t n = shape.elements();
  // One block per row; rows beyond the grid's limit would need a loop, and no planned shape has
  // 2^31 rows.
  if (shape.rows > 0x7fffffff) throw std::runtime_error("memory kernel: too many rows for one grid");
  const unsigned rows = static_cast<unsigned>(shape.rows);
  switch (kernel) {
    case MemoryKernel::kCopy:
      elementwise_kernel<Elementwise::kCopy>
          <<<elementwise_blocks(n / kVector + 1), kThreads, 0, stream>>>(b.x, b.x2, b.y, n);
      return check_launch("elementwise_kernel<copy><<<...>>>");
    case MemoryKernel::kGelu:
      elementwise_kernel<Elementwise::kGelu>
          <<<elementwise_blocks(n / kVector + 1), kThreads, 0, stream>>>(b.x, b.x2, b.y, n);
      return check_launch("elementwise_kernel<gelu><<<...>>>");
    case MemoryKernel::kSwiglu:
      elementwise_kernel<Elementwise::kSwiglu>
          <<<elementwise_blocks(n / kVector + 1), kThreads, 0, stream>>>(b.x, b.x2, b.y, n);
      return check_launch("elementwise_kernel<swiglu><<<...>>>");
    case MemoryKernel::kRmsNorm:
      rmsnorm_kernel<<<rows, row_threads(shape.width), 0, stream>>>(b.x, b.gamma, b.y, shape.width);
      return check_launch("rmsnorm_kernel<<<...>>>");
    case MemoryKernel::kLayerNorm:
      layernorm_kernel<<<rows, row_threads(shape.width), 0, stream>>>(b.x, b.gamma, b.beta, b.y, shape.width);
      return check_launch("layernorm_kernel<<<...>>>");
    case MemoryKernel::kSoftmaxForward:
      softmax_forward_kernel<<<rows, row_threads(shape.width), 0, stream>>>(b.x, b.y, shape.width);
      return check_launch("softmax_forward_kernel<<<...>>>");
    case MemoryKernel::kSoftmaxBackward:
      softmax_backward_kernel<<<rows, row_threads(shape.width), 0, stream>>>(b.x, b.x2, b.y, shape.width);
      return check_launch("softmax_backward_kernel<<<...>>>");
    case MemoryKernel::kAdam:
      adam_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(b.param, b.grad, b.m, b.v, n);
      return check_launch("adam_kernel<<<...>>>");
  }
}

void launch_clock_spin(long long cycles, cudaStream_t stream) {
  clock_spin_kernel<<<1, 1, 0, stream>>>(cycles);
  check_launch("clock_spin_kernel<<<...>>>");
}

}  // namespace ppsim::calibrate::cuda
