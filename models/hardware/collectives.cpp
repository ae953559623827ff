// SPDX-License-Identifier: Apache-2.0
#include "models/hardware/collectives.hpp"

#include "models/hardware/efficiency.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>

namespace ppsim {

std::string_view collective_name(Collective op) {
  switch (op) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kAllToAll:
      return "all_to_all";
  }
  return "all_reduce";
}

std::optional<Collective> parse_collective(std::string_view name) {
  for (const Collective op : kAllCollectives) {
    if (collective_name(op) == name) return op;
  }
  return std::nullopt;
}

double bus_factor(Collective op, int ranks) {
  if (ranks <= 1) return 0;
  const double share = static_cast<double>(ranks - 1) / ranks;
  return op == Collective::kAllReduce ? 2 * share : share;
}

Parsed<CollectiveTable> CollectiveTable::create(Collective op, int ranks, std::vector<BusBandwidthPoint> points) {
  Parsed<CollectiveTable> result;
  auto describe = [](std::size_t i, const BusBandwidthPoint& p) {
    std::ostringstream out;
    out << "point " << i << " (bytes " << p.bytes << ", bus bandwidth " << p.bandwidth << ")";
    return out.str();
  };
  if (ranks < 2) {
    result.error = "a collective needs at least 2 ranks, got " + std::to_string(ranks);
    return result;
  }
  if (points.empty()) {
    result.error = "a collective table needs at least one point";
    return result;
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const BusBandwidthPoint& p = points[i];
    if (!std::isfinite(p.bytes) || p.bytes <= 0) {
      result.error = describe(i, p) + ": bytes must be finite and > 0";
      return result;
    }
    if (i > 0 && !(p.bytes > points[i - 1].bytes)) {
      result.error = describe(i, p) + ": sizes must be strictly increasing";
      return result;
    }
    if (!std::isfinite(p.bandwidth) || p.bandwidth <= 0) {
      result.error = describe(i, p) + ": bus bandwidth must be finite and > 0";
      return result;
    }
  }
  result.ok = true;
  result.value.op_ = op;
  result.value.ranks_ = ranks;
  result.value.points_ = std::move(points);
  return result;
}

double CollectiveTable::bus_bandwidth(double bytes) const {
  if (!(bytes > points_.front().bytes)) return points_.front().bandwidth;
  if (bytes >= points_.back().bytes) return points_.back().bandwidth;
  const auto upper = std::upper_bound(points_.begin(), points_.end(), bytes,
                                      [](double b, const BusBandwidthPoint& p) { return b < p.bytes; });
  const BusBandwidthPoint& hi = *upper;
  const BusBandwidthPoint& lo = *(upper - 1);
  return interpolate_in_log(lo.bytes, lo.bandwidth, hi.bytes, hi.bandwidth, bytes);
}

double CollectiveTable::time(double bytes) const {
  if (!(bytes > 0)) return 0;
  // Below the smallest measured size a collective is latency-bound: no faster than that size.
  const double timed = std::max(bytes, points_.front().bytes);
  return timed * bus_factor(op_, ranks_) / bus_bandwidth(timed);
}

}  // namespace ppsim
