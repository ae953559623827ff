// SPDX-License-Identifier: Apache-2.0
#pragma once
// Time of one GEMM from its shape (M x K by K x N), not from its FLOPs alone. Two GEMMs with the same
// FLOPs can differ by 5x on a GPU: a skinny one (M = 64 tokens) streams its weight from HBM and is
// bound by memory; a small one fills a fraction of the SMs with tiles; a large one runs at what the
// tensor cores sustain. The model has three parts, each a fact about the GPU or its GEMM library
// rather than a free curve:
//
// - Tiles and waves. cuBLAS and CUTLASS compute C in tiles of `tile_rows` x `tile_cols`, one thread
//   block (CTA) per SM at a time. A GEMM of T = ceil(M/tr) * ceil(N/tc) tiles runs T / SMs waves;
//   Hopper's persistent, stream-K scheduled kernels spread the last partial wave over all SMs, so the
//   waves are max(1, T / SMs) rather than ceil(T / SMs). When T leaves SMs idle, the K loop is split
//   (split-K) into s parts, as long as each part keeps at least `min_split_k` of K: s is the largest
//   with T * s <= SMs. Each SM runs a tile's K loop at `peak_fraction` of its share of the dense
//   peak: compute = waves * 2 * tr * tc * (K / s) / (peak * peak_fraction / SMs).
// - Memory. A, B and C cross HBM at least once: (M*K + K*N) * element bytes + M*N * 2 bytes (bf16
//   output), at the profile's memory-bound efficiency for that many bytes.
// - Both overlap, but not perfectly near the ridge point, where the pipeline alternately waits on
//   loads and on the tensor cores: the time is the 4-norm (c^4 + m^4)^(1/4), which is the larger of
//   the two away from the ridge and up to 19% more at it. Plus `kernel_overhead` per GEMM: launch,
//   pipeline fill and the last tile's epilogue, which no wave hides.
//
// peak_fraction is the one measured input per precision: each preset takes it from a published
// microbenchmark's best point (a profile's `sources` name it), solved so that the model reproduces
// that point exactly (H200's bf16 is H100's, which the source says it equals); every other
// published point is a check (tests/gemm_model_test.cpp).

#include <map>
#include <string>
#include <string_view>

namespace ppsim {

struct GemmShape {
  double rows = 0;   // M: tokens
  double inner = 0;  // K
  double cols = 0;   // N
  // Batched GEMMs (attention's, one per sequence and head) fold the batch into the rows; each item
  // of the batch has its own K x N operand, which the memory traffic counts.
  double batch = 1;
  double flops() const { return 2 * rows * inner * cols; }
};

struct GemmModel {
  int sm_count = 0;        // 0: no shape model (the profile's FLOP-keyed tables time GEMMs)
  double tile_rows = 128;  // CTA tile, in output elements; either orientation is tried
  double tile_cols = 256;
  double min_split_k = 2048;      // split-K keeps at least this much of K per split
  double kernel_overhead = 3e-6;  // seconds per GEMM
  // Achieved fraction of the dense peak inside a tile's K loop, by precision ("bf16", "fp8", ...);
  // fp16 falls back to bf16, as both run the same tensor-core rate.
  std::map<std::string, double, std::less<>> peak_fraction;

  bool empty() const { return sm_count == 0; }
  // The fraction for `precision`, or 0 when the model has none (the caller then uses the tables).
  double fraction(std::string_view precision) const;

  // Seconds of the tiled compute alone and of the operand traffic alone (see above). With
  // `sms_taken` SMs busy elsewhere (an overlapped collective's), the tiles run on the others, each at
  // the same per-SM rate: more waves, and split-K fills fewer SMs.
  double compute_time(const GemmShape& shape, double peak_flops, double fraction, int sms_taken = 0) const;
  static double operand_bytes(const GemmShape& shape, std::string_view precision);
  // The whole GEMM: kernel_overhead + (compute^4 + memory^4)^(1/4); `memory_seconds` is the
  // operand traffic's time on the profile's memory model.
  double time(double compute_seconds, double memory_seconds) const;

  friend bool operator==(const GemmModel&, const GemmModel&) = default;
};

}  // namespace ppsim
