// SPDX-License-Identifier: Apache-2.0
// A Hugging Face transformers config.json as --model: each checked-in config (tests/data/hf, the
// checkpoints' config.json as published, trimmed of tokenizer ids) reads as the preset of the same
// model, field for field.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "models/json/architecture_json.hpp"
#include "models/json/hf_config_json.hpp"
#include "models/json/json_input_error.hpp"
#include "models/transformer/architecture.hpp"

namespace {

std::string data_file(const std::string& name) { return std::string(PPSIM_SOURCE_DIR) + "/tests/data/hf/" + name; }

const ppsim::Architecture& preset(const std::string& name) {
  for (const ppsim::Architecture& arch : ppsim::architecture_presets()) {
    if (arch.name == name) return arch;
  }
  FAIL("no preset " << name);
  return ppsim::architecture_presets().front();
}

std::string error_of(const nlohmann::json& config) {
  try {
    (void)ppsim::architecture_from_hf_config(config, "config.json", "m");
  } catch (const ppsim::JsonInputError& error) {
    return error.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("A transformers config.json reads as the preset of the same model") {
  const auto [file, name] = GENERATE(table<std::string, std::string>({
      {"Llama-3.1-70B.json", "llama3.1-70b"},
      {"Qwen2.5-7B.json", "qwen2.5-7b"},
      {"Qwen3-32B.json", "qwen3-32b"},
      {"Mistral-Nemo-Base-2407.json", "mistral-nemo-12b"},
      {"Mixtral-8x7B-v0.1.json", "mixtral-8x7b"},
      {"Qwen3-30B-A3B.json", "qwen3-30b-a3b"},
      {"DeepSeek-V3.json", "deepseek-v3"},
      {"gpt-oss-120b.json", "gpt-oss-120b"},
  }));
  INFO(file);
  ppsim::Architecture read = ppsim::load_architecture(data_file(file));
  CHECK(read.name == file.substr(0, file.size() - 5));  // named after the file without "_name_or_path"
  CHECK(read.source.starts_with("Hugging Face transformers config.json ("));
  read.name = preset(name).name;
  read.source = preset(name).source;
  CHECK(read == preset(name));
  CHECK(ppsim::parameter_count(read) == ppsim::parameter_count(preset(name)));
}

TEST_CASE("A transformers config names its model by _name_or_path, else by its folder") {
  nlohmann::json config = nlohmann::json::parse(R"({"model_type": "llama", "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})");
  CHECK(ppsim::architecture_from_hf_config(config, "config.json", "folder").name == "folder");
  config["_name_or_path"] = "meta-llama/Tiny";
  CHECK(ppsim::architecture_from_hf_config(config, "config.json", "folder").name == "meta-llama/Tiny");
  CHECK(ppsim::is_hf_config(config));
  CHECK_FALSE(ppsim::is_hf_config(nlohmann::json::parse(R"({"name": "x", "layers": 2})")));
}

TEST_CASE("A transformers config ppsim cannot model is refused naming its key") {
  const nlohmann::json base = nlohmann::json::parse(R"({"model_type": "qwen2_moe", "num_hidden_layers": 4,
      "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
      "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32})");
  CHECK(error_of(base) == "(accepted)");
  nlohmann::json sparse = base;
  sparse["decoder_sparse_step"] = 2;
  CHECK(error_of(sparse).starts_with("config.json: $.decoder_sparse_step: above 1 is not modelled"));
  nlohmann::json dense_list = base;
  dense_list["mlp_only_layers"] = {0};
  CHECK(error_of(dense_list).starts_with("config.json: $.mlp_only_layers: is not modelled"));
  nlohmann::json gpt2 = base;
  gpt2["model_type"] = "gpt2";
  CHECK(error_of(gpt2).starts_with("config.json: $.model_type: \"gpt2\" is not a decoder ppsim reads"));
  nlohmann::json no_layers = base;
  no_layers.erase("num_hidden_layers");
  CHECK(error_of(no_layers).starts_with("config.json: $.num_hidden_layers: "));
  nlohmann::json no_top = base;
  no_top.erase("num_experts_per_tok");
  CHECK(error_of(no_top).starts_with("config.json: $.num_experts_per_tok: an MoE config needs"));
}
