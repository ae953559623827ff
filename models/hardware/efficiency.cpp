// SPDX-License-Identifier: Apache-2.0
#include "models/hardware/efficiency.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

namespace ppsim {
namespace {

std::string describe(std::size_t index, const EfficiencyPoint& p) {
  std::ostringstream out;
  out << "point " << index << " (size " << p.size << ", fraction " << p.fraction << ")";
  return out.str();
}

}  // namespace

Parsed<EfficiencyTable> EfficiencyTable::create(std::vector<EfficiencyPoint> points) {
  Parsed<EfficiencyTable> result;
  if (points.empty()) {
    result.error = "an efficiency table needs at least one point";
    return result;
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const EfficiencyPoint& p = points[i];
    // Sizes must be > 0 because the interpolation takes their logarithm.
    if (!std::isfinite(p.size) || p.size <= 0) {
      result.error = describe(i, p) + ": size must be finite and > 0";
      return result;
    }
    if (i > 0 && !(p.size > points[i - 1].size)) {
      result.error = describe(i, p) + ": sizes must be strictly increasing, but the previous " +
                     describe(i - 1, points[i - 1]) + " is not smaller";
      return result;
    }
    // A fraction of 0 would make a time infinite; above 1 would beat the datasheet peak.
    if (!std::isfinite(p.fraction) || p.fraction <= 0 || p.fraction > 1) {
      result.error = describe(i, p) + ": fraction must be in (0, 1]";
      return result;
    }
  }
  result.ok = true;
  result.value.points_ = std::move(points);
  return result;
}

double EfficiencyTable::at(double size) const {
  if (points_.empty()) return 1.0;
  // `!(size > first)` also sends NaN and non-positive sizes to the first point.
  if (!(size > points_.front().size)) return points_.front().fraction;
  if (size >= points_.back().size) return points_.back().fraction;
  // First point with a size above `size`; it exists and is not the first (checked above).
  const auto upper = std::upper_bound(points_.begin(), points_.end(), size,
                                      [](double s, const EfficiencyPoint& p) { return s < p.size; });
  const EfficiencyPoint& hi = *upper;
  const EfficiencyPoint& lo = *(upper - 1);
  return interpolate_in_log(lo.size, lo.fraction, hi.size, hi.fraction, size);
}

double interpolate_in_log(double x0, double y0, double x1, double y1, double x) {
  // At x0 t is exactly 0, so a table's points come back exactly.
  const double t = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
  const double value = y0 + t * (y1 - y0);
  // Rounding can put y0 + 1 * (y1 - y0) one ulp beyond y1; clamping to the segment's range keeps
  // the curve monotone across the point where one segment hands over to the next.
  return std::clamp(value, std::min(y0, y1), std::max(y0, y1));
}

}  // namespace ppsim
