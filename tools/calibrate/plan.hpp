// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a calibration run measures: the GEMM shapes a model's layer runs under a tensor-parallel
// layout (or a generic grid when no model is given), the memory-bound kernels over a size sweep and
// at the layer's own sizes, and the message sizes of the link sweep. Pure functions of the inputs,
// so tests check the shapes against the layer's FLOP count without timing anything.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/transformer/architecture.hpp"
#include "tools/calibrate/backend.hpp"

namespace ppsim::calibrate {

// The three passes of a layer as zero-bubble schedules split them (DESIGN.md): forward, the
// backward's input gradient, the weight gradient.
enum class Pass { kForward, kInputGrad, kWeightGrad };
std::string_view pass_name(Pass pass);  // "F", "I", "W"

struct PlannedGemm {
  std::string label;  // "qkv", "attention_out", "mlp_up_gate", "mlp_down", "lm_head", "scores", ..., "grid"
  Pass pass = Pass::kForward;
  GemmShape shape;
  bool attention = false;  // a batched per-head product of attention (no weights)
};

struct PlannedMemory {
  MemoryKernel kernel = MemoryKernel::kCopy;
  MemoryShape shape;
  std::string group;        // "sweep" (the size sweep) or "layer" (the model's own sizes)
  double target_bytes = 0;  // the sweep's nominal size; the layer group's own bytes
};

struct LayerLayout {
  std::int64_t seq = 0;
  std::int64_t micro_batch = 0;
  int tensor_parallel = 1;  // t
};

// Empty when the layout fits the architecture, else what is wrong (t must divide the query heads,
// the KV heads and the MLP width; sizes must be positive), without naming a flag.
std::string check_layout(const Architecture& arch, const LayerLayout& layout);

// The GEMMs of one transformer layer on one tensor-parallel rank, for F, I and W, in the layout of
// Megatron-LM's column- and row-parallel linear layers (Shoeybi et al. 2019): QKV and the MLP's
// first GEMM split their output over t, the attention output projection and the MLP's last GEMM
// split their input. Weights are stored in x out, so with T = seq * micro_batch tokens a linear
// layer runs F: Y[T x out] = X . W; I: dX[T x in] = dY . W^T; W: dW[in x out] = X^T . dY.
// Attention adds per-head batched products over b * heads / t heads: F scores Q.K^T and context
// P.V; I their four gradients (dP = dO.V^T, dV = P^T.dO, dQ = dS.K, dK = dS^T.Q). The gated MLP's
// gate and up projections are one fused GEMM of width 2f, as Megatron-LM runs them.
// Precondition: check_layout(arch, layout) is empty.
std::vector<PlannedGemm> plan_layer_gemms(const Architecture& arch, const LayerLayout& layout);

// The LM head (h x vocab, split over t by vocabulary as Megatron-LM does; ceil(vocab / t) columns
// per rank) for F, I and W.
std::vector<PlannedGemm> plan_lm_head_gemms(const Architecture& arch, const LayerLayout& layout);

// The attention products alone, for `heads` heads of size `head_dim` over `seq` tokens.
std::vector<PlannedGemm> plan_attention_gemms(std::int64_t heads, std::int64_t seq, std::int64_t head_dim);

// A generic grid: every size d gives a d x d x d GEMM in the F, I and W layouts.
std::vector<PlannedGemm> plan_grid_gemms(const std::vector<std::int64_t>& dims);

// The sizes of one run: the generic grid, the memory sweep, the link sweep and the generic
// attention shape. They differ by backend (a CPU core is ~1000x slower than a GPU) and --quick.
struct PlanScale {
  std::vector<std::int64_t> gemm_dims;
  std::vector<double> memory_bytes;      // nominal bytes moved per kernel
  std::vector<std::int64_t> link_bytes;  // message sizes
  std::int64_t attention_heads = 0;      // generic attention (no model): heads, head size, seq cap
  std::int64_t attention_head_dim = 0;
  std::int64_t attention_max_seq = 0;
  std::int64_t default_norm_width = 0;  // row width of norms without a model
};
PlanScale plan_scale(std::string_view backend, bool quick);

// The memory-bound kernels of the sweep: every kernel at every nominal size, rows of `norm_width`
// for the norms, `softmax_width` for the softmaxes (fewer when the size holds less than one row).
std::vector<PlannedMemory> plan_memory_sweep(const std::vector<double>& target_bytes, std::int64_t norm_width,
                                             std::int64_t softmax_width, int element_bytes);

// The memory-bound kernels of one layer at its own sizes on one rank: the norm ([T x h]), the MLP
// activation (GELU on [T x f/t] or SwiGLU producing [T x f/t]), the attention softmax forward and
// backward ([b * heads/t * s rows x s]), and the Adam update of the layer's parameter shard.
std::vector<PlannedMemory> plan_layer_memory(const Architecture& arch, const LayerLayout& layout, int element_bytes);

struct CalibrationPlan {
  std::vector<Precision> precisions;  // bf16 first: the profile's GEMM table is bf16's
  std::vector<PlannedGemm> gemms;
  std::vector<PlannedMemory> memory;
  std::vector<std::int64_t> link_bytes;
};

// Everything one run measures: the model's layer, LM head and layer-sized memory kernels when a
// model is given, else the generic grid and generic attention; always the memory and link sweeps.
CalibrationPlan make_plan(const std::optional<Architecture>& model, const LayerLayout& layout,
                          const std::vector<Precision>& precisions, const PlanScale& scale, int element_bytes);

}  // namespace ppsim::calibrate
