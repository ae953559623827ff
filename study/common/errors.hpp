// SPDX-License-Identifier: Apache-2.0
#pragma once
// The two kinds of failure a user can cause, and the exit status of each (DESIGN.md, "Exit status").

#include <stdexcept>
#include <string>
#include <string_view>

#include "schedules/excerpt.hpp"

namespace ppsim {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // anything else: a bug or an unwritable output
inline constexpr int kExitBadInput = 2;     // one line on stderr naming the flag or JSON path
inline constexpr int kExitBadSchedule = 3;  // invalid or deadlocking schedule, with the step x device grid

// Bad input: the message starts with the flag ("-p: ...") or the JSON path ("cfg.json: $.p: ...").
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A schedule that is invalid or cannot finish; `grid` shows where.
class ScheduleError : public std::runtime_error {
 public:
  ScheduleError(const std::string& message, std::string grid) : std::runtime_error(message), grid_(std::move(grid)) {}
  const std::string& grid() const { return grid_; }

 private:
  std::string grid_;
};

// An error message as one bounded line: control characters (line breaks among them) are written
// as \xNN and the message is cut with an ellipsis so that the printed line, its prefix included,
// is at most kMaxErrorChars. The last guard: the messages themselves already cut what they echo.
inline constexpr std::size_t kMaxErrorChars = 400;
// Room for the longest prefix a front end prints before a message: "ppsim-calibrate: error: ".
inline constexpr std::size_t kErrorPrefixChars = 24;
inline std::string one_line(std::string_view message) {
  return printable_within(message, kMaxErrorChars - kErrorPrefixChars, true);
}

}  // namespace ppsim
