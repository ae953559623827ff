// SPDX-License-Identifier: Apache-2.0
#include "study/trace/trace_run.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ppsim {

Program TraceRun::program() const {
  Program program;
  program.num_devices = num_devices();
  program.num_microbatches = num_microbatches;
  program.num_pipelines = num_pipelines;
  program.stage_device = stage_device;
  program.actions.resize(devices.size());
  for (std::size_t d = 0; d < devices.size(); ++d) {
    for (const TracedItem& item : devices[d]) {
      if (!item.compute()) continue;
      program.actions[d].push_back(item.action);
      if (item.action.fused_with_next) program.actions[d].push_back(item.partner);
    }
  }
  return program;
}

double TraceRun::step_start() const {
  double start = std::numeric_limits<double>::infinity();
  for (const auto& items : devices) {
    if (!items.empty()) start = std::min(start, items.front().start);
  }
  return std::isinf(start) ? 0 : start;
}

double TraceRun::step_end() const {
  double end = -std::numeric_limits<double>::infinity();
  for (const auto& items : devices) {
    for (const TracedItem& item : items) end = std::max(end, item.end);
  }
  return std::isinf(end) ? 0 : end;
}

bool has_stage_input(const Action& action, const PipelineShape& shape) {
  if (action.op == Op::kForward) return !shape.first(action.stage);
  if (is_backward_input(action.op)) return !shape.last(action.stage);
  return false;
}

Action stage_input_of(const Action& action) {
  if (action.op == Op::kForward) return {action.stage - 1, Op::kForward, action.microbatch};
  return {action.stage + 1, Op::kBackward, action.microbatch};
}

}  // namespace ppsim
