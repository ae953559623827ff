// SPDX-License-Identifier: Apache-2.0
#include "study/trace/trace_run.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "study/common/errors.hpp"

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

void check_trace_shape(TraceRun& run, const std::string& file) {
  std::int64_t ops = 0;
  for (std::size_t d = 0; d < run.devices.size(); ++d) {
    std::int64_t here = 0;
    for (const TracedItem& item : run.devices[d]) {
      if (!std::isfinite(item.start) || !std::isfinite(item.end) || !std::isfinite(item.duration)) {
        throw InputError(excerpt(file) + ": device " + std::to_string(d) + ": a time beyond the trace's range");
      }
      here += item.compute() ? 1 : 0;
    }
    if (here == 0)
      throw InputError(excerpt(file) + ": device " + std::to_string(d) + " runs no op (each device of the run must)");
    ops += here;
  }
  if (static_cast<double>(run.num_microbatches) * std::max(1, run.num_stages()) >
      8.0 * static_cast<double>(ops) + 4096) {
    throw InputError(excerpt(file) + ": micro-batch " + std::to_string(run.num_microbatches - 1) +
                     " is named, but the step runs " + std::to_string(ops) +
                     " ops: micro-batches count from 0 on every stage");
  }
  const int p = run.num_devices();
  std::erase_if(run.messages, [&](const TracedMessage& m) {
    return m.src < 0 || m.src >= p || m.dst < 0 || m.dst >= p || m.from.stage < 0 || m.from.stage >= run.num_stages() ||
           !std::isfinite(m.depart_start) || !std::isfinite(m.depart_end) || !std::isfinite(m.arrival);
  });
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + (upper - lower) / 2;
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
