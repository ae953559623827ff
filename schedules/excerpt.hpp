// SPDX-License-Identifier: Apache-2.0
#pragma once
// Input echoed in error messages, bounded: every layer quotes what the user typed or a file held,
// and a 100 MB value or a key with newlines must still make one short line. Here, at the bottom of
// the layers, so that schedules, models and the front ends all cut the same way.

#include <cstddef>
#include <string>
#include <string_view>

namespace ppsim {

// Echoed input is cut to this many characters, with an ellipsis.
inline constexpr std::size_t kMaxEchoedChars = 80;

// The first `max_chars` bytes of `text`, "..." when there were more; control characters as \xNN,
// and bytes outside ASCII too unless `keep_non_ascii` (a whole message may hold "µs").
std::string printable(std::string_view text, std::size_t max_chars, bool keep_non_ascii);

// printable's escaping, cut so that the result, "..." included, is at most `max_out` characters
// however many of them escapes take: what bounds a whole printed line.
std::string printable_within(std::string_view text, std::size_t max_out, bool keep_non_ascii);

// `text` for a message: control characters and bytes outside printable ASCII as \xNN, cut to
// kMaxEchoedChars characters and "..." when longer.
std::string excerpt(std::string_view text);
// "'text'" with excerpt's bounds.
std::string quoted_excerpt(std::string_view text);

}  // namespace ppsim
