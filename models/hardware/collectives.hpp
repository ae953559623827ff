// SPDX-License-Identifier: Apache-2.0
#pragma once
// Collectives measured on a machine: NCCL-style bus bandwidth by message size, per operation and
// group size, as ppsim-calibrate writes them into a hardware profile ("collectives"). Where a
// profile has a table for a collective, the cost model times it from the table; otherwise it derives
// the collective as a ring over the link figures (pass_costs.hpp, ring_collective_time).
//
// Bus bandwidth is the convention of NVIDIA's nccl-tests (doc/PERFORMANCE.md): for a collective on
// a tensor of `bytes` (the whole buffer: an all-reduce's input, an all-gather's output, a
// reduce-scatter's input), algorithm bandwidth is bytes / time, and bus bandwidth is that times
// 2(n-1)/n for all-reduce and (n-1)/n for reduce-scatter, all-gather and all-to-all, which makes it
// comparable with the link's own speed whatever n is. So time = bytes * factor / bus_bandwidth.

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "models/units.hpp"

namespace ppsim {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kAllToAll };

inline constexpr Collective kAllCollectives[] = {Collective::kAllReduce, Collective::kReduceScatter,
                                                 Collective::kAllGather, Collective::kAllToAll};

// "all_reduce", "reduce_scatter", "all_gather", "all_to_all" (the profile's spelling).
std::string_view collective_name(Collective op);
std::optional<Collective> parse_collective(std::string_view name);

// nccl-tests' factor from algorithm to bus bandwidth for a group of `ranks` (>= 1; 0 for one rank).
double bus_factor(Collective op, int ranks);

struct BusBandwidthPoint {
  double bytes = 0;      // > 0: the whole tensor
  double bandwidth = 0;  // > 0: bus bandwidth, bytes/s

  friend bool operator==(const BusBandwidthPoint&, const BusBandwidthPoint&) = default;
};

class CollectiveTable {
 public:
  // Checks the points (at least one; bytes finite, > 0 and strictly increasing; bandwidths finite
  // and > 0) and the group (ranks >= 2). The error names the first bad point.
  static Parsed<CollectiveTable> create(Collective op, int ranks, std::vector<BusBandwidthPoint> points);

  Collective op() const { return op_; }
  int ranks() const { return ranks_; }
  std::span<const BusBandwidthPoint> points() const { return points_; }

  // Bus bandwidth at `bytes`: exact at the points, linear in log(bytes) between them, clamped to the
  // first / last point outside them (as EfficiencyTable interpolates).
  double bus_bandwidth(double bytes) const;
  // Seconds of the collective on a `bytes` tensor: bytes * bus_factor / bus_bandwidth(bytes); 0 for
  // an empty tensor. Below the smallest measured size it takes that size's time: small collectives
  // are latency-bound, so holding the bandwidth there would make them ever faster.
  double time(double bytes) const;

  friend bool operator==(const CollectiveTable&, const CollectiveTable&) = default;

 private:
  Collective op_ = Collective::kAllReduce;
  int ranks_ = 2;
  std::vector<BusBandwidthPoint> points_;
};

}  // namespace ppsim
