// SPDX-License-Identifier: Apache-2.0
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tools/calibrate/cuda_backend.hpp"
#include "tools/calibrate/cuda_check.cuh"
#include "tools/calibrate/cuda_kernels.cuh"
#include "tools/calibrate/measure.hpp"
#ifdef PPSIM_CALIBRATE_HAVE_NCCL
#include "tools/calibrate/nccl_collectives.cuh"
#endif

namespace ppsim::calibrate {
namespace {

using cuda::check_cuda;

// --- owners of CUDA resources ---------------------------------------------------------------------
// Destructors ignore errors: they run during unwinding too, and a failed free after a failed
// measurement must not hide the first error.

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) PPSIM_CUDA(cudaMalloc(&data_, bytes));
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  void* get() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes) {
    PPSIM_CUDA(cudaMallocHost(&data_, bytes));
    // Touch every page so the first timed copy does not pay for it; non-zero bytes.
    std::fill_n(static_cast<unsigned char*>(data_), bytes, static_cast<unsigned char>(0x5a));
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { cudaFreeHost(data_); }
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
};

// The current device, restored when the guard goes out of scope.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    PPSIM_CUDA(cudaGetDevice(&previous_));
    PPSIM_CUDA(cudaSetDevice(device));
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() { cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

// A stream and a pair of timing events on the current device.
class Timer {
 public:
  Timer() {
    PPSIM_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    PPSIM_CUDA(cudaEventCreate(&start_));
    PPSIM_CUDA(cudaEventCreate(&stop_));
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  ~Timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }
  cudaStream_t stream() const { return stream_; }

  // Seconds of the work `op` enqueues on the stream, between two events.
  template <typename Op>
  double time(Op&& op) {
    PPSIM_CUDA(cudaEventRecord(start_, stream_));
    op();
    PPSIM_CUDA(cudaEventRecord(stop_, stream_));
    PPSIM_CUDA(cudaEventSynchronize(stop_));
    float ms = 0;
    PPSIM_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

template <typename T, cublasStatus_t (*kDestroy)(T)>
struct LtDeleter {
  void operator()(T handle) const { kDestroy(handle); }
};
using MatmulDesc = std::unique_ptr<std::remove_pointer_t<cublasLtMatmulDesc_t>,
                                   LtDeleter<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>>;
using MatrixLayout = std::unique_ptr<std::remove_pointer_t<cublasLtMatrixLayout_t>,
                                     LtDeleter<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>>;
using MatmulPreference = std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>,
                                         LtDeleter<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>>;

// Data type, compute type and bytes per element of a precision (see Precision).
struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  std::size_t bytes;
};

GemmTypes gemm_types(Precision precision) {
  switch (precision) {
    case Precision::kBf16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2};
    case Precision::kFp16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F, 2};
    case Precision::kTf32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4};
    case Precision::kFp32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F, 4};
  }
  return {CUDA_R_32F, CUBLAS_COMPUTE_32F, 4};
}

// cuBLAS is column-major; our matrices are row-major. A row-major X is the column-major X^T, so
// C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T: cuBLAS's first operand is our B, its second
// our A, and its m x n result (n rows of C) is our C. With m, n, k our GemmShape's:
//   first operand  = B: op N, stored n x k (ld n) unless transpose_b: op T, stored k x n (ld k);
//   second operand = A: op N, stored k x m (ld k) unless transpose_a: op T, stored m x k (ld m);
//   result: n x m, ld n.
struct ColumnMajorGemm {
  cublasOperation_t op_first, op_second;
  std::uint64_t first_rows, first_cols, second_rows, second_cols;
  std::int64_t ld_first, ld_second, ld_result;
};

ColumnMajorGemm column_major(const GemmShape& s) {
  ColumnMajorGemm g{};
  g.op_first = s.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.first_rows = static_cast<std::uint64_t>(s.transpose_b ? s.k : s.n);
  g.first_cols = static_cast<std::uint64_t>(s.transpose_b ? s.n : s.k);
  g.ld_first = static_cast<std::int64_t>(g.first_rows);
  g.op_second = s.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.second_rows = static_cast<std::uint64_t>(s.transpose_a ? s.m : s.k);
  g.second_cols = static_cast<std::uint64_t>(s.transpose_a ? s.k : s.m);
  g.ld_second = static_cast<std::int64_t>(g.second_rows);
  g.ld_result = s.n;
  return g;
}

std::string version_text(int version) {
  // CUDA encodes 12.8 as 12080.
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string shape_text(const GemmShape& s) {
  return std::to_string(s.batch) + "x" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(const MeasureOptions& options) : options_(options) {
    PPSIM_CUDA(cudaGetDeviceCount(&devices_));
    PPSIM_CUDA(cudaSetDevice(0));
    timer_ = std::make_unique<Timer>();
    PPSIM_CUBLAS(cublasCreate(&cublas_));
    PPSIM_CUBLAS(cublasSetStream(cublas_, timer_->stream()));
    PPSIM_CUBLAS(cublasLtCreate(&lt_));
    workspace_ = DeviceBuffer(kWorkspaceBytes);
    int l2 = 0;
    PPSIM_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    flush_ = DeviceBuffer(std::max<std::size_t>(2 * static_cast<std::size_t>(l2), std::size_t{8} << 20));
  }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;
  ~CudaBackend() override {
    cublasLtDestroy(lt_);
    cublasDestroy(cublas_);
  }

  std::string name() const override { return "cuda"; }

  DeviceInfo device_info() override {
    cudaDeviceProp prop{};
    PPSIM_CUDA(cudaGetDeviceProperties(&prop, 0));
    DeviceInfo info;
    info.name = prop.name;
    info.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
    info.devices = devices_;
    auto attribute = [](cudaDeviceAttr attr, const char* call) {
      int value = 0;
      check_cuda(cudaDeviceGetAttribute(&value, attr, 0), call);
      return std::int64_t{value};
    };
    int driver = 0, runtime = 0;
    PPSIM_CUDA(cudaDriverGetVersion(&driver));
    PPSIM_CUDA(cudaRuntimeGetVersion(&runtime));
    info.details.emplace_back("compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor));
    info.details.emplace_back("sm_count", std::int64_t{prop.multiProcessorCount});
    info.details.emplace_back("l2_cache_bytes", std::int64_t{prop.l2CacheSize});
    info.details.emplace_back("sm_clock_max_khz",
                              attribute(cudaDevAttrClockRate, "cudaDeviceGetAttribute(cudaDevAttrClockRate)"));
    info.details.emplace_back("memory_clock_max_khz", attribute(cudaDevAttrMemoryClockRate,
                                                                "cudaDeviceGetAttribute(cudaDevAttrMemoryClockRate)"));
    info.details.emplace_back("memory_bus_bits", attribute(cudaDevAttrGlobalMemoryBusWidth,
                                                           "cudaDeviceGetAttribute(cudaDevAttrGlobalMemoryBusWidth)"));
    info.details.emplace_back("pci_bus_id", std::int64_t{prop.pciBusID});
    info.details.emplace_back("driver_cuda_version", version_text(driver));
    info.details.emplace_back("runtime_cuda_version", version_text(runtime));
    info.details.emplace_back("cublaslt_version", static_cast<std::int64_t>(cublasLtGetVersion()));
    info.details.emplace_back("gpus_in_node", std::int64_t{devices_});
#ifdef PPSIM_CALIBRATE_HAVE_NCCL
    info.details.emplace_back("nccl_version", std::int64_t{NcclCollectives::version()});
#endif
    return info;
  }

  std::string method() const override {
    return "CUDA events around each run on one stream; " + std::to_string(options_.warmup) +
           " warm-up runs, then the median of " + std::to_string(options_.min_runs) + " to " +
           std::to_string(options_.max_runs) + " timed runs; the L2 cache flushed (a " +
           std::to_string(flush_.bytes() >> 20) +
           " MiB memset) before each run on GPU 0; inputs random and non-zero; GEMMs: cuBLASLt (heuristic's first "
           "algorithm, " +
           std::to_string(kWorkspaceBytes >> 20) +
           " MiB workspace) for single products, cublasGemmStridedBatchedEx for attention's per-head products, FP32 "
           "accumulation; memory-bound kernels: ppsim's own bf16 kernels with FP32 math; no clock or device setting "
           "changed";
  }

  int element_bytes() const override { return 2; }

  Spread gemm(const GemmShape& shape, Precision precision) override {
    const GemmTypes types = gemm_types(precision);
    const auto elements = [&](std::int64_t rows, std::int64_t cols) {
      return static_cast<std::size_t>(shape.batch * rows * cols);
    };
    const std::size_t a_elements = elements(shape.m, shape.k);
    const std::size_t b_elements = elements(shape.k, shape.n);
    const std::size_t c_elements = elements(shape.m, shape.n);
    require_memory((a_elements + b_elements + c_elements) * types.bytes, "GEMM " + shape_text(shape));
    DeviceBuffer a(a_elements * types.bytes), b(b_elements * types.bytes), c(c_elements * types.bytes);
    fill(a, a_elements, types, 11);
    fill(b, b_elements, types, 12);
    PPSIM_CUDA(cudaStreamSynchronize(timer_->stream()));

    const ColumnMajorGemm g = column_major(shape);
    const float alpha = 1.0f, beta = 0.0f;
    if (shape.batch > 1) {
      const long long stride_first = static_cast<long long>(shape.k * shape.n);
      const long long stride_second = static_cast<long long>(shape.m * shape.k);
      const long long stride_result = static_cast<long long>(shape.m * shape.n);
      return time([&] {
        PPSIM_CUBLAS(cublasGemmStridedBatchedEx(cublas_, g.op_first, g.op_second, static_cast<int>(shape.n),
                                                static_cast<int>(shape.m), static_cast<int>(shape.k), &alpha, b.get(),
                                                types.data, static_cast<int>(g.ld_first), stride_first, a.get(),
                                                types.data, static_cast<int>(g.ld_second), stride_second, &beta,
                                                c.get(), types.data, static_cast<int>(g.ld_result), stride_result,
                                                static_cast<int>(shape.batch), types.compute, CUBLAS_GEMM_DEFAULT));
      });
    }

    cublasLtMatmulDesc_t raw_desc = nullptr;
    PPSIM_CUBLAS(cublasLtMatmulDescCreate(&raw_desc, types.compute, CUDA_R_32F));
    const MatmulDesc desc(raw_desc);
    PPSIM_CUBLAS(
        cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_TRANSA, &g.op_first, sizeof g.op_first));
    PPSIM_CUBLAS(
        cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_TRANSB, &g.op_second, sizeof g.op_second));
    auto layout = [&](std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
      cublasLtMatrixLayout_t raw = nullptr;
      PPSIM_CUBLAS(cublasLtMatrixLayoutCreate(&raw, types.data, rows, cols, ld));
      return MatrixLayout(raw);
    };
    const MatrixLayout first = layout(g.first_rows, g.first_cols, g.ld_first);
    const MatrixLayout second = layout(g.second_rows, g.second_cols, g.ld_second);
    const MatrixLayout result =
        layout(static_cast<std::uint64_t>(shape.n), static_cast<std::uint64_t>(shape.m), g.ld_result);
    cublasLtMatmulPreference_t raw_preference = nullptr;
    PPSIM_CUBLAS(cublasLtMatmulPreferenceCreate(&raw_preference));
    const MatmulPreference preference(raw_preference);
    const std::uint64_t workspace_bytes = kWorkspaceBytes;
    PPSIM_CUBLAS(cublasLtMatmulPreferenceSetAttribute(preference.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &workspace_bytes, sizeof workspace_bytes));
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    PPSIM_CUBLAS(cublasLtMatmulAlgoGetHeuristic(lt_, desc.get(), first.get(), second.get(), result.get(), result.get(),
                                                preference.get(), 1, &heuristic, &found));
    if (found == 0) {
      throw std::runtime_error("cublasLtMatmulAlgoGetHeuristic found no algorithm for GEMM " + shape_text(shape) +
                               " in " + std::string(precision_name(precision)));
    }
    return time([&] {
      PPSIM_CUBLAS(cublasLtMatmul(lt_, desc.get(), &alpha, b.get(), first.get(), a.get(), second.get(), &beta, c.get(),
                                  result.get(), c.get(), result.get(), &heuristic.algo, workspace_.get(),
                                  kWorkspaceBytes, timer_->stream()));
    });
  }

  Spread memory_kernel(MemoryKernel kernel, const MemoryShape& shape) override {
    const std::int64_t n = shape.elements();
    cuda::MemoryKernelBuffers buffers;
    std::vector<DeviceBuffer> owned;
    const cudaStream_t stream = timer_->stream();
    auto bf16_buffer = [&](std::int64_t count, std::uint64_t seed) {
      owned.emplace_back(static_cast<std::size_t>(count) * sizeof(cuda::bf16));
      cuda::fill_random(owned.back().as<cuda::bf16>(), count, seed, stream);
      return owned.back().as<cuda::bf16>();
    };
    auto f32_buffer = [&](std::int64_t count, std::uint64_t seed, bool positive) {
      owned.emplace_back(static_cast<std::size_t>(count) * sizeof(float));
      cuda::fill_random(owned.back().as<float>(), count, seed, positive, stream);
      return owned.back().as<float>();
    };
    require_memory(static_cast<std::size_t>(memory_kernel_bytes(kernel, shape, element_bytes())) + (1u << 20),
                   std::string(memory_kernel_name(kernel)));
    owned.reserve(6);
    if (kernel == MemoryKernel::kAdam) {
      buffers.param = f32_buffer(n, 21, false);
      buffers.grad = f32_buffer(n, 22, false);
      buffers.m = f32_buffer(n, 23, false);
      buffers.v = f32_buffer(n, 24, true);  // a second moment is non-negative
    } else {
      buffers.x = bf16_buffer(n, 25);
      if (kernel == MemoryKernel::kSwiglu || kernel == MemoryKernel::kSoftmaxBackward) buffers.x2 = bf16_buffer(n, 26);
      buffers.y = bf16_buffer(n, 27);
      buffers.gamma = bf16_buffer(shape.width, 28);
      buffers.beta = bf16_buffer(shape.width, 29);
    }
    PPSIM_CUDA(cudaStreamSynchronize(stream));
    return time([&] { cuda::launch_memory_kernel(kernel, shape, buffers, stream); });
  }

  std::vector<LinkSpec> links() override {
    std::vector<LinkSpec> links = {
        {LinkSpec::kDeviceToDevice, 0, 0, "d2d", true},
        {LinkSpec::kHostToDevice, 0, 0, "h2d", true},
        {LinkSpec::kDeviceToHost, 0, 0, "d2h", true},
    };
    for (int src = 0; src < devices_; ++src) {
      for (int dst = 0; dst < devices_; ++dst) {
        if (src == dst) continue;
        int can = 0;
        PPSIM_CUDA(cudaDeviceCanAccessPeer(&can, src, dst));
        links.push_back(
            {LinkSpec::kPeer, src, dst, "p2p " + std::to_string(src) + "->" + std::to_string(dst), can != 0});
      }
    }
    return links;
  }

  Spread link_copy(const LinkSpec& link, std::int64_t bytes) override {
    const auto size = static_cast<std::size_t>(bytes);
    switch (link.kind) {
      case LinkSpec::kDeviceToDevice: {
        require_memory(2 * size, "copy of " + std::to_string(bytes) + " bytes");
        DeviceBuffer src(size), dst(size);
        PPSIM_CUDA(cudaMemsetAsync(src.get(), 0x5a, size, timer_->stream()));
        return time([&] {
          PPSIM_CUDA(cudaMemcpyAsync(dst.get(), src.get(), size, cudaMemcpyDeviceToDevice, timer_->stream()));
        });
      }
      case LinkSpec::kHostToDevice:
      case LinkSpec::kDeviceToHost: {
        const bool to_device = link.kind == LinkSpec::kHostToDevice;
        PinnedBuffer host(size);
        DeviceBuffer device(size);
        PPSIM_CUDA(cudaMemsetAsync(device.get(), 0x5a, size, timer_->stream()));
        return time([&] {
          if (to_device) {
            PPSIM_CUDA(cudaMemcpyAsync(device.get(), host.get(), size, cudaMemcpyHostToDevice, timer_->stream()));
          } else {
            PPSIM_CUDA(cudaMemcpyAsync(host.get(), device.get(), size, cudaMemcpyDeviceToHost, timer_->stream()));
          }
        });
      }
      case LinkSpec::kPeer:
        return peer_copy(link, size);
    }
    return {};
  }

  // NCCL among the first 2, 4, 8 ... GPUs and among all of them (collectives.hpp); without NCCL in
  // the build, none, and the profile's collectives stay derived from its link figures.
  std::vector<int> collective_ranks() override {
    std::vector<int> ranks;
#ifdef PPSIM_CALIBRATE_HAVE_NCCL
    for (int n = 2; n <= devices_; n *= 2) ranks.push_back(n);
    if (devices_ > 2 && (devices_ & (devices_ - 1)) != 0) ranks.push_back(devices_);
#endif
    return ranks;
  }

  Spread collective(Collective op, int ranks, std::int64_t bytes) override {
#ifdef PPSIM_CALIBRATE_HAVE_NCCL
    if (!nccl_) nccl_ = std::make_unique<NcclCollectives>(options_);
    require_memory(2 * static_cast<std::size_t>(bytes), "a collective of " + std::to_string(bytes) + " bytes");
    return nccl_->time(op, ranks, bytes);
#else
    (void)op;
    (void)ranks;
    (void)bytes;
    return {};
#endif
  }

  std::vector<std::pair<std::string, InfoValue>> facts_after_run() override {
    // The SM clock seen after the run, warm: one spin of 2e7 cycles (about 10 ms) timed by events.
    constexpr long long kCycles = 20'000'000;
    const double seconds = timer_->time([&] { cuda::launch_clock_spin(kCycles, timer_->stream()); });
    std::vector<std::pair<std::string, InfoValue>> facts;
    if (seconds > 0) facts.emplace_back("sm_clock_mhz_seen", static_cast<double>(kCycles) / seconds / 1e6);
    return facts;
  }

 private:
  static constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;  // cuBLASLt's Hopper recommendation

  template <typename Op>
  Spread time(Op&& op) {
    return measure(options_, [&] {
      PPSIM_CUDA(cudaMemsetAsync(flush_.get(), ++flush_value_ & 0xff, flush_.bytes(), timer_->stream()));
      return timer_->time(op);
    });
  }

  void fill(const DeviceBuffer& buffer, std::size_t elements, const GemmTypes& types, std::uint64_t seed) {
    const auto n = static_cast<std::int64_t>(elements);
    if (types.bytes == 4) {
      cuda::fill_random(buffer.as<float>(), n, seed, false, timer_->stream());
    } else if (types.data == CUDA_R_16BF) {
      cuda::fill_random(buffer.as<cuda::bf16>(), n, seed, timer_->stream());
    } else {
      cuda::fill_random(buffer.as<__half>(), n, seed, timer_->stream());
    }
  }

  // Refuses an operation that cannot fit in free memory with a message naming it.
  void require_memory(std::size_t bytes, const std::string& what) {
    std::size_t free_bytes = 0, total_bytes = 0;
    PPSIM_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (bytes > free_bytes) {
      throw std::runtime_error(what + " needs " + std::to_string(bytes >> 20) + " MiB of GPU memory, " +
                               std::to_string(free_bytes >> 20) + " MiB are free");
    }
  }

  // Copies from GPU link.src to GPU link.dst, timed on a stream of the source GPU. Peer access, when
  // the pair has it, is enabled for the measurement and disabled after: it maps the peer's memory
  // into this process, it does not change a device setting.
  Spread peer_copy(const LinkSpec& link, std::size_t size) {
    DeviceBuffer dst;
    {
      const DeviceGuard on_dst(link.dst);
      dst = DeviceBuffer(size);
      PPSIM_CUDA(cudaMemset(dst.get(), 0, size));
      PPSIM_CUDA(cudaDeviceSynchronize());  // the memset ran on the default stream, not the timer's
    }
    const DeviceGuard on_src(link.src);
    DeviceBuffer src(size);
    PPSIM_CUDA(cudaMemset(src.get(), 0x5a, size));
    PPSIM_CUDA(cudaDeviceSynchronize());
    bool enabled_here = false;
    if (link.direct) {
      const cudaError_t status = cudaDeviceEnablePeerAccess(link.dst, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();  // clear the sticky-until-read error state of this non-error
      } else {
        check_cuda(status, "cudaDeviceEnablePeerAccess");
        enabled_here = true;
      }
    }
    Spread spread;
    {
      Timer timer;
      spread = measure(options_, [&] {
        return timer.time(
            [&] { PPSIM_CUDA(cudaMemcpyPeerAsync(dst.get(), link.dst, src.get(), link.src, size, timer.stream())); });
      });
    }
    if (enabled_here) PPSIM_CUDA(cudaDeviceDisablePeerAccess(link.dst));
    return spread;
  }

  MeasureOptions options_;
  int devices_ = 0;
  std::unique_ptr<Timer> timer_;
  cublasHandle_t cublas_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer workspace_;
  DeviceBuffer flush_;
  int flush_value_ = 0;
#ifdef PPSIM_CALIBRATE_HAVE_NCCL
  std::unique_ptr<NcclCollectives> nccl_;
#endif
};

}  // namespace

BackendEntry cuda_backend_entry() {
  return BackendEntry{
      .name = "cuda",
      .unavailable =
          [] {
            int devices = 0;
            const cudaError_t status = cudaGetDeviceCount(&devices);
            if (status != cudaSuccess) {
              return std::string("no usable CUDA device (cudaGetDeviceCount: ") + cudaGetErrorName(status) + ")";
            }
            return devices > 0 ? std::string() : std::string("no CUDA device found");
          },
      .create = [](bool quick) -> std::unique_ptr<Backend> {
        const MeasureOptions options =
            quick ? MeasureOptions{.warmup = 2, .min_runs = 5, .max_runs = 5, .budget_seconds = 0}
                  : MeasureOptions{.warmup = 5, .min_runs = 20, .max_runs = 200, .budget_seconds = 0.2};
        return std::make_unique<CudaBackend>(options);
      },
  };
}

}  // namespace ppsim::calibrate
