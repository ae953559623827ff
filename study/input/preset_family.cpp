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

namespace {

// The words of a name as people and model hubs write it, for comparing: lower case, without an
// "org/" prefix ("meta-llama/Llama-3.1-70B"), a vendor ("nvidia-h100"), or a variant that keeps the
// architecture ("-Instruct", "-chat", "-base", "-hf", "-it"); split at -, _ and spaces.
std::vector<std::string> name_words(std::string_view typed) {
  std::string text = lower_case(typed);
  if (const std::size_t slash = text.rfind('/'); slash != std::string::npos) text = text.substr(slash + 1);
  std::vector<std::string> words;
  std::string word;
  const auto flush = [&] {
    static const std::vector<std::string> kVariants = {"instruct", "chat", "base", "hf", "it"};
    const bool vendor = words.empty() && (word == "nvidia" || word == "amd");
    if (!word.empty() && !vendor && std::find(kVariants.begin(), kVariants.end(), word) == kVariants.end()) {
      words.push_back(word);
    }
    word.clear();
  };
  for (const char c : text) {
    if (c == '-' || c == '_' || c == ' ') {
      flush();
    } else {
      word += c;
    }
  }
  flush();
  return words;
}

// A version ("v0.3") or a release date ("2407"): what names the same architecture at another time.
bool is_release_word(const std::string& word) {
  const bool version = word.size() >= 2 && word[0] == 'v' && is_digit(word[1]);
  const bool date = word.size() == 4 && std::all_of(word.begin(), word.end(), is_digit);
  return version || date;
}

// The words joined without separators or points: "llama-3.1-70b" and "llama3.1-70b" are "llama3170b".
std::string joined(const std::vector<std::string>& words, bool without_releases) {
  std::string out;
  for (const std::string& word : words) {
    if (without_releases && is_release_word(word)) continue;
    for (const char c : word) {
      if (c != '.') out += c;
    }
  }
  return out;
}

// Whether `prefix` is the first words of `words`.
bool starts_with_words(const std::vector<std::string>& words, const std::vector<std::string>& prefix) {
  return !prefix.empty() && prefix.size() < words.size() && std::equal(prefix.begin(), prefix.end(), words.begin());
}

}  // namespace

std::vector<std::string> presets_by_family(std::string_view typed, std::span<const std::string> presets) {
  const std::string wanted = lower_case(typed);
  if (wanted.empty() || wanted.ends_with(".json")) return {};
  for (const std::string& preset : presets) {
    if (lower_case(preset) == wanted) return {};  // an exact name needs no resolving
  }
  const std::vector<std::string> words = name_words(typed);
  // The closest rule that finds any preset decides: the same words, then the same words without
  // versions and dates, then the minor versions left out ("llama3-70b"), then the first words.
  using Rule = bool (*)(const std::vector<std::string>&, const std::vector<std::string>&);
  const Rule rules[] = {
      [](const std::vector<std::string>& name, const std::vector<std::string>& asked) {
        return joined(name, false) == joined(asked, false);
      },
      [](const std::vector<std::string>& name, const std::vector<std::string>& asked) {
        return joined(name, true) == joined(asked, true);
      },
      [](const std::vector<std::string>& name, const std::vector<std::string>& asked) {
        std::vector<std::string> family;
        for (const std::string& word : name) family.push_back(without_minor_versions(word));
        return joined(family, true) == joined(asked, true);
      },
      [](const std::vector<std::string>& name, const std::vector<std::string>& asked) {
        std::vector<std::string> kept;
        for (const std::string& word : asked) {
          if (!is_release_word(word)) kept.push_back(word);
        }
        return starts_with_words(name, kept);
      },
  };
  for (const Rule rule : rules) {
    std::vector<std::string> matches;
    for (const std::string& preset : presets) {
      if (rule(name_words(preset), words)) matches.push_back(preset);
    }
    if (!matches.empty()) return matches;
  }
  return {};
}

std::optional<std::string> preset_by_family(std::string_view typed, std::span<const std::string> presets) {
  const std::vector<std::string> matches = presets_by_family(typed, presets);
  if (matches.size() != 1) return std::nullopt;
  return matches.front();
}

std::optional<std::string> model_by_family(std::string_view typed) {
  std::vector<std::string> names;
  for (const Architecture& preset : architecture_presets()) names.push_back(preset.name);
  const std::vector<std::string> matches = presets_by_family(typed, names);
  if (matches.empty()) return std::nullopt;
  // Releases of one architecture (Llama 3.1 70B and 3.3 70B) are one model to the simulator: the
  // first listed stands for them all. Different shapes stay ambiguous.
  const auto same_shape = [](std::string_view a, std::string_view b) {
    Architecture left = *std::find_if(architecture_presets().begin(), architecture_presets().end(),
                                      [&](const Architecture& arch) { return arch.name == a; });
    const Architecture& right = *std::find_if(architecture_presets().begin(), architecture_presets().end(),
                                              [&](const Architecture& arch) { return arch.name == b; });
    left.name = right.name;
    left.source = right.source;
    return left == right;
  };
  for (const std::string& match : matches) {
    if (!same_shape(matches.front(), match)) return std::nullopt;
  }
  return matches.front();
}

std::optional<std::string> hardware_by_family(std::string_view typed) {
  std::vector<std::string> names;
  for (const HardwareProfile& preset : hardware_presets()) names.push_back(lower_case(preset.name));  // as ppsim models lists them
  return preset_by_family(typed, names);
}

}  // namespace ppsim
