// SPDX-License-Identifier: Apache-2.0
#pragma once
// Achieved fraction of a hardware peak as a function of the size of one operation: FLOPs of one
// GEMM, bytes moved by one memory-bound kernel, bytes of one message. Small operations cannot fill
// the machine (too few thread blocks, launch and protocol overheads), so the fraction rises with
// size and saturates; the table records that curve at a few sizes and interpolates between them.
//
// Interpolation is linear in log(size) because the sizes that matter span many decades (a 4 KB
// message to a 1 GB buffer, a 1e8 to a 1e13 FLOP GEMM) and measured efficiency curves look roughly
// piecewise linear on a log axis (e.g. NCCL bus-bandwidth sweeps, cuBLAS size sweeps).

#include <span>
#include <vector>

#include "models/units.hpp"

namespace ppsim {

struct EfficiencyPoint {
  double size = 0;      // > 0, in the table's unit (FLOPs or bytes)
  double fraction = 0;  // achieved fraction of peak, in (0, 1]

  friend bool operator==(const EfficiencyPoint&, const EfficiencyPoint&) = default;
};

// The value at x on the segment from (x0, y0) to (x1, y1), linear in log(x), x0 < x1 both > 0;
// exact at x0, and clamped to the segment's range against rounding. Shared by every size-keyed
// table (efficiency here, measured collectives' bus bandwidth in collectives.hpp).
double interpolate_in_log(double x0, double y0, double x1, double y1, double x);

class EfficiencyTable {
 public:
  // An empty table: every size achieves the full peak (fraction 1). This is the ideal machine, the
  // neutral default for callers that do not model efficiency.
  EfficiencyTable() = default;

  // Checks the points (at least one; sizes finite, > 0 and strictly increasing; fractions finite
  // and in (0, 1]) and keeps them. The error names the first bad point by index and value.
  static Parsed<EfficiencyTable> create(std::vector<EfficiencyPoint> points);

  // Fraction achieved at `size`: exact at the table's points, linear in log(size) between them,
  // clamped to the first / last fraction outside the table's range (sizes <= 0 and NaN count as
  // below the range). Monotone between points whenever the table's fractions are monotone.
  double at(double size) const;

  std::span<const EfficiencyPoint> points() const { return points_; }
  bool empty() const { return points_.empty(); }

  friend bool operator==(const EfficiencyTable&, const EfficiencyTable&) = default;

 private:
  std::vector<EfficiencyPoint> points_;
};

}  // namespace ppsim
