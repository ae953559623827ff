// SPDX-License-Identifier: Apache-2.0
#include "study/run/closed_form_point.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "schedules/closed_forms.hpp"
#include "study/run/formulas.hpp"

namespace ppsim {
namespace {

// Schedules whose stashes are whole micro-batches (no I/W split), so that peak activation bytes
// are the peak stash count times one stash.
constexpr std::array<std::string_view, 4> kWholeStashSchedules = {"gpipe", "1f1b", "interleaved-1f1b",
                                                                  "looped-bfs"};

// Every time the engine adds up is a sum of F's and B's; when both are multiples of 2^-20 and no
// sum reaches 2^53 of those units, every addition is exact, in any order, and so is the formula.
constexpr int kUnitExponent = 20;
bool exact_unit(double value) {
  const double scaled = std::ldexp(value, kUnitExponent);
  return value >= 0 && std::isfinite(value) && scaled == std::floor(scaled);
}

const ClosedForm* holding(std::string_view schedule, Figure figure, const FormulaInput& in) {
  for (const ClosedForm& form : closed_forms()) {
    if (form.schedule == schedule && form.figure == figure && form.holds(in)) return &form;
  }
  return nullptr;
}

}  // namespace

std::optional<Report> closed_form_report(const Scenario& scenario, std::string_view schedule) {
  if (!scenario.model.empty() || scenario.comm == CommMode::kPaired) return std::nullopt;
  if (std::find(kWholeStashSchedules.begin(), kWholeStashSchedules.end(), schedule) == kWholeStashSchedules.end()) {
    return std::nullopt;
  }
  if (scenario.activation_bytes.size() != 1 || scenario.static_bytes.size() != 1) return std::nullopt;
  const std::optional<FormulaInput> in = formula_input(scenario);
  if (!in || in->latency != 0 || in->transfer != 0) return std::nullopt;
  const ClosedForm* makespan_form = holding(schedule, Figure::kMakespan, *in);
  const ClosedForm* peak_form = holding(schedule, Figure::kPeakStashed, *in);
  const ClosedForm* messages_form = holding(schedule, Figure::kMessages, *in);
  if (makespan_form == nullptr || peak_form == nullptr || messages_form == nullptr) return std::nullopt;

  // What a simulation would refuse (make_cost_model: W <= B), the fast path declines, so that it
  // skips the same points.
  if (!(in->weight >= 0 && in->weight <= in->backward)) return std::nullopt;

  const int p = scenario.params.p;
  const double ops_per_device = static_cast<double>(scenario.params.m) * scenario.params.v;
  if (!exact_unit(in->forward) || !exact_unit(in->backward)) return std::nullopt;
  // Every time the engine adds up is at most the makespan (a device's start, end or busy time) or a
  // device's busy time; the bound adds one op for the sum in progress.
  const double makespan = makespan_form->value(*in, 0);
  const double bound = std::max(makespan, ops_per_device * (in->forward + in->backward)) + in->forward + in->backward;
  if (!(std::ldexp(bound, kUnitExponent) < 0x1p53)) return std::nullopt;

  Report report;
  report.schedule = std::string(schedule);
  report.params = scenario.params;
  report.samples_per_microbatch = scenario.layout.micro_batch;
  Result& result = report.result;
  result.p = p;
  result.m = scenario.params.m;
  result.stages = p * scenario.params.v;
  result.makespan = makespan;
  result.messages = static_cast<std::int64_t>(messages_form->value(*in, 0));
  // Every device runs m·v forwards and m·v backwards of one chunk each.
  const double busy = ops_per_device * in->forward + ops_per_device * in->backward;
  const std::int64_t stash = scenario.activation_bytes[0].value;
  const std::int64_t static_bytes = scenario.static_bytes[0].value;
  result.per_device.reserve(static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d) {
    DeviceFigures device;
    device.busy = busy;
    device.ops = static_cast<std::int64_t>(2 * ops_per_device);
    device.peak_stashed = peak_form->value(*in, d);
    device.static_bytes = static_bytes;
    device.peak_activation_bytes = static_cast<std::int64_t>(device.peak_stashed) * stash;
    device.peak_memory_bytes = static_bytes + device.peak_activation_bytes;
    result.total_busy += device.busy;
    result.compute_ops += device.ops;
    result.per_device.push_back(device);
  }
  // As Engine::summarize computes them from the same exact operands.
  const double capacity = p * result.makespan;
  const double idle = std::max(0.0, capacity - result.total_busy);
  result.bubble_ratio = capacity > 0 ? idle / capacity : 0.0;
  result.bubble_overhead = result.total_busy > 0 ? idle / result.total_busy : 0.0;
  for (DeviceFigures& device : result.per_device) {
    device.idle = std::max(0.0, result.makespan - device.busy);
    device.bubble_ratio = result.makespan > 0 ? device.idle / result.makespan : 0.0;
  }
  result.comm_ratio = 0;  // free links are busy for no time
  return report;
}

}  // namespace ppsim
