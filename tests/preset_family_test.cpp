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
  }));
  INFO(typed);
  CHECK(ppsim::preset_by_family(typed, kPresets) == preset);
}

TEST_CASE("An exact name, a file, or a name that fits several presets or none is left to the exact lookup",
          "[presets]") {
  const std::string typed = GENERATE("llama2-70b", "Llama3.1-8B", "llama3.1", "llama3", "mistral-7b", "h100.json",
                                     "", "llama2-70b-chat", "sxm5");
  INFO(typed);
  CHECK_FALSE(ppsim::preset_by_family(typed, kPresets).has_value());
}

TEST_CASE("The shipped presets resolve by family: llama3-70b and h100", "[presets]") {
  CHECK(ppsim::model_by_family("llama3-70b") == "llama3.1-70b");
  CHECK(ppsim::hardware_by_family("h100") == "h100-sxm5-80gb");
  CHECK_FALSE(ppsim::model_by_family("llama2-7b").has_value());  // exact
}
