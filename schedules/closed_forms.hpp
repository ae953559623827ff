// SPDX-License-Identifier: Apache-2.0
#pragma once
// The published closed forms of each schedule: what a figure should be, in which regime, and
// where the formula comes from. `ppsim formulas` prints them beside the simulated figures and
// `ppsim formulas --check` compares the two over a grid, so users can pin them in their CI.

#include <optional>
#include <span>
#include <string_view>

#include "schedules/program.hpp"

namespace ppsim {

// The inputs a closed form is written in: uniform per-stage costs and uniform links.
struct FormulaInput {
  ScheduleParams params;
  double forward = 1;   // F per stage
  double backward = 2;  // B = I + W per stage
  double weight = 1;    // W per stage
  double weight_stash_fraction = 0.5;
  std::optional<double> overlap;  // an overlapped F&B op's time; unset: F + B
  double latency = 0;   // per message
  double transfer = 0;  // bytes / bandwidth of one message
};

// The figures a closed form can predict, named as in the output.
// kDeviceBubble is a device's idle time inside its own span (end - start - busy): the "bubble" of
// the zero-bubble paper, which counts from the device's first op to its last.
enum class Figure { kMakespan, kBubbleRatio, kBubbleOverhead, kMessages, kPeakStashed, kDeviceBubble };
std::string_view figure_name(Figure figure);

struct ClosedForm {
  std::string_view schedule;  // registry name
  Figure figure;
  std::string_view expression;  // the formula as people write it
  std::string_view regime;      // when it holds, in words
  std::string_view source;      // paper or derivation
  // Whether `input` is inside the regime.
  bool (*holds)(const FormulaInput& input);
  // The predicted value; `device` is used by per-device figures (peak_stashed).
  double (*value)(const FormulaInput& input, int device);
  bool per_device() const { return figure == Figure::kPeakStashed || figure == Figure::kDeviceBubble; }
};

std::span<const ClosedForm> closed_forms();

}  // namespace ppsim
