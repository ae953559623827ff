// SPDX-License-Identifier: Apache-2.0
#include "tools/ppsim/sweep_progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

namespace ppsim {
namespace {

constexpr int kBarWidth = 30;

std::string duration_text(double seconds) {
  char buffer[32];
  if (seconds < 60) {
    std::snprintf(buffer, sizeof buffer, "%.0f s", seconds);
  } else if (seconds < 3600) {
    std::snprintf(buffer, sizeof buffer, "%d min %02d s", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%d h %02d min", static_cast<int>(seconds) / 3600,
                  static_cast<int>(seconds) / 60 % 60);
  }
  return buffer;
}

}  // namespace

bool is_terminal(const std::ostream& err) { return &err == &std::cerr && isatty(STDERR_FILENO) != 0; }

ProgressBar::ProgressBar(std::ostream& err, bool lines)
    : err_(err), lines_(lines), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(std::size_t done, std::size_t total) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (lines_) {
    const std::size_t tenths = total == 0 ? 10 : done * 10 / total;
    if (tenths <= tenths_shown_ || tenths >= 10) return;  // the last tenth is finish()'s line
    tenths_shown_ = tenths;
    char line[160];
    std::snprintf(line, sizeof line, "ppsim sweep: %zu/%zu points (%zu%%) in %.1f s\n", done, total, tenths * 10,
                  elapsed);
    err_ << line << std::flush;
    return;
  }
  const double fraction = total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(fraction * kBarWidth);
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kBarWidth, '.');
  char line[160];
  std::snprintf(line, sizeof line, "\r[%s] %zu/%zu points  %.0f points/s  %s left\033[K", bar.c_str(), done, total,
                rate, rate > 0 ? duration_text(static_cast<double>(total - done) / rate).c_str() : "?");
  err_ << line << std::flush;
}

void ProgressBar::finish(std::size_t total, unsigned threads) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char line[160];
  std::snprintf(line, sizeof line, lines_ ? "ppsim sweep: %zu points in %.2f s on %u threads (%.0f points/s)\n"
                                         : "\r%zu points in %.2f s on %u threads (%.0f points/s)\033[K\n",
                total, elapsed, threads, elapsed > 0 ? static_cast<double>(total) / elapsed : 0.0);
  err_ << line << std::flush;
}

}  // namespace ppsim
