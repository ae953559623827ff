// SPDX-License-Identifier: Apache-2.0
#pragma once
// The shape of a decoder-only transformer, as model cards and papers state it, and the parameter
// count that follows from it. Pure data and pure functions: reading configs/models/*.json belongs to
// the config layer, so models/ stays free of JSON (tests keep the two in step, see
// tests/transformer_test.cpp).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ppsim {

struct Architecture {
  enum Norm { kLayerNorm, kRmsNorm };

  std::string name;
  int layers = 0;
  std::int64_t hidden = 0;      // h, the residual width
  int heads = 0;                // a, query heads; head size is hidden / heads
  int kv_heads = 0;             // grouped-query attention (Ainslie et al. 2023); == heads for MHA
  std::int64_t ffn_hidden = 0;  // inner MLP width (4h for GPT, e.g. 11008 for Llama-2 7B)
  bool gated_mlp = false;       // SwiGLU-style: gate and up projections, then down (3 matrices)
  std::int64_t vocab = 0;
  bool tied_embeddings = false;  // LM head shares the input embedding matrix
  Norm norm = kLayerNorm;        // LayerNorm has a scale and a bias, RMSNorm only a scale
  // Two fields beyond the brief's list, because GPT-style and Llama-style models differ there and the
  // parameter count needs them: GPT-2/3 and Megatron GPT have biases on every linear layer and
  // learned absolute position embeddings; Llama has neither (RoPE has no parameters).
  bool linear_biases = false;
  std::int64_t learned_positions = 0;  // rows of the learned position table; 0 for RoPE
  // Hidden and attention dropout probability the model trains with: 0 for Llama (Meta's training
  // recipe), 0.1 for the GPT-3-era models (Megatron-LM's default --hidden-dropout and
  // --attention-dropout). It adds the mask kernels and, above 0, the masks in the stash.
  double dropout = 0;
  std::string source;                  // where the numbers come from (paper table, model card)

  bool operator==(const Architecture&) const = default;
};

// Width of one attention head: hidden / heads.
std::int64_t head_size(const Architecture& arch);

// Parameters of one transformer layer: attention (Q and O are h x h; K and V are h x (kv_heads *
// head_size), which is the GQA saving), MLP (3 h f gated, 2 h f plain), two norms, and biases when
// the model has them.
std::int64_t layer_parameter_count(const Architecture& arch);

// Of those, the weights of the layer's linear layers (Q, K, V, O and the MLP's two or three
// matrices): no biases, no norms.
std::int64_t layer_linear_weight_count(const Architecture& arch);

// Whole model: token embedding, learned positions, all layers, the final norm, and a separate LM
// head (vocab x h) unless it is tied to the embedding.
std::int64_t parameter_count(const Architecture& arch);

// Built-in presets; configs/models/<name>.json holds the same data (a test checks they agree).
std::span<const Architecture> architecture_presets();

// The preset with this name, or nullptr.
const Architecture* find_architecture_preset(std::string_view name);

}  // namespace ppsim
