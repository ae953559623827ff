// SPDX-License-Identifier: Apache-2.0
#pragma once
// The sweep's progress: on a terminal a bar redrawn in place on stderr (points done, rate, time left);
// with --progress and stderr not a terminal (a CI log), one plain line at every tenth of the points.

#include <chrono>
#include <cstddef>
#include <ostream>

namespace ppsim {

// True when `err` is the process's stderr and that is a terminal.
bool is_terminal(const std::ostream& err);

class ProgressBar {
 public:
  // `lines`: plain lines for logs instead of the redrawn bar.
  explicit ProgressBar(std::ostream& err, bool lines = false);
  void update(std::size_t done, std::size_t total);
  // Clears the bar and leaves one line: points, time, rate.
  void finish(std::size_t total, unsigned threads);

 private:
  std::ostream& err_;
  bool lines_;
  std::size_t tenths_shown_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ppsim
