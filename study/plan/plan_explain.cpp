// SPDX-License-Identifier: Apache-2.0
#include "study/plan/plan_explain.hpp"

#include <algorithm>
#include <cstdio>

#include "models/transformer/training_step.hpp"

namespace ppsim {
namespace {

std::string seconds(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", value);
  return text;
}

std::string percent(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * ratio);
  return text;
}

// The term where `a` spends most more than `b`, and how much.
std::pair<std::size_t, double> largest_excess(const StepBreakdown& a, const StepBreakdown& b) {
  const auto x = a.terms();
  const auto y = b.terms();
  std::size_t worst = 0;
  for (std::size_t i = 1; i < x.size(); ++i) {
    if (x[i] - y[i] > x[worst] - y[worst]) worst = i;
  }
  return {worst, x[worst] - y[worst]};
}

std::string memory_note(const PlanEntry& entry, std::int64_t capacity) {
  return "peak " + format_gib(static_cast<std::int64_t>(entry.peak_memory)) + " of " + format_gib(capacity);
}

}  // namespace

StepBreakdown step_breakdown(const Report& report) {
  const TrainingFigures& training = *report.training;
  StepBreakdown parts;
  parts.bubble = training.pipeline_time * report.result.bubble_ratio;
  const double busy = training.pipeline_time - parts.bubble;
  parts.recompute = training.hfu > 0 ? busy * std::max(0.0, 1 - training.mfu / training.hfu) : 0;
  parts.compute = busy - parts.recompute;
  parts.optimizer = training.optimizer_time;
  parts.exposed = std::max(0.0, training.step_time - training.pipeline_time - training.optimizer_time);
  return parts;
}

void explain_plan(PlanResult& result) {
  if (result.top.empty()) return;
  const std::int64_t capacity = result.base.resolved_hardware->memory_capacity;
  const PlanEntry& best = result.top.front();
  const StepBreakdown best_parts = step_breakdown(best.report);
  const double best_step = best.report.training->step_time;
  for (std::size_t rank = 0; rank < result.top.size(); ++rank) {
    PlanEntry& entry = result.top[rank];
    const StepBreakdown parts = step_breakdown(entry.report);
    const double step = entry.report.training->step_time;
    std::string why;
    if (rank == 0) {
      if (result.top.size() == 1) {
        why = "the only layout found that fits";
      } else {
        const PlanEntry& second = result.top[1];
        const auto [term, excess] = largest_excess(step_breakdown(second.report), parts);
        const double gap = second.report.training->step_time / step - 1;
        why = percent(gap) + " ahead of #2, mostly " + StepBreakdown::kNames[term] + " (" + seconds(excess) +
              " less)";
      }
    } else {
      const auto [term, excess] = largest_excess(parts, best_parts);
      why = percent(step / best_step - 1) + " behind #1, mostly " + StepBreakdown::kNames[term] + " (" +
            seconds(excess) + " more)";
    }
    if (entry.report.training->splits_judged > 0) why += "; layer split searched";
    entry.why = why + "; " + memory_note(entry, capacity);
  }
  for (PlanEntry& entry : result.memory_runners_up) {
    const double step = entry.report.training->step_time;
    entry.why = percent(1 - step / best_step) + " faster than #1, but " + entry.report.training->memory_verdict;
  }
}

}  // namespace ppsim
