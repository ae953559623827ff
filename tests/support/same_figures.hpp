// SPDX-License-Identifier: Apache-2.0
#pragma once
// Two results whose figures must agree exactly (the engine's two algorithms, a generated run and a
// stored one, the sweep's closed forms and a simulation): no tolerance, since each side does the
// same floating-point operations in the same order, or only exact ones.

#include <catch2/catch.hpp>

#include "sim/result.hpp"

namespace ppsim::test {

// The figures a sweep point reads: the totals, and per device busy, idle, ops and peaks.
inline void check_same_summary(const Result& a, const Result& b) {
  CHECK(a.p == b.p);
  CHECK(a.m == b.m);
  CHECK(a.stages == b.stages);
  CHECK(a.makespan == b.makespan);
  CHECK(a.bubble_ratio == b.bubble_ratio);
  CHECK(a.bubble_overhead == b.bubble_overhead);
  CHECK(a.comm_ratio == b.comm_ratio);
  CHECK(a.total_busy == b.total_busy);
  CHECK(a.compute_ops == b.compute_ops);
  CHECK(a.messages == b.messages);
  REQUIRE(a.per_device.size() == b.per_device.size());
  for (std::size_t d = 0; d < a.per_device.size(); ++d) {
    INFO("device " << d);
    const DeviceFigures& x = a.per_device[d];
    const DeviceFigures& y = b.per_device[d];
    CHECK(x.busy == y.busy);
    CHECK(x.idle == y.idle);
    CHECK(x.bubble_ratio == y.bubble_ratio);
    CHECK(x.ops == y.ops);
    CHECK(x.peak_stashed == y.peak_stashed);
    CHECK(x.peak_activation_bytes == y.peak_activation_bytes);
    CHECK(x.peak_memory_bytes == y.peak_memory_bytes);
    CHECK(x.static_bytes == y.static_bytes);
  }
}

// Every figure: the summary's, and each device's times and phases, each stage's times, each link.
inline void check_same_figures(const Result& a, const Result& b) {
  check_same_summary(a, b);
  for (std::size_t d = 0; d < a.per_device.size() && d < b.per_device.size(); ++d) {
    INFO("device " << d);
    const DeviceFigures& x = a.per_device[d];
    const DeviceFigures& y = b.per_device[d];
    CHECK(x.start == y.start);
    CHECK(x.end == y.end);
    for (std::size_t k = 0; k < 3; ++k) {
      INFO("phase " << k);
      CHECK(x.phases[k].ops == y.phases[k].ops);
      CHECK(x.phases[k].busy == y.phases[k].busy);
      CHECK(x.phases[k].start == y.phases[k].start);
      CHECK(x.phases[k].end == y.phases[k].end);
    }
  }
  REQUIRE(a.per_stage.size() == b.per_stage.size());
  for (std::size_t s = 0; s < a.per_stage.size(); ++s) {
    INFO("stage " << s);
    CHECK(a.per_stage[s].first_forward == b.per_stage[s].first_forward);
    CHECK(a.per_stage[s].gradient_start == b.per_stage[s].gradient_start);
    CHECK(a.per_stage[s].gradient_end == b.per_stage[s].gradient_end);
  }
  REQUIRE(a.per_link.size() == b.per_link.size());
  for (std::size_t l = 0; l < a.per_link.size(); ++l) {
    CHECK(a.per_link[l].src == b.per_link[l].src);
    CHECK(a.per_link[l].dst == b.per_link[l].dst);
    CHECK(a.per_link[l].messages == b.per_link[l].messages);
    CHECK(a.per_link[l].bytes == b.per_link[l].bytes);
    CHECK(a.per_link[l].busy == b.per_link[l].busy);
  }
}

}  // namespace ppsim::test
