// SPDX-License-Identifier: Apache-2.0
#pragma once
// ppsim check: re-runs the scenario stored in a `--format json` output of run or compare (each
// result's resolved `scenario`, which reads back as a config) and compares every figure with it,
// so that a CI job can pin a configuration's bubble, memory and step time.

#include <cstddef>
#include <string>
#include <vector>

namespace ppsim {

struct CheckOptions {
  double rtol = 1e-9;  // a number moved when |now - baseline| > atol + rtol * |baseline|
  double atol = 0;
  std::vector<std::string> only;  // figure names (any key on a figure's path); empty: all
};

struct MovedFigure {
  std::string figure;    // "[1f1b] per_device[2].peak_memory_bytes"
  std::string baseline;  // as JSON writes it; "(none)" when the baseline lacks it
  std::string now;
  std::string change;  // "+3.03%", or "" when not two numbers
  // A figure inside an array (per device, per link, per stage): summarised after the run's own.
  bool per_device = false;
  bool in_training = false;  // under "training": listed first
  double magnitude = 0;      // |relative change|, to pick the largest per-device moves (infinite: not two numbers)
};

struct CheckOutcome {
  std::size_t results = 0;  // schedules re-run
  std::size_t figures = 0;  // leaves compared
  std::vector<MovedFigure> moved;
  // What changed under the figures, from the results' "provenance": the ppsim version or revision,
  // the model, the hardware profile (provenance.hpp). Named before the figures.
  std::vector<std::string> causes;
};

// Throws InputError for a baseline that cannot be read or is not such an output (exit 2), and what
// re-running throws (a ScheduleError: exit 3).
CheckOutcome check_baseline(const std::string& path, const CheckOptions& options);

// One summary line when nothing moved; else a line, what changed under the figures, and the table of
// the figures that moved: the training figures first, then the rest of the run's own (the first
// kMaxMovedRows, then how many more), then one line counting the per-device, per-link and per-stage
// figures that moved with the kLargestDetailRows largest of them.
inline constexpr std::size_t kMaxMovedRows = 50;
inline constexpr std::size_t kLargestDetailRows = 5;
std::string check_report(const std::string& path, const CheckOptions& options, const CheckOutcome& outcome);

}  // namespace ppsim
