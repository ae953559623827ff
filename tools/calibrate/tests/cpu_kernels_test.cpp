// SPDX-License-Identifier: Apache-2.0
// The CPU backend's kernels compute what they claim (the timings would mean nothing otherwise), and
// the timing loop's statistics.
#include "tools/calibrate/cpu_collectives.hpp"
#include "tools/calibrate/cpu_kernels.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "tools/calibrate/measure.hpp"

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using ppsim::calibrate::GemmShape;
using ppsim::calibrate::MemoryKernel;
using ppsim::calibrate::MemoryShape;

namespace {

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace

TEST_CASE("The blocked GEMM equals the textbook triple loop for every layout and ragged size") {
  struct Size {
    std::int64_t m, n, k;
  };
  // Sizes on both sides of the micro-kernel (4 x 16) and the blocks (kc 256, mc 64, nc 1024).
  const Size size =
      GENERATE(values<Size>({{1, 1, 1}, {5, 17, 3}, {64, 64, 64}, {67, 130, 300}, {3, 1030, 5}, {70, 20, 513}}));
  const bool ta = GENERATE(false, true);
  const bool tb = GENERATE(false, true);
  const GemmShape shape{.m = size.m, .n = size.n, .k = size.k, .transpose_a = ta, .transpose_b = tb};
  INFO(size.m << "x" << size.n << "x" << size.k << " ta=" << ta << " tb=" << tb);
  const auto a = random_floats(static_cast<std::size_t>(size.m * size.k), 1);
  const auto b = random_floats(static_cast<std::size_t>(size.k * size.n), 2);
  std::vector<float> c(static_cast<std::size_t>(size.m * size.n), 42.0f);  // overwritten, not accumulated into
  ppsim::calibrate::cpu_gemm(shape, a.data(), b.data(), c.data());
  for (std::int64_t i = 0; i < size.m; ++i) {
    for (std::int64_t j = 0; j < size.n; ++j) {
      double expected = 0;
      for (std::int64_t p = 0; p < size.k; ++p) {
        const float av = ta ? a[p * size.m + i] : a[i * size.k + p];
        const float bv = tb ? b[j * size.k + p] : b[p * size.n + j];
        expected += static_cast<double>(av) * bv;
      }
      REQUIRE_THAT(c[i * size.n + j], WithinAbs(expected, 1e-4 * std::sqrt(static_cast<double>(size.k)) + 1e-5));
    }
  }
}

TEST_CASE("The CPU memory-bound kernels compute norms, activations, softmax and Adam") {
  const std::int64_t rows = 3, width = 50;
  const MemoryShape shape{rows, width};
  const auto n = static_cast<std::size_t>(rows * width);
  const auto x = random_floats(n, 3);
  const auto x2 = random_floats(n, 4);
  std::vector<float> y(n);
  const std::vector<float> ones(width, 1.0f), zeros(width, 0.0f);
  auto run = [&](MemoryKernel kernel, const std::vector<float>& in, const std::vector<float>& in2) {
    ppsim::calibrate::cpu_memory_kernel(kernel, shape, in.data(), in2.data(), y.data(), ones.data(), zeros.data(), {});
  };
  SECTION("copy") {
    run(MemoryKernel::kCopy, x, x2);
    CHECK(y == x);
  }
  SECTION("RMSNorm rows have unit root mean square") {
    run(MemoryKernel::kRmsNorm, x, x2);
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum_sq = 0;
      for (std::int64_t i = 0; i < width; ++i) sum_sq += y[r * width + i] * y[r * width + i];
      CHECK_THAT(std::sqrt(sum_sq / width), WithinRel(1.0, 1e-3));
    }
  }
  SECTION("LayerNorm rows have zero mean and unit variance") {
    run(MemoryKernel::kLayerNorm, x, x2);
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum = 0, sum_sq = 0;
      for (std::int64_t i = 0; i < width; ++i) {
        sum += y[r * width + i];
        sum_sq += y[r * width + i] * y[r * width + i];
      }
      CHECK_THAT(sum / width, WithinAbs(0.0, 1e-5));
      CHECK_THAT(sum_sq / width, WithinRel(1.0, 1e-3));
    }
  }
  SECTION("GELU and SwiGLU") {
    run(MemoryKernel::kGelu, x, x2);
    for (std::size_t i = 0; i < n; ++i) {
      const double v = x[i];
      CHECK_THAT(y[i], WithinAbs(0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v))), 1e-6));
    }
    run(MemoryKernel::kSwiglu, x, x2);
    for (std::size_t i = 0; i < n; ++i) CHECK_THAT(y[i], WithinAbs(x[i] / (1 + std::exp(-x[i])) * x2[i], 1e-6));
  }
  SECTION("softmax rows sum to 1, and its backward's rows to 0") {
    run(MemoryKernel::kSoftmaxForward, x, x2);
    const std::vector<float> probabilities = y;
    for (std::int64_t r = 0; r < rows; ++r) {
      CHECK_THAT(std::accumulate(y.begin() + r * width, y.begin() + (r + 1) * width, 0.0), WithinRel(1.0, 1e-5));
    }
    run(MemoryKernel::kSoftmaxBackward, probabilities, x2);
    for (std::int64_t r = 0; r < rows; ++r) {
      CHECK_THAT(std::accumulate(y.begin() + r * width, y.begin() + (r + 1) * width, 0.0), WithinAbs(0.0, 1e-6));
    }
  }
  SECTION("Adam moves every parameter against its gradient") {
    std::vector<float> param(n, 0.0f), m(n, 0.0f), v(n, 0.0f);
    ppsim::calibrate::cpu_memory_kernel(MemoryKernel::kAdam, shape, nullptr, nullptr, nullptr, nullptr, nullptr,
                                        {param.data(), x.data(), m.data(), v.data()});
    for (std::size_t i = 0; i < n; ++i) {
      // Step 1 with zero moments: the update is lr * g / |g| = 1e-4 against the gradient's sign.
      CHECK_THAT(param[i], WithinAbs(x[i] > 0 ? -1e-4 : 1e-4, 1e-6));
    }
  }
}

TEST_CASE("A spread is the min, the median and the max of the timed runs") {
  const auto odd = ppsim::calibrate::summarize({3, 1, 2});
  CHECK(odd.min == 1);
  CHECK(odd.median == 2);
  CHECK(odd.max == 3);
  CHECK(odd.runs == 3);
  CHECK(ppsim::calibrate::summarize({4, 1, 3, 2}).median == 2.5);
  CHECK(ppsim::calibrate::summarize({}).runs == 0);
}

TEST_CASE("The timing loop runs the warm-up untimed, then between min_runs and max_runs") {
  int calls = 0;
  const ppsim::calibrate::MeasureOptions options{.warmup = 2, .min_runs = 3, .max_runs = 10, .budget_seconds = 1.0};
  // Each run reports 0.25 s, so the budget of 1 s stops the loop after 4 timed runs.
  const auto spread = ppsim::calibrate::measure(options, [&] {
    ++calls;
    return 0.25;
  });
  CHECK(calls == 2 + 4);
  CHECK(spread.runs == 4);
  // Fast runs stop at max_runs.
  calls = 0;
  CHECK(ppsim::calibrate::measure(options, [&] { return ++calls, 1e-9; }).runs == 10);
  // Slow runs still reach min_runs.
  CHECK(ppsim::calibrate::measure(options, [] { return 5.0; }).runs == 3);
}

TEST_CASE("The CPU stand-in's ring collectives compute what NCCL's do") {
  const int ranks = GENERATE(2, 3, 4);
  const std::int64_t chunk = 5;
  const std::int64_t elements = chunk * ranks;
  INFO(ranks << " ranks");
  ppsim::calibrate::CpuCollectiveGroup group(ranks, elements);
  auto reset = [&] {
    for (int r = 0; r < ranks; ++r) group.fill(r, 100.0f * static_cast<float>(r));  // rank r: 100r, 100r + 1, ...
  };
  // Element i summed over the ranks: sum_r (100 r + i) = 100 n(n-1)/2 + n i.
  auto sum = [&](std::int64_t i) { return static_cast<float>(100 * ranks * (ranks - 1) / 2 + ranks * i); };
  reset();
  CHECK(group.run(ppsim::Collective::kAllReduce) > 0);
  for (int r = 0; r < ranks; ++r) {
    for (std::int64_t i = 0; i < elements; ++i) CHECK(group.data(r)[static_cast<std::size_t>(i)] == sum(i));
  }
  reset();
  group.run(ppsim::Collective::kReduceScatter);
  for (int r = 0; r < ranks; ++r) {
    const std::int64_t owned = (r + 1) % ranks;  // the chunk rank r ends with
    for (std::int64_t i = owned * chunk; i < (owned + 1) * chunk; ++i) {
      CHECK(group.data(r)[static_cast<std::size_t>(i)] == sum(i));
    }
  }
  // All-gather spreads each rank's owned chunk (r + 1) mod n: afterwards every rank holds every
  // chunk as its owner had it.
  reset();
  group.run(ppsim::Collective::kAllGather);
  for (int r = 0; r < ranks; ++r) {
    for (std::int64_t i = 0; i < elements; ++i) {
      const std::int64_t owner = (i / chunk + ranks - 1) % ranks;
      CHECK(group.data(r)[static_cast<std::size_t>(i)] == 100.0f * static_cast<float>(owner) + static_cast<float>(i));
    }
  }
  reset();
  group.run(ppsim::Collective::kAllToAll);
  for (int r = 0; r < ranks; ++r) {
    for (int j = 0; j < ranks; ++j) {
      for (std::int64_t i = 0; i < chunk; ++i) {
        // Slot j of rank r's output is chunk r of rank j's input.
        CHECK(group.output(r)[static_cast<std::size_t>(j * chunk + i)] ==
              100.0f * static_cast<float>(j) + static_cast<float>(r * chunk + i));
      }
    }
  }
}
