// SPDX-License-Identifier: Apache-2.0
#include "models/hardware/gemm_model.hpp"

#include <algorithm>
#include <cmath>

namespace ppsim {

double GemmModel::fraction(std::string_view precision) const {
  auto it = peak_fraction.find(precision);
  if (it == peak_fraction.end() && precision == "fp16") it = peak_fraction.find("bf16");
  return it == peak_fraction.end() ? 0.0 : it->second;
}

double GemmModel::compute_time(const GemmShape& shape, double peak_flops, double fraction, int sms_taken) const {
  if (!(shape.rows > 0 && shape.inner > 0 && shape.cols > 0)) return 0;
  const double per_sm = peak_flops * fraction / sm_count;
  // A collective never takes more than half the SMs (a profile of a small GPU stays sensible).
  const double sms = sm_count - std::clamp(sms_taken, 0, sm_count / 2);
  double best = 0;
  bool first = true;
  // Either orientation of the tile: a library picks the one that suits the shape.
  for (const auto& [tr, tc] : {std::pair{tile_rows, tile_cols}, std::pair{tile_cols, tile_rows}}) {
    const double tiles = std::ceil(shape.rows / tr) * std::ceil(shape.cols / tc);
    // Split-K fills the SMs a small tile count leaves idle, while each split keeps min_split_k of K.
    double splits = 1;
    if (tiles < sms) {
      const double by_sms = std::floor(sms / tiles);
      const double by_k = std::floor(shape.inner / min_split_k);
      splits = std::max(1.0, std::min(by_sms, by_k));
    }
    const double waves = std::max(1.0, tiles * splits / sms);
    const double seconds = waves * 2 * tr * tc * (shape.inner / splits) / per_sm;
    if (first || seconds < best) best = seconds;
    first = false;
  }
  return best;
}

double GemmModel::operand_bytes(const GemmShape& shape, std::string_view precision) {
  // FP8 GEMMs read 1-byte operands; every GEMM here writes a 16-bit output (Transformer Engine's FP8
  // GEMMs return bf16).
  const double element = precision == "fp8" ? 1 : precision == "fp32" || precision == "tf32" ? 4 : 2;
  return (shape.rows * shape.inner + shape.batch * shape.inner * shape.cols) * element + shape.rows * shape.cols * 2;
}

double GemmModel::time(double compute_seconds, double memory_seconds) const {
  const double c = compute_seconds;
  const double m = memory_seconds;
  // The 4-norm, computed scaled by the larger part so that nothing overflows or underflows.
  const double top = std::max(c, m);
  if (!(top > 0)) return kernel_overhead;
  const double a = c / top;
  const double b = m / top;
  return kernel_overhead + top * std::sqrt(std::sqrt(a * a * a * a + b * b * b * b));
}

}  // namespace ppsim
