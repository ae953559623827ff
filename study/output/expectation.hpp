// SPDX-License-Identifier: Apache-2.0
#pragma once
// --expect on run, compare and sweep: a condition on a figure that a CI job pins, e.g.
// "bubble_ratio <= 0.1", "peak_memory_bytes < 80 GiB", "fits" or "!fits". The figures are those
// of a sweep point (report_figures): the device that needs most, the training step's with a model.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/report/report.hpp"
#include "study/sweep/sweep_runner.hpp"
#include "study/sweep/sweep_study.hpp"

namespace ppsim {

struct Expectation {
  enum class Compare { kLess, kLessEqual, kGreater, kGreaterEqual, kEqual, kNotEqual, kTrue, kFalse };
  std::string text;    // as given, for the failure's message
  std::string figure;  // a figure's name, as the sweep's output columns name it
  Compare compare = Compare::kTrue;
  double value = 0;  // in base units: bytes, seconds (or time units)
};

// "NAME OP VALUE" (OP one of < <= > >= == !=; VALUE a number, with a unit where the figure is
// bytes or a time), or "NAME" / "!NAME" for `fits`. InputError naming `flag` otherwise.
Expectation parse_expectation(std::string_view text, std::string_view flag);

// Each of `texts`, parsed before anything runs, so that a mistyped one is bad input without a run.
std::vector<Expectation> parse_expectations(const std::vector<std::string>& texts, std::string_view flag);

// The figures --expect may name, in the sweep output's order.
std::vector<std::string_view> expectation_figures();

// Whether `figures` meet `expectation`.
bool holds(const Expectation& expectation, const PointFigures& figures);

// The figure's value as a failure reports it ("0.2727", "61.3 GiB", "true").
std::string shown_value(const Expectation& expectation, const PointFigures& figures);

// One line per expectation a report misses (run, compare: every schedule must meet each):
// `--expect "bubble_ratio <= 0.1" failed: 1f1b has bubble_ratio 0.272727`. Empty when all hold.
std::vector<std::string> expectation_failures(const std::vector<Expectation>& expectations,
                                              std::span<const Report> reports);

// A sweep's expectations hold for its top point, the best by the study's objective (the first
// row of the summary's top table); none holds when no point ran.
std::vector<std::string> expectation_failures(const std::vector<Expectation>& expectations, const Study& study,
                                              const std::vector<PointResult>& points);

}  // namespace ppsim
