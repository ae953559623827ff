// SPDX-License-Identifier: Apache-2.0
#pragma once
// Tests that hold a document (docs/validation.md, README.md) to the figures the code computes: the
// paths of files in the source tree, figures formatted as the document prints them, and the number
// a document states after a label.
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

namespace ppsim::test {

inline std::string source_path(const std::string& relative) { return std::string(PPSIM_SOURCE_DIR) + "/" + relative; }

// `value` as printf's `pattern` writes it, e.g. "%+.1f%%" for "-4.2%".
inline std::string printed(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

// The number after `label` in the document, e.g. "Overall mean absolute error: 13.0%" gives 13.0.
inline double stated_figure(const std::string& document, const std::string& label) {
  const std::size_t at = document.find(label);
  REQUIRE(at != std::string::npos);
  return std::stod(document.substr(at + label.size()));
}

}  // namespace ppsim::test
