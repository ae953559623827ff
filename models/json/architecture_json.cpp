// SPDX-License-Identifier: Apache-2.0
#include "models/json/architecture_json.hpp"

#include "models/json/json_fields.hpp"

namespace ppsim {

Architecture architecture_from_json(const nlohmann::json& json, const std::string& origin) {
  const JsonFields fields(json, origin, "$");
  fields.refuse_unknown({"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "gated_mlp", "vocab",
                         "tied_embeddings", "norm", "linear_biases", "learned_positions", "dropout", "source"});
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
  arch.learned_positions = fields.has("learned_positions") ? fields.integer("learned_positions", 0, kMaxWidth) : 0;
  if (fields.has("dropout")) {
    arch.dropout = fields.positive("dropout", true);
    if (arch.dropout >= 1) fields.fail("dropout", "must be a probability below 1, got " + json_excerpt(fields.at("dropout")));
  }
  arch.source = fields.has("source") ? fields.string("source") : "";
  if (arch.hidden % arch.heads != 0) {
    fields.fail("heads", std::to_string(arch.heads) + " heads do not divide hidden " + std::to_string(arch.hidden));
  }
  if (arch.heads % arch.kv_heads != 0) {
    fields.fail("kv_heads",
                std::to_string(arch.kv_heads) + " KV heads do not divide " + std::to_string(arch.heads) + " heads");
  }
  return arch;
}

Architecture load_architecture(const std::string& path) { return architecture_from_json(read_json_file(path), path); }

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
  out["learned_positions"] = arch.learned_positions;
  out["dropout"] = arch.dropout;
  out["source"] = arch.source;
  return out;
}

}  // namespace ppsim
