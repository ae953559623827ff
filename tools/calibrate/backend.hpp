// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a calibration backend measures, and the plain data it reports. A backend (the CPU one in
// cpu_backend.hpp, the CUDA one in cuda_backend.hpp) times single operations; everything that
// decides which operations to time (plan.hpp) or what the times mean (profile_builder.hpp) is
// shared, so both backends write the same profile. Kept free of JSON and CUDA headers because the
// CUDA backend is compiled by nvcc.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "models/hardware/collectives.hpp"

namespace ppsim::calibrate {

// Number formats of a GEMM: inputs and outputs in `bf16`/`fp16` with FP32 accumulation, `tf32`
// (FP32 data, TF32 tensor-core math), `fp32` (plain FP32 math).
enum class Precision { kBf16, kFp16, kTf32, kFp32 };

std::string_view precision_name(Precision precision);
std::optional<Precision> parse_precision(std::string_view text);

// One (optionally batched) GEMM on row-major matrices: C[m x n] = op(A)[m x k] . op(B)[k x n],
// where op(A) = A^T when `transpose_a` (A is then stored k x m), likewise for B. A batched GEMM
// (attention's per-head products) runs `batch` independent products of the same shape.
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  bool transpose_a = false;
  bool transpose_b = false;
  std::int64_t batch = 1;

  double flops() const {
    return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

// The memory-bound kernels of a transformer layer and its optimizer step. Each works on `rows`
// rows of `width` elements (the row is what a norm or a softmax reduces over; elementwise kernels
// ignore the split). Bytes moved: see memory_kernel_bytes.
enum class MemoryKernel {
  kCopy,             // y = x
  kRmsNorm,          // y = x / rms(x) * g, per row
  kLayerNorm,        // y = (x - mean) / std * g + b, per row
  kGelu,             // y = gelu(x), tanh form (Hendrycks and Gimpel 2016)
  kSwiglu,           // y = silu(gate) * up (Shazeer 2020); reads two inputs per output
  kSoftmaxForward,   // y = softmax(x), per row
  kSoftmaxBackward,  // dx = y * (dy - sum(dy * y)), per row
  kAdam,             // Adam(W) update of an FP32 parameter shard (Loshchilov and Hutter 2019)
};

inline constexpr MemoryKernel kAllMemoryKernels[] = {
    MemoryKernel::kCopy,   MemoryKernel::kRmsNorm,        MemoryKernel::kLayerNorm,       MemoryKernel::kGelu,
    MemoryKernel::kSwiglu, MemoryKernel::kSoftmaxForward, MemoryKernel::kSoftmaxBackward, MemoryKernel::kAdam};

std::string_view memory_kernel_name(MemoryKernel kernel);

struct MemoryShape {
  std::int64_t rows = 1;
  std::int64_t width = 1;
  std::int64_t elements() const { return rows * width; }
};

// Bytes a kernel must move at least once between memory and the chip, counting every read and
// write of its tensors with `element_bytes` per activation element (2 for bf16 on GPUs, 4 for the
// CPU backend's fp32). The Adam update is over FP32 master weights, FP32 gradients and two FP32
// moments (Megatron-LM's mixed-precision optimizer keeps them so): read 4 tensors, write 3, 28
// bytes per parameter. Small per-row vectors (norm weights, row statistics) are left out.
double memory_kernel_bytes(MemoryKernel kernel, const MemoryShape& shape, int element_bytes);

// Copies a backend can time. `kDeviceToDevice` is a copy inside one device's memory (for the CPU
// backend a memcpy between two buffers), `kPeer` a copy from device `src` to device `dst`.
struct LinkSpec {
  enum Kind { kDeviceToDevice, kHostToDevice, kDeviceToHost, kPeer };
  Kind kind = kDeviceToDevice;
  int src = 0;
  int dst = 0;
  std::string label;   // "d2d", "h2d", "d2h", "p2p 0->1", "memcpy"
  bool direct = true;  // for kPeer: peer access was enabled (NVLink or PCIe P2P), else staged by the driver
};

// Statistics of one measurement, in seconds.
struct Spread {
  double min = 0;
  double median = 0;
  double max = 0;
  int runs = 0;
  double mean = 0;
  double stdev = 0;  // the runs' sample standard deviation: the kernel's variability (--jitter measured)
};

// Facts about the measured machine, in the order they are written. Values are numbers or text.
using InfoValue = std::variant<std::int64_t, double, std::string>;
struct DeviceInfo {
  std::string name;               // "NVIDIA H200", or the CPU's model name
  std::int64_t memory_bytes = 0;  // device memory (CPU: physical memory)
  int devices = 1;                // devices of this kind in the node (GPUs; CPU: hardware threads)
  std::vector<std::pair<std::string, InfoValue>> details;  // SM count, versions, clocks, ...
};

// How measurements are repeated; see measure.hpp.
struct MeasureOptions {
  int warmup = 2;                // untimed runs first
  int min_runs = 10;             // timed runs at least
  int max_runs = 100;            // and at most
  double budget_seconds = 0.25;  // keep adding runs up to max_runs while their sum is below this
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;  // "cpu" or "cuda"
  virtual DeviceInfo device_info() = 0;
  // How the backend times and what it does between runs, for the profile's metadata.
  virtual std::string method() const = 0;
  // Bytes per activation element of the memory-bound kernels (bf16: 2; the CPU's fp32: 4).
  virtual int element_bytes() const = 0;

  virtual Spread gemm(const GemmShape& shape, Precision precision) = 0;
  virtual Spread memory_kernel(MemoryKernel kernel, const MemoryShape& shape) = 0;
  virtual std::vector<LinkSpec> links() = 0;
  virtual Spread link_copy(const LinkSpec& link, std::int64_t bytes) = 0;

  // Group sizes the backend can time collectives over (none: it cannot), and one collective on a
  // tensor of `bytes` among the first `ranks` devices: NCCL on GPUs, threads for the CPU's stand-in.
  // `bytes` is the whole tensor (collectives.hpp) and a multiple of 4 * ranks.
  virtual std::vector<int> collective_ranks() { return {}; }
  virtual Spread collective(Collective /*op*/, int /*ranks*/, std::int64_t /*bytes*/) { return {}; }

  // Facts the backend learned while measuring (e.g. the SM clock seen under load), appended to
  // the device facts after the run.
  virtual std::vector<std::pair<std::string, InfoValue>> facts_after_run() { return {}; }
};

// A backend the command line can choose: `unavailable` says why it cannot run here ("" when it
// can; the CUDA backend asks the driver for a device, so it is called only once a run is wanted),
// `create` builds it with measurement settings for a full or a --quick run.
struct BackendEntry {
  std::string name;
  std::function<std::string()> unavailable;
  std::function<std::unique_ptr<Backend>(bool quick)> create;
};

}  // namespace ppsim::calibrate
