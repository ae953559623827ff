#pragma once
// The sweep's progress bar: points done, rate and time left, redrawn in place on stderr. Drawn only
// when stderr is a terminal, so logs and pipes never see it.

#include <chrono>
#include <cstddef>
#include <ostream>

namespace ppsim {

// True when `err` is the process's stderr and that is a terminal.
bool is_terminal(const std::ostream& err);

class ProgressBar {
 public:
  explicit ProgressBar(std::ostream& err);
  void update(std::size_t done, std::size_t total);
  // Clears the bar and leaves one line: points, time, rate.
  void finish(std::size_t total, unsigned threads);

 private:
  std::ostream& err_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ppsim
