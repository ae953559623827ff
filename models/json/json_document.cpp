// SPDX-License-Identifier: Apache-2.0
#include "models/json/json_document.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <optional>

namespace ppsim {
namespace {

// The first offset at which arrays and objects nest deeper than kMaxJsonDepth, if any. A scan of the
// raw text, so that nlohmann never builds (and later recurses into) a value that deep.
std::optional<std::size_t> too_deep_at(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

// nlohmann prefixes "[json.exception.parse_error.101] "; the rest says where and why. It quotes the
// last token read, which may be huge or hold control characters: excerpt() bounds it.
std::string reason(const nlohmann::json::exception& error) {
  std::string text = error.what();
  if (const auto bracket = text.find("] "); text.starts_with("[json.exception") && bracket != std::string::npos) {
    text = text.substr(bracket + 2);
  }
  if (text.size() > 3 * kMaxEchoedChars) text = text.substr(0, 3 * kMaxEchoedChars) + "...";
  std::string clean;
  for (const char c : text) clean += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  return clean;
}

template <typename Json>
Json parse_as(std::string_view text, const std::string& origin) {
  if (const auto at = too_deep_at(text)) {
    throw JsonInputError(origin + ": malformed JSON: nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " arrays and objects at byte " + std::to_string(*at + 1));
  }
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& error) {  // parse_error, and out_of_range 406 for 1e309
    throw JsonInputError(origin + ": malformed JSON: " + reason(error));
  }
}

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

}  // namespace

std::string read_bounded_file(const std::string& path, std::size_t max_bytes, std::string_view what) {
  const std::string kind(what);
  // A directory opens fine with fopen on Linux and then fails to read; a FIFO or /dev/zero would
  // never end: only regular files are read, and only as far as max_bytes + 1.
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw JsonInputError(path + ": cannot read the " + kind);
  if (!S_ISREG(info.st_mode)) throw JsonInputError(path + ": cannot read the " + kind + " (not a regular file)");
  if (static_cast<std::size_t>(info.st_size) > max_bytes) {
    throw JsonInputError(path + ": the " + kind + " is too large (" + std::to_string(info.st_size) +
                         " bytes; at most " + std::to_string(max_bytes) + ")");
  }
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw JsonInputError(path + ": cannot read the " + kind);
  // Read to the end, not to st_size: the file may have grown since stat. Never past the limit.
  std::string text;
  char block[1 << 16];
  while (true) {
    const std::size_t got = std::fread(block, 1, sizeof block, file.get());
    if (text.size() + got > max_bytes) {
      throw JsonInputError(path + ": the " + kind + " is too large (at most " + std::to_string(max_bytes) + " bytes)");
    }
    text.append(block, got);
    if (got < sizeof block) break;
  }
  if (std::ferror(file.get())) throw JsonInputError(path + ": cannot read the " + kind);
  return text;
}

nlohmann::json parse_json_text(std::string_view text, const std::string& origin) {
  return parse_as<nlohmann::json>(text, origin);
}

nlohmann::ordered_json parse_ordered_json_text(std::string_view text, const std::string& origin) {
  return parse_as<nlohmann::ordered_json>(text, origin);
}

nlohmann::json read_json_file(const std::string& path) {
  return parse_json_text(read_bounded_file(path, kMaxJsonFileBytes, "file"), path);
}

nlohmann::ordered_json read_ordered_json_file(const std::string& path, std::string_view what) {
  return parse_ordered_json_text(read_bounded_file(path, kMaxJsonFileBytes, what), path);
}

}  // namespace ppsim
