// SPDX-License-Identifier: Apache-2.0
#pragma once
// A strict well-formedness check for the documents ppsim writes (SVG, and HTML kept XHTML-compatible),
// by Debian's libxml2: one root element, balanced tags, quoted and unique attributes, and only
// XML's five entities and numeric character references.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ppsim::test {

// Why `text` is not well-formed ("line 3: </g> closes <svg>"), or nothing when it is.
std::optional<std::string> xml_error(std::string_view text);

// Non-overlapping occurrences of `needle` in `text`.
std::size_t count_of(std::string_view text, std::string_view needle);

}  // namespace ppsim::test
