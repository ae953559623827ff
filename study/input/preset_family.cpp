// SPDX-License-Identifier: Apache-2.0
#include "study/input/preset_family.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "models/hardware/profile.hpp"
#include "models/transformer/architecture.hpp"

namespace ppsim {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "llama3.1-70b" -> "llama3-70b": a point and the digits after it go when a digit precedes it.
std::string without_minor_versions(std::string_view name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '.' && i > 0 && is_digit(name[i - 1]) && i + 1 < name.size() && is_digit(name[i + 1])) {
      while (i + 1 < name.size() && is_digit(name[i + 1])) ++i;
      continue;
    }
    out += name[i];
  }
  return out;
}

}  // namespace

std::string lower_case(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::optional<std::string> preset_by_family(std::string_view typed, std::span<const std::string> presets) {
  const std::string wanted = lower_case(typed);
  if (wanted.empty() || wanted.ends_with(".json")) return std::nullopt;
  std::vector<std::string> matches;
  for (const std::string& preset : presets) {
    const std::string name = lower_case(preset);
    if (name == wanted) return std::nullopt;  // an exact name needs no resolving
    if (without_minor_versions(name) == wanted || name.starts_with(wanted + "-")) matches.push_back(preset);
  }
  if (matches.size() != 1) return std::nullopt;
  return matches.front();
}

std::optional<std::string> model_by_family(std::string_view typed) {
  std::vector<std::string> names;
  for (const Architecture& preset : architecture_presets()) names.push_back(preset.name);
  return preset_by_family(typed, names);
}

std::optional<std::string> hardware_by_family(std::string_view typed) {
  std::vector<std::string> names;
  for (const HardwareProfile& preset : hardware_presets()) names.push_back(lower_case(preset.name));  // as ppsim models lists them
  return preset_by_family(typed, names);
}

}  // namespace ppsim
