// SPDX-License-Identifier: Apache-2.0
#pragma once
// Why each planned layout ranks where it does: its step split into compute, recomputation, pipeline
// bubble, exposed communication and the optimizer step, set against the layout it is compared with.

#include <array>
#include <string>

#include "sim/report/report.hpp"
#include "study/plan/plan.hpp"

namespace ppsim {

// A step's seconds by what they are spent on; the five add up to the step time.
struct StepBreakdown {
  double compute = 0;    // the busiest-on-average device's ops, their tensor- and context-parallel collectives
  double recompute = 0;  // of the ops' time, the forward work re-run in the backward
  double bubble = 0;     // the pipeline's idle time per device, on average
  double exposed = 0;    // data-parallel, FSDP and embedding communication not hidden behind compute
  double optimizer = 0;  // the optimizer step and what it waits for
  static constexpr std::array<const char*, 5> kNames{"compute", "recomputation", "bubble", "exposed communication",
                                                     "optimizer step"};
  std::array<double, 5> terms() const { return {compute, recompute, bubble, exposed, optimizer}; }
};

StepBreakdown step_breakdown(const Report& report);

// Fills each top entry's and runner-up's `why`.
void explain_plan(PlanResult& result);

}  // namespace ppsim
