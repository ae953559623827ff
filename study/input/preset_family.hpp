// SPDX-License-Identifier: Apache-2.0
#pragma once
// Model and hardware presets named the way people say them: "llama3-70b" for llama3.1-70b, "h100"
// for h100-sxm5-80gb. The config reader resolves such a name as it reads it (as it does schedule
// names), so flags, configs and study axes all accept it, and notes what it chose.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim {

// The one preset that `typed` names by its family, compared without case: the preset's name with
// the minor numbers of its version left out ("llama3.1-70b" read as "llama3-70b"), or its first
// words ("h100" or "h100-sxm5" for "h100-sxm5-80gb"). nullopt when `typed` is a preset's exact name,
// a file, or names no preset or several (then the exact lookup refuses it with the list).
// Names are compared by their words, so case, "-", "." and "_", an "org/" prefix
// ("meta-llama/Llama-3.1-70B"), a vendor ("nvidia-h100") and variants of one architecture
// ("-Instruct", "-chat", "-hf") do not matter, nor do versions and release dates when nothing
// matches with them ("Mixtral-8x7B-v0.1", "Mistral-Large-Instruct-2407").
std::optional<std::string> preset_by_family(std::string_view typed, std::span<const std::string> presets);
// Every preset the first rule that finds any matches (empty: an exact name, a file, or none).
std::vector<std::string> presets_by_family(std::string_view typed, std::span<const std::string> presets);

// A preset name as ppsim compares and lists them: in lower case.
std::string lower_case(std::string_view text);

// The same over the model presets (ppsim models) and the hardware presets.
std::optional<std::string> model_by_family(std::string_view typed);
std::optional<std::string> hardware_by_family(std::string_view typed);

}  // namespace ppsim
