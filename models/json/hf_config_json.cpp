// SPDX-License-Identifier: Apache-2.0
#include "models/json/hf_config_json.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "models/json/architecture_json.hpp"
#include "models/json/json_fields.hpp"

namespace ppsim {
namespace {

// transformers' model_type values of decoders with a gated (SwiGLU) MLP and RMSNorm, as ppsim's
// Llama-style presets are; the source of each is src/transformers/models/<type>/modeling_<type>.py.
constexpr std::array<std::string_view, 11> kLlamaLike = {"llama",     "mistral",   "mixtral",   "qwen2",
                                                         "qwen2_moe", "qwen3",     "qwen3_moe", "deepseek_v3",
                                                         "gpt_oss",   "granite",   "olmo2"};

bool present(const JsonFields& fields, std::string_view key) { return fields.has(key) && !fields.at(key).is_null(); }

// The first of `keys` the config has, or "".
std::string_view first_of(const JsonFields& fields, std::initializer_list<std::string_view> keys) {
  for (const std::string_view key : keys) {
    if (present(fields, key)) return key;
  }
  return {};
}

}  // namespace

bool is_hf_config(const nlohmann::json& json) {
  return json.is_object() && !json.contains("layers") &&
         (json.contains("num_hidden_layers") || json.contains("model_type") || json.contains("architectures"));
}

Architecture architecture_from_hf_config(const nlohmann::json& json, const std::string& origin,
                                         const std::string& fallback_name) {
  const JsonFields fields(json, origin, "$");
  constexpr std::int64_t kMax = std::int64_t{1} << 24;
  const std::string type = present(fields, "model_type") ? fields.string("model_type") : std::string();
  const bool llama_like = std::find(kLlamaLike.begin(), kLlamaLike.end(), type) != kLlamaLike.end();
  if (!llama_like) {
    fields.fail("model_type", "\"" + type + "\" is not a decoder ppsim reads from a transformers config (" +
                                  "llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek_v3, gpt_oss, "
                                  "granite, olmo2); write the model in ppsim's schema (configs/models)");
  }
  nlohmann::ordered_json out;
  out["name"] = present(fields, "_name_or_path") ? fields.string("_name_or_path") : fallback_name;
  out["layers"] = fields.integer("num_hidden_layers", 1, 100'000);
  const std::int64_t hidden = fields.integer("hidden_size", 1, kMax);
  const std::int64_t heads = fields.integer("num_attention_heads", 1, 1 << 16);
  out["hidden"] = hidden;
  out["heads"] = heads;
  out["kv_heads"] = present(fields, "num_key_value_heads") ? fields.integer("num_key_value_heads", 1, 1 << 16) : heads;
  out["ffn_hidden"] = fields.integer("intermediate_size", 1, kMax);
  out["gated_mlp"] = true;
  out["vocab"] = fields.integer("vocab_size", 1, kMax);
  // transformers' PretrainedConfig defaults to tied, but every model_type above sets its own default
  // false except where a checkpoint says otherwise.
  out["tied_embeddings"] = present(fields, "tie_word_embeddings") && fields.boolean("tie_word_embeddings");
  out["norm"] = "rmsnorm";
  // gpt-oss has biases on every linear layer; Llama's attention_bias puts them on Q, K, V and O, which
  // ppsim counts as linear_biases too; Qwen2's attention always has Q, K and V biases
  // (transformers' Qwen2Attention: q_proj, k_proj, v_proj bias=True, o_proj bias=False).
  const bool attention_bias = type == "gpt_oss" || (present(fields, "attention_bias") && fields.boolean("attention_bias"));
  out["linear_biases"] = attention_bias;
  if (!attention_bias && (type == "qwen2" || type == "qwen2_moe")) out["qkv_bias"] = true;
  out["learned_positions"] = 0;  // RoPE: rope_theta and rope_scaling have no parameters
  out["dropout"] = present(fields, "attention_dropout") ? fields.number_in("attention_dropout", 0, 0.999) : 0.0;
  if (present(fields, "head_dim") && type != "deepseek_v3") {
    const std::int64_t head_dim = fields.integer("head_dim", 1, kMax);
    // Written where it differs from hidden / heads, as the presets write it; Qwen3 always (its
    // presets name it).
    if (head_dim * heads != hidden || type == "qwen3_moe") out["head_dim"] = head_dim;
  }
  if (type == "qwen3" || type == "qwen3_moe") out["qk_norm"] = true;
  const std::string_view experts_key = first_of(fields, {"num_local_experts", "num_experts", "n_routed_experts"});
  if (!experts_key.empty() && fields.integer(experts_key, 0, 1 << 20) > 0) {
    nlohmann::ordered_json moe;
    moe["experts"] = fields.integer(experts_key, 1, 1 << 20);
    const std::string_view top_key = first_of(fields, {"num_experts_per_tok", "experts_per_token"});
    if (top_key.empty()) fields.fail("num_experts_per_tok", "an MoE config needs the experts per token");
    moe["top_k"] = fields.integer(top_key, 1, 1 << 20);
    // Mixtral and gpt-oss give each expert intermediate_size; Qwen's MoE and DeepSeek a separate width.
    moe["expert_ffn_hidden"] = present(fields, "moe_intermediate_size") ? fields.integer("moe_intermediate_size", 1, kMax)
                                                                       : out["ffn_hidden"].get<std::int64_t>();
    if (present(fields, "n_shared_experts") && fields.integer("n_shared_experts", 0, 1 << 16) > 0) {
      moe["shared_experts"] = fields.integer("n_shared_experts", 0, 1 << 16);
      moe["shared_expert_ffn_hidden"] = moe["expert_ffn_hidden"];
    } else if (present(fields, "shared_expert_intermediate_size") &&
               fields.integer("shared_expert_intermediate_size", 0, kMax) > 0) {
      // Qwen2-MoE: one shared expert of that width (its sigmoid gate, h parameters, is not counted).
      moe["shared_experts"] = 1;
      moe["shared_expert_ffn_hidden"] = fields.integer("shared_expert_intermediate_size", 1, kMax);
    }
    if (present(fields, "first_k_dense_replace") && fields.integer("first_k_dense_replace", 0, kMax) > 0) {
      moe["dense_layers"] = fields.integer("first_k_dense_replace", 0, kMax);
    }
    if (present(fields, "moe_layer_freq") && fields.integer("moe_layer_freq", 1, kMax) > 1) {
      moe["layer_freq"] = fields.integer("moe_layer_freq", 1, kMax);
    }
    // Qwen's rule puts MoE on layers with (i + 1) % step == 0, DeepSeek's (ppsim's) on i % freq == 0.
    if (present(fields, "decoder_sparse_step") && fields.integer("decoder_sparse_step", 1, kMax) > 1) {
      fields.fail("decoder_sparse_step", "above 1 is not modelled (MoE on every layer only); write the model in "
                                         "ppsim's schema with moe.layer_freq");
    }
    if (present(fields, "mlp_only_layers") && !fields.at("mlp_only_layers").empty()) {
      fields.fail("mlp_only_layers", "is not modelled: ppsim's dense layers are the first moe.dense_layers");
    }
    out["moe"] = moe;
  }
  if (present(fields, "kv_lora_rank")) {
    out["mla"] = {{"q_lora_rank", present(fields, "q_lora_rank") ? fields.integer("q_lora_rank", 0, kMax) : 0},
                  {"kv_lora_rank", fields.integer("kv_lora_rank", 1, kMax)},
                  {"qk_nope_head_dim", fields.integer("qk_nope_head_dim", 1, kMax)},
                  {"qk_rope_head_dim", fields.integer("qk_rope_head_dim", 1, kMax)},
                  {"v_head_dim", fields.integer("v_head_dim", 1, kMax)}};
  }
  if (present(fields, "num_nextn_predict_layers") && fields.integer("num_nextn_predict_layers", 0, 64) > 0) {
    out["mtp_layers"] = fields.integer("num_nextn_predict_layers", 0, 64);
  }
  // Sliding windows: gpt-oss's alternate layers; Mistral's and Qwen's every layer when enabled.
  if (type == "gpt_oss" && present(fields, "sliding_window")) {
    out["sliding_window"] = fields.integer("sliding_window", 1, kMax);
    out["window_skip_freq"] = 2;
    out["attention_sinks"] = true;
  } else if (present(fields, "sliding_window") && (type == "mistral" || type == "mixtral" ||
                                                    (present(fields, "use_sliding_window") &&
                                                     fields.boolean("use_sliding_window")))) {
    const std::int64_t window = fields.integer("sliding_window", 1, std::int64_t{1} << 40);
    if (window < kMax) out["sliding_window"] = window;
  }
  out["source"] = "Hugging Face transformers config.json (" + origin + ", model_type " + type + ")";
  return architecture_from_json(nlohmann::json::parse(out.dump()), origin + " (as ppsim's model schema)");
}

}  // namespace ppsim
