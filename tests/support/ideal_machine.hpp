// SPDX-License-Identifier: Apache-2.0
#pragma once
// The transformer tests' machine and model: an ideal machine (empty efficiency tables achieve the
// full peak, zero latencies leave only bytes over bandwidth), so every time is an exact quotient of
// FLOPs or bytes, and a plain GPT layer whose counts papers tabulate.

#include <cstdint>

#include "models/hardware/profile.hpp"
#include "models/transformer/architecture.hpp"

namespace ppsim::test {

inline constexpr double kPeak = 1e15;    // FLOP/s
inline constexpr double kHbm = 2e12;     // bytes/s
inline constexpr double kNvlink = 4e11;  // bytes/s per direction
inline constexpr double kInfiniband = 5e10;

inline HardwareProfile ideal_machine() {
  HardwareProfile p;
  p.name = "ideal";
  p.dense_peak_flops = {{"bf16", kPeak}};
  p.memory_bandwidth = kHbm;
  p.memory_capacity = std::int64_t{80} << 30;
  p.devices_per_node = 8;
  p.intra_node_bandwidth = kNvlink;
  p.inter_node_bandwidth = kInfiniband;
  return p;
}

// A plain GPT model (MHA, 4h GeLU MLP, LayerNorm, biases, learned positions, tied head, no dropout).
inline Architecture gpt(int layers = 8) {
  return Architecture{.name = "gpt-test",
                      .layers = layers,
                      .hidden = 1024,
                      .heads = 16,
                      .kv_heads = 16,
                      .ffn_hidden = 4096,
                      .gated_mlp = false,
                      .vocab = 32000,
                      .tied_embeddings = true,
                      .norm = Architecture::kLayerNorm,
                      .linear_biases = true,
                      .learned_positions = 2048,
                      .source = "test"};
}

// A small Llama-style model (h = 1024, 8 heads of 128, SwiGLU 2048, RMSNorm, untied, no biases),
// the base of the MoE and attention tests' models.
inline Architecture swiglu(const char* name, int layers = 4) {
  return Architecture{.name = name, .layers = layers, .hidden = 1024, .heads = 8, .kv_heads = 8,
                      .ffn_hidden = 2048, .gated_mlp = true, .vocab = 32000, .norm = Architecture::kRmsNorm};
}

}  // namespace ppsim::test
