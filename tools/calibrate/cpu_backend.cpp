// SPDX-License-Identifier: Apache-2.0
#include "tools/calibrate/cpu_backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tools/calibrate/cpu_collectives.hpp"
#include "tools/calibrate/cpu_kernels.hpp"
#include "tools/calibrate/measure.hpp"

namespace ppsim::calibrate {
namespace {

// Non-zero values in [-1, -0.1] u [0.1, 1] from a hash of the index (SplitMix64's finalizer), so
// large buffers fill fast and the same seed gives the same data. Zeros are avoided because some
// hardware and libraries take shortcuts on them.
float random_value(std::uint64_t index, std::uint64_t seed) {
  std::uint64_t z = index + seed * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const float unit = static_cast<float>(z >> 40) / static_cast<float>(1ULL << 24);  // [0, 1)
  const float magnitude = 0.1f + 0.9f * unit;
  return (z & 1) ? magnitude : -magnitude;
}

// Compiler barriers, as benchmark libraries use them: `escape` makes a buffer visible to code the
// optimizer cannot see, and `clobber` says that code may read all such memory now, so the stores of
// a timed kernel into a buffer nobody reads afterwards cannot be dropped as dead.
void escape(const void* p) { asm volatile("" : : "g"(p) : "memory"); }
void clobber() { asm volatile("" : : : "memory"); }

std::vector<float> random_buffer(std::int64_t elements, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(elements));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = random_value(i, seed);
  return v;
}

// The first "key : value" line of /proc/cpuinfo, or "".
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    return value;
  }
  return {};
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const CpuBackendOptions& options) : options_(options) {
    flush_.resize(static_cast<std::size_t>(options_.cache_flush_bytes / sizeof(float)));
  }

  std::string name() const override { return "cpu"; }

  DeviceInfo device_info() override {
    DeviceInfo info;
    info.name = cpuinfo_field("model name");
    if (info.name.empty()) info.name = "unknown CPU";
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page_size > 0) info.memory_bytes = std::int64_t{pages} * page_size;
    info.devices = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    info.details.emplace_back("threads_used", std::int64_t{1});
    info.details.emplace_back("hardware_threads", std::int64_t{info.devices});
    const std::string mhz = cpuinfo_field("cpu MHz");
    if (!mhz.empty()) info.details.emplace_back("clock_mhz_seen", std::stod(mhz));
#ifdef _SC_LEVEL3_CACHE_SIZE
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0) info.details.emplace_back("l3_cache_bytes", std::int64_t{l3});
#endif
    info.details.emplace_back("compiler", std::string(__VERSION__));
    return info;
  }

  std::string method() const override {
    std::string m =
        "one thread, FP32 arithmetic for every precision; std::chrono::steady_clock around each run; "
        "warm-up runs, then the median of the timed runs; inputs random and non-zero";
    m += options_.cache_flush_bytes > 0
             ? "; " + std::to_string(options_.cache_flush_bytes >> 20) + " MiB written between runs to flush the caches"
             : "; caches not flushed between runs (--quick)";
    return m;
  }

  int element_bytes() const override { return 4; }

  Spread gemm(const GemmShape& shape, Precision /*precision*/) override {
    const std::vector<float> a = random_buffer(shape.m * shape.k * shape.batch, 1);
    const std::vector<float> b = random_buffer(shape.k * shape.n * shape.batch, 2);
    std::vector<float> c(static_cast<std::size_t>(shape.m * shape.n * shape.batch));
    escape(c.data());
    return time([&] {
      for (std::int64_t i = 0; i < shape.batch; ++i) {
        cpu_gemm(shape, a.data() + i * shape.m * shape.k, b.data() + i * shape.k * shape.n,
                 c.data() + i * shape.m * shape.n);
      }
    });
  }

  Spread memory_kernel(MemoryKernel kernel, const MemoryShape& shape) override {
    const std::int64_t n = shape.elements();
    std::vector<float> x = random_buffer(n, 3);
    std::vector<float> x2 = random_buffer(n, 4);
    std::vector<float> y(static_cast<std::size_t>(n));
    const std::vector<float> gamma = random_buffer(shape.width, 5);
    const std::vector<float> beta = random_buffer(shape.width, 6);
    escape(y.data());
    std::vector<float> moment1, moment2;
    AdamBuffers adam;
    if (kernel == MemoryKernel::kAdam) {
      moment1 = random_buffer(n, 7);
      moment2 = random_buffer(n, 8);
      escape(moment1.data());
      escape(moment2.data());
      for (float& v : moment2) v = v * v;  // a second moment is non-negative
      adam = {y.data(), x.data(), moment1.data(), moment2.data()};
      std::memcpy(y.data(), x2.data(), static_cast<std::size_t>(n) * sizeof(float));
    }
    return time(
        [&] { cpu_memory_kernel(kernel, shape, x.data(), x2.data(), y.data(), gamma.data(), beta.data(), adam); });
  }

  std::vector<LinkSpec> links() override {
    return {LinkSpec{.kind = LinkSpec::kDeviceToDevice, .src = 0, .dst = 0, .label = "memcpy"}};
  }

  Spread link_copy(const LinkSpec& /*link*/, std::int64_t bytes) override {
    std::vector<char> src(static_cast<std::size_t>(bytes));
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 131 + 7);
    std::vector<char> dst(src.size(), 1);
    escape(dst.data());
    return time([&] { std::memcpy(dst.data(), src.data(), src.size()); });
  }

  // The stand-in for NCCL (cpu_collectives.hpp): 2 threads, and 4 where the CPU has 4 hardware
  // threads, so that no rank waits for a core.
  std::vector<int> collective_ranks() override {
    std::vector<int> ranks{2};
    if (std::thread::hardware_concurrency() >= 4) ranks.push_back(4);
    return ranks;
  }

  Spread collective(Collective op, int ranks, std::int64_t bytes) override {
    CpuCollectiveGroup group(ranks, bytes / 4);
    return measure(options_.measure, [&] {
      flush_caches();
      return group.run(op);
    });
  }

 private:
  template <typename Op>
  Spread time(Op&& op) {
    return measure(options_.measure, [&] {
      flush_caches();
      const auto start = std::chrono::steady_clock::now();
      op();
      clobber();
      const auto stop = std::chrono::steady_clock::now();
      return std::chrono::duration<double>(stop - start).count();
    });
  }

  void flush_caches() {
    if (flush_.empty()) return;
    ++flush_value_;
    escape(flush_.data());
    std::fill(flush_.begin(), flush_.end(), flush_value_);
    clobber();
  }

  CpuBackendOptions options_;
  std::vector<float> flush_;
  float flush_value_ = 0;
};

}  // namespace

std::int64_t default_cpu_cache_flush_bytes() {
  long llc = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
  llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  if (llc <= 0) return std::int64_t{64} << 20;
  // Capped: virtual machines sometimes report the host's whole cache, and a flush larger than a
  // few hundred MiB only slows the run down.
  return std::min(2 * std::int64_t{llc}, std::int64_t{256} << 20);
}

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

BackendEntry cpu_backend_entry() {
  return BackendEntry{
      .name = "cpu",
      .unavailable = [] { return std::string(); },
      .create =
          [](bool quick) {
            CpuBackendOptions options;
            if (quick) {
              options.measure = MeasureOptions{.warmup = 1, .min_runs = 3, .max_runs = 3, .budget_seconds = 0};
            } else {
              options.measure = MeasureOptions{.warmup = 1, .min_runs = 5, .max_runs = 50, .budget_seconds = 0.3};
              options.cache_flush_bytes = default_cpu_cache_flush_bytes();
            }
            return make_cpu_backend(options);
          },
  };
}

}  // namespace ppsim::calibrate
