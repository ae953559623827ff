// SPDX-License-Identifier: Apache-2.0
#pragma once
// Text helpers shared by the SVG and HTML writers: escaping, so every file is well-formed XML, and
// fixed-precision numbers, so the same inputs give the same bytes on every machine.

#include <string>
#include <string_view>

namespace ppsim {

// Escapes the five characters XML reserves (& < > " '), for text and attribute values alike.
std::string xml_escape(std::string_view text);

// At most `decimals` decimals, trailing zeros dropped, never "-0": "12.5", "3", "0.25".
// snprintf in the "C" locale (ppsim never calls setlocale), so no thousands separators or commas.
std::string fixed(double value, int decimals = 2);

}  // namespace ppsim
