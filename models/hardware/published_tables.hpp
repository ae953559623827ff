// SPDX-License-Identifier: Apache-2.0
#pragma once
// The presets' efficiencies, from kernel microbenchmarks that others measured and published on the
// same GPUs (no GPU has been lent to this project, so ppsim-calibrate has measured none). Each
// function cites what it takes; the citations also go to the profile's `sources`, which every
// result names ("published microbenchmarks (N sources)"). Nothing here is fitted to a training run's
// step time: end-to-end runs are for checking (docs/validation.md), kernels for calibrating.
//
// What is still assumed is said where it is: the ramp of small memory-bound kernels below the
// smallest published size, and the link tables' ramp below 64 MiB.

#include <string>
#include <vector>

#include "models/hardware/efficiency.hpp"
#include "models/hardware/gemm_model.hpp"

namespace ppsim {

enum class PublishedGpu { kA100, kH100, kH200, kB200, kMI300X };

// The shape model of GEMMs (gemm_model.hpp) with each precision's peak fraction solved from the
// GPU's best published cuBLAS point (tests/gemm_model_test.cpp re-solves them and checks every
// other published point against the model).
GemmModel published_gemm_model(PublishedGpu gpu);

// Memory-bound kernels by bytes moved: a LayerNorm's achieved bandwidth at five sizes.
EfficiencyTable published_memory_table(PublishedGpu gpu);

// Fused causal attention, head dimension 128, by sequence length (fraction of the bf16 peak).
EfficiencyTable published_attention_forward(PublishedGpu gpu);
EfficiencyTable published_attention_backward(PublishedGpu gpu);

// Point-to-point and ring links by message bytes: NCCL's published large-message bandwidth as the
// top of the assumed ramp.
EfficiencyTable published_intra_link_table(PublishedGpu gpu);
EfficiencyTable published_inter_link_table(PublishedGpu gpu);

// NVLink SHARP inside a node: the all-reduce's large-message bus bandwidth and the smallest group
// NCCL runs it for; zero on a GPU whose switch has none.
struct NvlsFigures {
  double all_reduce_bus_bandwidth = 0;
  int min_ranks = 0;
};
NvlsFigures published_nvls(PublishedGpu gpu);

// The share of the benchmarks' clock a GPU sustains through training at its power limit.
double published_sustained_clock(PublishedGpu gpu);

// The citations behind the tables above, one string each.
std::vector<std::string> published_sources(PublishedGpu gpu);

}  // namespace ppsim
