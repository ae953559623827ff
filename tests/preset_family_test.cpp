// SPDX-License-Identifier: Apache-2.0
// Preset names as people say them: the minor version left out, or only the first words.
#include "study/input/preset_family.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

const std::vector<std::string> kPresets = {"llama2-70b", "llama3.1-8b", "llama3.1-70b", "llama3.1-405b",
                                           "h100-sxm5-80gb", "h200-sxm-141gb", "a100-sxm4-80gb"};

}  // namespace

TEST_CASE("A family name picks the one preset it names", "[presets]") {
  const auto [typed, preset] = GENERATE(table<std::string, std::string>({
      {"llama3-70b", "llama3.1-70b"},
      {"LLAMA3-405B", "llama3.1-405b"},
      {"h100", "h100-sxm5-80gb"},
      {"H200-SXM", "h200-sxm-141gb"},
      {"a100", "a100-sxm4-80gb"},
      {"meta-llama/Llama-3.1-70B", "llama3.1-70b"},
      {"meta-llama/Llama-3.1-70B-Instruct", "llama3.1-70b"},
      {"llama-3-70b", "llama3.1-70b"},
      {"Llama_3.1_405B", "llama3.1-405b"},
      {"llama2-70b-chat", "llama2-70b"},
      {"meta-llama/Llama-2-70b-hf", "llama2-70b"},
      {"nvidia-h100", "h100-sxm5-80gb"},
  }));
  INFO(typed);
  CHECK(ppsim::preset_by_family(typed, kPresets) == preset);
}

TEST_CASE("An exact name, a file, or a name that fits several presets or none is left to the exact lookup",
          "[presets]") {
  const std::string typed = GENERATE("llama2-70b", "Llama3.1-8B", "llama3.1", "llama3", "mistral-7b", "h100.json",
                                     "", "sxm5", "llama-2");
  INFO(typed);
  CHECK_FALSE(ppsim::preset_by_family(typed, kPresets).has_value());
}

TEST_CASE("Hub names find the shipped presets, and one family never suggests another", "[presets]") {
  const auto [typed, preset] = GENERATE(table<std::string, std::string>({
      {"meta-llama/Llama-3.3-70B-Instruct", "llama3.3-70b"},
      {"llama-3-70b", "llama3.1-70b"},  // 3.1 and 3.3 70B are one shape: the first stands for both
      {"Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"},
      {"Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"},
      {"mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b"},
      {"mistralai/Mistral-7B-v0.3", "mistral-7b-v0.3"},
      {"mistralai/Mistral-Large-Instruct-2407", "mistral-large-2407"},
      {"mistralai/Mistral-Small-24B-Base-2501", "mistral-small-24b"},
      {"mistralai/Mistral-Nemo-Base-2407", "mistral-nemo-12b"},
      {"deepseek-ai/DeepSeek-V3", "deepseek-v3"},
      {"openai/gpt-oss-120b", "gpt-oss-120b"},
  }));
  INFO(typed);
  CHECK(ppsim::model_by_family(typed) == preset);
  CHECK(ppsim::model_by_family("llama-2-70b") == "llama2-70b");
  CHECK(ppsim::model_by_family("qwen3") == std::nullopt);  // several shapes
}

TEST_CASE("The shipped presets resolve by family: llama3-70b and h100", "[presets]") {
  CHECK(ppsim::model_by_family("llama3-70b") == "llama3.1-70b");
  CHECK(ppsim::hardware_by_family("h100") == "h100-sxm5-80gb");
  CHECK_FALSE(ppsim::model_by_family("llama2-7b").has_value());  // exact
}
