// SPDX-License-Identifier: Apache-2.0
#pragma once
// A Hugging Face transformers config.json as --model: the keys transformers' model configs use
// (num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads, intermediate_size,
// vocab_size, tie_word_embeddings, head_dim, and the MoE and MLA keys of Mixtral, Qwen2/3-MoE,
// DeepSeek-V3 and gpt-oss), mapped onto ppsim's architecture.

#include <nlohmann/json.hpp>
#include <string>

#include "models/transformer/architecture.hpp"

namespace ppsim {

// Whether `json` is a transformers config rather than ppsim's schema (configs/models/*.json).
bool is_hf_config(const nlohmann::json& json);

// The architecture; `origin` names the file in errors ("config.json: $.num_hidden_layers: ..."),
// `fallback_name` is the model's name when the config has no "_name_or_path". Keys that change the
// shape in a way ppsim does not model (Qwen's decoder_sparse_step above 1, mlp_only_layers) are
// refused; positional settings (rope_theta, rope_scaling, max_position_embeddings) have no
// parameters and no cost here, and are read past, as are tokens, dtypes and the rest.
Architecture architecture_from_hf_config(const nlohmann::json& json, const std::string& origin,
                                         const std::string& fallback_name);

}  // namespace ppsim
