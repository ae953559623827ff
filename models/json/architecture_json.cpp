// SPDX-License-Identifier: Apache-2.0
#include "models/json/architecture_json.hpp"

#include <algorithm>
#include <filesystem>

#include "models/json/hf_config_json.hpp"

#include "models/json/json_fields.hpp"

namespace ppsim {

Architecture architecture_from_json(const nlohmann::json& json, const std::string& origin) {
  const JsonFields fields(json, origin, "$");
  fields.refuse_unknown({"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "gated_mlp", "vocab",
                         "tied_embeddings", "norm", "linear_biases", "qkv_bias", "learned_positions", "dropout", "head_dim", "qk_norm",
                         "moe", "mla", "mtp_layers", "sliding_window", "window_skip_freq", "attention_sinks", "source"});
  // Bounds far above any published model, low enough that products of them stay exact in doubles.
  constexpr std::int64_t kMaxWidth = std::int64_t{1} << 24;
  Architecture arch;
  arch.name = fields.string("name");
  if (arch.name.empty()) fields.fail("name", "must not be empty");
  arch.layers = static_cast<int>(fields.integer("layers", 1, 100'000));
  arch.hidden = fields.integer("hidden", 1, kMaxWidth);
  arch.heads = static_cast<int>(fields.integer("heads", 1, 1 << 16));
  arch.kv_heads = fields.has("kv_heads") ? static_cast<int>(fields.integer("kv_heads", 1, 1 << 16)) : arch.heads;
  arch.ffn_hidden = fields.integer("ffn_hidden", 1, kMaxWidth);
  arch.gated_mlp = fields.has("gated_mlp") && fields.boolean("gated_mlp");
  arch.vocab = fields.integer("vocab", 1, kMaxWidth);
  arch.tied_embeddings = fields.has("tied_embeddings") && fields.boolean("tied_embeddings");
  const std::string norm = fields.has("norm") ? fields.string("norm") : "layernorm";
  if (norm == "layernorm") {
    arch.norm = Architecture::kLayerNorm;
  } else if (norm == "rmsnorm") {
    arch.norm = Architecture::kRmsNorm;
  } else {
    fields.fail("norm", "must be \"layernorm\" or \"rmsnorm\", got \"" + norm + "\"");
  }
  arch.linear_biases = fields.has("linear_biases") && fields.boolean("linear_biases");
  arch.qkv_bias = fields.has("qkv_bias") && fields.boolean("qkv_bias");
  arch.learned_positions = fields.has("learned_positions") ? fields.integer("learned_positions", 0, kMaxWidth) : 0;
  if (fields.has("dropout")) {
    arch.dropout = fields.positive("dropout", true);
    if (arch.dropout >= 1) fields.fail("dropout", "must be a probability below 1, got " + json_excerpt(fields.at("dropout")));
  }
  if (fields.has("head_dim")) arch.head_dim = fields.integer("head_dim", 1, kMaxWidth);
  arch.qk_norm = fields.has("qk_norm") && fields.boolean("qk_norm");
  if (fields.has("moe")) {
    const JsonFields moe = fields.object("moe");
    moe.refuse_unknown({"experts", "top_k", "expert_ffn_hidden", "shared_experts", "shared_expert_ffn_hidden",
                        "dense_layers", "layer_freq"});
    Architecture::Moe& m = arch.moe;
    m.experts = static_cast<int>(moe.integer("experts", 1, 1 << 20));
    m.top_k = static_cast<int>(moe.integer("top_k", 1, m.experts));
    m.expert_ffn_hidden = moe.integer("expert_ffn_hidden", 1, kMaxWidth);
    if (moe.has("shared_experts")) m.shared_experts = static_cast<int>(moe.integer("shared_experts", 0, 1 << 16));
    if (m.shared_experts > 0) {
      m.shared_expert_ffn_hidden = moe.integer("shared_expert_ffn_hidden", 1, kMaxWidth);
    } else if (moe.has("shared_expert_ffn_hidden")) {
      moe.fail("shared_expert_ffn_hidden", "needs shared_experts above 0");
    }
    if (moe.has("dense_layers")) m.dense_layers = static_cast<int>(moe.integer("dense_layers", 0, arch.layers - 1));
    if (moe.has("layer_freq")) m.layer_freq = static_cast<int>(moe.integer("layer_freq", 1, arch.layers));
  }
  if (fields.has("mla")) {
    const JsonFields mla = fields.object("mla");
    mla.refuse_unknown({"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
    Architecture::Mla& m = arch.mla;
    m.q_lora_rank = mla.has("q_lora_rank") ? mla.integer("q_lora_rank", 0, kMaxWidth) : 0;
    m.kv_lora_rank = mla.integer("kv_lora_rank", 1, kMaxWidth);
    m.qk_nope_head_dim = mla.integer("qk_nope_head_dim", 1, 1 << 16);
    m.qk_rope_head_dim = mla.integer("qk_rope_head_dim", 1, 1 << 16);
    m.v_head_dim = mla.integer("v_head_dim", 1, 1 << 16);
    if (fields.has("head_dim")) fields.fail("head_dim", "is set by mla's qk_nope_head_dim and qk_rope_head_dim");
  }
  if (fields.has("mtp_layers")) arch.mtp_layers = static_cast<int>(fields.integer("mtp_layers", 0, 64));
  if (fields.has("sliding_window")) arch.sliding_window = fields.integer("sliding_window", 1, kMaxWidth);
  if (fields.has("window_skip_freq")) {
    if (arch.sliding_window == 0) fields.fail("window_skip_freq", "needs sliding_window");
    arch.window_skip_freq = static_cast<int>(fields.integer("window_skip_freq", 0, arch.layers));
  }
  arch.attention_sinks = fields.has("attention_sinks") && fields.boolean("attention_sinks");
  arch.source = fields.has("source") ? fields.string("source") : "";
  // The parameter counts are int64 products of these sizes: refuse a model whose products would
  // not stay exact (2^53) rather than let them wrap.
  if (arch.head_dim > 0 && static_cast<double>(arch.heads) * static_cast<double>(arch.head_dim) > kMaxWidth) {
    fields.fail("head_dim", "heads x head_dim must be at most " + std::to_string(kMaxWidth) + ", got " +
                                std::to_string(arch.heads) + " x " + std::to_string(arch.head_dim));
  }
  {
    const double h = static_cast<double>(arch.hidden);
    const double width = std::max(static_cast<double>(arch.ffn_hidden),
                                  static_cast<double>(arch.moe.experts) * static_cast<double>(arch.moe.expert_ffn_hidden) +
                                      static_cast<double>(arch.moe.shared_experts) *
                                          static_cast<double>(arch.moe.shared_expert_ffn_hidden));
    const double per_layer = 4 * h * kMaxWidth + 3 * h * width;  // attention at its widest, the MLPs
    if (arch.layers * per_layer + 2 * static_cast<double>(arch.vocab) * h > 9007199254740992.0) {
      fields.fail(has_experts(arch) ? "moe" : "layers", "the model would have more than 2^53 parameters");
    }
  }
  if (has_mla(arch) && static_cast<double>(arch.heads) *
                           static_cast<double>(arch.mla.qk_nope_head_dim + arch.mla.qk_rope_head_dim +
                                               arch.mla.v_head_dim) > kMaxWidth) {
    fields.fail("mla", "heads x head widths must be at most " + std::to_string(kMaxWidth));
  }
  if (arch.head_dim == 0 && !has_mla(arch) && arch.hidden % arch.heads != 0) {
    fields.fail("heads", std::to_string(arch.heads) + " heads do not divide hidden " + std::to_string(arch.hidden));
  }
  if (arch.heads % arch.kv_heads != 0) {
    fields.fail("kv_heads",
                std::to_string(arch.kv_heads) + " KV heads do not divide " + std::to_string(arch.heads) + " heads");
  }
  return arch;
}

Architecture load_architecture(const std::string& path) {
  const nlohmann::json json = read_json_file(path);
  if (!is_hf_config(json)) return architecture_from_json(json, path);
  // A transformers config.json names no model: the directory it sits in usually does
  // (".../Llama-3.1-8B/config.json"), else the file.
  const std::filesystem::path file(path);
  const std::string stem = file.stem().string();
  const std::string folder = file.parent_path().filename().string();
  return architecture_from_hf_config(json, path, stem == "config" && !folder.empty() ? folder : stem);
}

nlohmann::ordered_json architecture_to_json(const Architecture& arch) {
  nlohmann::ordered_json out;
  out["name"] = arch.name;
  out["layers"] = arch.layers;
  out["hidden"] = arch.hidden;
  out["heads"] = arch.heads;
  out["kv_heads"] = arch.kv_heads;
  out["ffn_hidden"] = arch.ffn_hidden;
  out["gated_mlp"] = arch.gated_mlp;
  out["vocab"] = arch.vocab;
  out["tied_embeddings"] = arch.tied_embeddings;
  out["norm"] = arch.norm == Architecture::kRmsNorm ? "rmsnorm" : "layernorm";
  out["linear_biases"] = arch.linear_biases;
  if (arch.qkv_bias) out["qkv_bias"] = true;
  out["learned_positions"] = arch.learned_positions;
  out["dropout"] = arch.dropout;
  if (arch.head_dim > 0) out["head_dim"] = arch.head_dim;
  if (arch.qk_norm) out["qk_norm"] = true;
  if (has_experts(arch)) {
    const Architecture::Moe& m = arch.moe;
    nlohmann::ordered_json moe = {{"experts", m.experts}, {"top_k", m.top_k}, {"expert_ffn_hidden", m.expert_ffn_hidden}};
    if (m.shared_experts > 0) {
      moe["shared_experts"] = m.shared_experts;
      moe["shared_expert_ffn_hidden"] = m.shared_expert_ffn_hidden;
    }
    if (m.dense_layers > 0) moe["dense_layers"] = m.dense_layers;
    if (m.layer_freq > 1) moe["layer_freq"] = m.layer_freq;
    out["moe"] = moe;
  }
  if (has_mla(arch)) {
    const Architecture::Mla& m = arch.mla;
    out["mla"] = {{"q_lora_rank", m.q_lora_rank},
                  {"kv_lora_rank", m.kv_lora_rank},
                  {"qk_nope_head_dim", m.qk_nope_head_dim},
                  {"qk_rope_head_dim", m.qk_rope_head_dim},
                  {"v_head_dim", m.v_head_dim}};
  }
  if (arch.mtp_layers > 0) out["mtp_layers"] = arch.mtp_layers;
  if (arch.sliding_window > 0) {
    out["sliding_window"] = arch.sliding_window;
    if (arch.window_skip_freq > 0) out["window_skip_freq"] = arch.window_skip_freq;
  }
  if (arch.attention_sinks) out["attention_sinks"] = true;
  out["source"] = arch.source;
  return out;
}

}  // namespace ppsim
