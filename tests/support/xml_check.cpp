#include "support/xml_check.hpp"

#include <cctype>
#include <set>
#include <vector>

namespace ppsim::test {
namespace {

class Checker {
 public:
  explicit Checker(std::string_view text) : text_(text) {}

  std::optional<std::string> run() {
    skip_space();
    if (starts("<?xml")) {
      if (!skip_past("?>")) return fail("unterminated XML declaration");
    }
    if (auto error = misc()) return error;
    if (starts("<!DOCTYPE")) {
      if (!skip_past(">")) return fail("unterminated DOCTYPE");
      if (auto error = misc()) return error;
    }
    if (!starts("<")) return fail("no root element");
    if (auto error = element_tree()) return error;
    if (auto error = misc()) return error;
    if (pos_ != text_.size()) return fail("content after the root element");
    return std::nullopt;
  }

 private:
  bool starts(std::string_view prefix) const { return text_.substr(pos_).starts_with(prefix); }

  bool skip_past(std::string_view end) {
    const std::size_t at = text_.find(end, pos_);
    if (at == std::string_view::npos) return false;
    pos_ = at + end.size();
    return true;
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  std::string fail(const std::string& why) const {
    std::size_t line = 1;
    for (std::size_t i = 0; i < pos_ && i < text_.size(); ++i) line += text_[i] == '\n';
    return "line " + std::to_string(line) + ": " + why;
  }

  // Whitespace and comments between the prolog's parts and after the root.
  std::optional<std::string> misc() {
    for (;;) {
      skip_space();
      if (starts("<!--")) {
        if (auto error = comment()) return error;
      } else {
        return std::nullopt;
      }
    }
  }

  std::optional<std::string> comment() {
    const std::size_t end = text_.find("-->", pos_ + 4);
    if (end == std::string_view::npos) return fail("unterminated comment");
    if (text_.substr(pos_ + 4, end - pos_ - 4).find("--") != std::string_view::npos) return fail("-- inside a comment");
    pos_ = end + 3;
    return std::nullopt;
  }

  static bool name_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' || static_cast<unsigned char>(c) >= 0x80;
  }
  static bool name_char(char c) {
    return name_start(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
  }

  std::string name() {
    const std::size_t start = pos_;
    if (pos_ < text_.size() && name_start(text_[pos_])) {
      ++pos_;
      while (pos_ < text_.size() && name_char(text_[pos_])) ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  // Character data up to `end` (exclusive): every & starts a known entity or a character reference.
  std::optional<std::string> character_data(std::size_t end, bool attribute) {
    for (; pos_ < end; ++pos_) {
      const char c = text_[pos_];
      if (c == '<') return fail(attribute ? "< inside an attribute value" : "stray <");
      if (c == ']' && text_.substr(pos_).starts_with("]]>")) return fail("]]> in text");
      if (c != '&') continue;
      const std::size_t semicolon = text_.find(';', pos_);
      if (semicolon == std::string_view::npos || semicolon > end) return fail("& without an entity");
      const std::string_view entity = text_.substr(pos_ + 1, semicolon - pos_ - 1);
      bool ok = entity == "amp" || entity == "lt" || entity == "gt" || entity == "quot" || entity == "apos";
      if (!ok && entity.size() > 1 && entity[0] == '#') {
        const bool hex = entity[1] == 'x';
        const std::string_view digits = entity.substr(hex ? 2 : 1);
        ok = !digits.empty();
        for (const char d : digits)
          ok = ok && (hex ? std::isxdigit(static_cast<unsigned char>(d)) != 0
                          : std::isdigit(static_cast<unsigned char>(d)) != 0);
      }
      if (!ok) return fail("unknown entity &" + std::string(entity) + ";");
      pos_ = semicolon;
    }
    return std::nullopt;
  }

  // The root element and everything inside it, with an explicit stack so depth costs no recursion.
  std::optional<std::string> element_tree() {
    std::vector<std::string> open;
    do {
      if (starts("<!--")) {
        if (auto error = comment()) return error;
      } else if (starts("<![CDATA[")) {
        if (!skip_past("]]>")) return fail("unterminated CDATA");
      } else if (starts("<?")) {
        if (!skip_past("?>")) return fail("unterminated processing instruction");
      } else if (starts("</")) {
        pos_ += 2;
        const std::string closing = name();
        skip_space();
        if (!starts(">")) return fail("malformed end tag </" + closing);
        ++pos_;
        if (open.empty()) return fail("</" + closing + "> closes nothing");
        if (open.back() != closing) return fail("</" + closing + "> closes <" + open.back() + ">");
        open.pop_back();
      } else if (starts("<!")) {
        return fail("markup declaration inside the document");
      } else if (starts("<")) {
        ++pos_;
        const std::string tag = name();
        if (tag.empty()) return fail("< not followed by a tag name");
        std::set<std::string> attributes;
        for (;;) {
          const std::size_t before = pos_;
          skip_space();
          if (starts("/>")) {
            pos_ += 2;
            break;
          }
          if (starts(">")) {
            ++pos_;
            open.push_back(tag);
            break;
          }
          if (pos_ == before) return fail("attributes of <" + tag + "> need whitespace between them");
          const std::string attribute = name();
          if (attribute.empty()) return fail("malformed attribute in <" + tag + ">");
          if (!attributes.insert(attribute).second)
            return fail("duplicate attribute " + attribute + " in <" + tag + ">");
          skip_space();
          if (!starts("=")) return fail("attribute " + attribute + " of <" + tag + "> has no value");
          ++pos_;
          skip_space();
          if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\'')) {
            return fail("attribute " + attribute + " of <" + tag + "> is not quoted");
          }
          const char quote = text_[pos_++];
          const std::size_t end = text_.find(quote, pos_);
          if (end == std::string_view::npos) return fail("unterminated attribute " + attribute);
          if (auto error = character_data(end, true)) return error;
          pos_ = end + 1;
        }
      } else {
        const std::size_t end = std::min(text_.find('<', pos_), text_.size());
        if (auto error = character_data(end, false)) return error;
      }
      if (pos_ >= text_.size() && !open.empty()) return fail("<" + open.back() + "> is never closed");
    } while (!open.empty());
    return std::nullopt;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::optional<std::string> xml_error(std::string_view text) { return Checker(text).run(); }

std::size_t count_of(std::string_view text, std::string_view needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

}  // namespace ppsim::test
