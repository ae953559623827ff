// SPDX-License-Identifier: Apache-2.0
#include "study/run/formulas.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "models/transformer/context_parallel.hpp"
#include "models/sliced_cost_model.hpp"
#include "models/uniform_cost_model.hpp"
#include "schedules/registry.hpp"
#include "sim/engine.hpp"
#include "sim/report/format.hpp"
#include "sim/ring_replay.hpp"
#include "study/common/errors.hpp"
#include "study/run/study.hpp"

namespace ppsim {
namespace {

bool agrees(double predicted, double simulated) {
  return std::fabs(predicted - simulated) <= kFormulaTolerance * std::max(1.0, std::fabs(predicted));
}

UniformCostModel cost_model_for(const FormulaInput& in) {
  UniformCosts costs;
  if (in.overlap) costs.overlap = Duration{*in.overlap};
  costs.forward = Duration{in.forward};
  costs.backward = Duration{in.backward};
  costs.weight = Duration{in.weight};
  costs.weight_stash_fraction = in.weight_stash_fraction;
  costs.latency = Duration{in.latency};
  if (in.transfer > 0) {
    costs.message_bytes = ByteCount{1};
    costs.bandwidth = Bandwidth{1 / in.transfer};
  }
  return UniformCostModel(costs);
}

std::string show(double value) { return format_figure(value); }

}  // namespace

std::optional<FormulaInput> formula_input(const Scenario& scenario) {
  const auto weights = resolved_weight(scenario);
  if (scenario.forward.size() != 1 || scenario.backward.size() != 1 || weights.size() != 1 ||
      scenario.message_bytes.size() != 1) {
    return std::nullopt;
  }
  FormulaInput in;
  in.params = scenario.params;
  in.forward = scenario.forward[0].value;
  in.backward = scenario.backward[0].value;
  in.weight = weights[0].value;
  in.weight_stash_fraction = scenario.weight_stash_fraction;
  if (scenario.overlap) in.overlap = scenario.overlap->value;
  in.latency = scenario.latency.value;
  const auto bytes = static_cast<double>(scenario.message_bytes[0].value);
  in.transfer = bytes == 0 ? 0.0 : bytes / scenario.bandwidth.value;
  return in;
}

double simulated_figure(const Result& result, Figure figure, int device) {
  switch (figure) {
    case Figure::kMakespan:
      return result.makespan;
    case Figure::kBubbleRatio:
      return result.bubble_ratio;
    case Figure::kBubbleOverhead:
      return result.bubble_overhead;
    case Figure::kMessages:
      return static_cast<double>(result.messages);
    case Figure::kPeakStashed:
      return result.per_device[static_cast<std::size_t>(device)].peak_stashed;
    case Figure::kDeviceBubble: {
      const DeviceFigures& figures = result.per_device[static_cast<std::size_t>(device)];
      return figures.end - figures.start - figures.busy;
    }
  }
  return 0;
}

std::vector<ClosedFormNote> closed_form_notes(const Scenario& scenario, const Report& report) {
  std::vector<ClosedFormNote> notes;
  const ScheduleInfo* info = find_schedule(report.schedule);
  if (info == nullptr || !info->generated()) return notes;  // a custom schedule has no closed form
  // A transformer study's costs come from its model, per stage, not from the scenario's F and B.
  const auto input = scenario.model.empty() ? formula_input(scenario_for_schedule(scenario, *info)) : std::nullopt;
  for (const ClosedForm& form : closed_forms()) {
    if (form.schedule != report.schedule) continue;
    const bool holds = input && form.holds(*input);
    const int devices = form.per_device() ? report.result.p : 1;
    for (int d = 0; d < devices; ++d) {
      ClosedFormNote note;
      note.figure = form.figure;
      note.device = form.per_device() ? d : -1;
      note.expression = std::string(form.expression);
      note.holds = holds;
      note.simulated = simulated_figure(report.result, form.figure, d);
      note.verdict = input ? "outside: " + std::string(form.regime) : "outside: per-stage costs";
      if (holds) {
        note.predicted = form.value(*input, d);
        note.verdict = agrees(note.predicted, note.simulated) ? "agrees" : "DIFFERS";
      }
      notes.push_back(std::move(note));
    }
  }
  return notes;
}

void write_formulas(const Scenario& scenario, std::ostream& out) {
  const auto reports = simulate_all(scenario, false);
  std::ostringstream text;
  TextTable table({Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight, Align::kRight, Align::kLeft});
  table.add_row({"schedule", "figure", "closed form", "predicted", "simulated", "regime"});
  for (const Report& report : reports) {
    for (const ClosedFormNote& note : closed_form_notes(scenario, report)) {
      table.add_row({report.schedule + " (v=" + std::to_string(report.params.v) + ")", note_figure_name(note),
                     note.expression, note.holds ? show(note.predicted) : "-", show(note.simulated), note.verdict});
    }
  }
  text << "closed forms at p=" << scenario.params.p << " m=" << scenario.params.m
       << " (costs per stage at v = 1 are split over a schedule's chunks unless -v is given)\n";
  text << table.render();
  out << text.str();
}

namespace {

// Context parallelism's ring (--cp-comm p2p): the closed form the cost model charges against the
// ring replayed step by step, over c = 1..16 ranks and transfers from free to four times a step's
// compute, the forward's blocks and the backward's (twice the bytes). Returns the checks made.
std::size_t check_ring_attention(std::ostream& report, std::size_t& deviations) {
  std::size_t checks = 0;
  for (int ranks = 1; ranks <= 16; ++ranks) {
    for (const double compute : {1.0, 3.7}) {
      const double step = compute / ranks;
      for (const double transfer : {0.0, 0.01, 0.1, step, 0.5 * step, 1.5 * step, 0.5, 4.0 * step}) {
        for (const double bytes : {1.0, 2.0}) {  // the forward's K and V; the backward's with their gradients
          const double predicted = compute + ring_attention_exposed(compute, bytes * transfer, ranks);
          const double simulated =
              replay_ring_attention(std::vector<double>(static_cast<std::size_t>(ranks), step), bytes * transfer);
          ++checks;
          if (agrees(predicted, simulated)) continue;
          ++deviations;
          report << "DEVIATION ring-attention time = A/c + (c-1) max(A/c, X) at c=" << ranks << " A=" << compute
                 << " X=" << bytes * transfer << ": closed form " << show(predicted) << ", replayed " << show(simulated)
                 << "\n";
        }
      }
    }
  }
  return checks;
}

}  // namespace

bool check_formulas(std::ostream& out, const FormulaGrid& grid) {
  // Cost ratios (F, B, W): the usual B = 2F, equal F and B, a slow backward, and uneven decimals.
  const std::vector<std::tuple<double, double, double>> costs = {{1, 2, 1}, {1, 1, 0.5}, {1, 3, 1}, {0.7, 1.3, 0.4}};
  const std::vector<double> latencies = {0, 0.3};
  Engine engine;
  std::size_t checks = 0;
  std::size_t deviations = 0;
  std::map<std::string_view, std::size_t> checks_per_schedule;
  std::map<std::string_view, std::set<const ClosedForm*>> forms_per_schedule;  // the forms that held somewhere
  std::ostringstream report;

  const auto chosen = [&](const ScheduleInfo& info) {
    return grid.schedules.empty() ||
           std::find(grid.schedules.begin(), grid.schedules.end(), info.name) != grid.schedules.end();
  };
  for (const ScheduleInfo& info : schedule_registry()) {
    if (!chosen(info) || !info.generated()) continue;
    for (int p = grid.p.value_or(1); p <= grid.p.value_or(8); ++p) {
      for (int v = grid.v.value_or(1); v <= grid.v.value_or(3); ++v) {
        for (int m = grid.m.value_or(1); m <= grid.m.value_or(4 * p); ++m) {
          const ScheduleParams params{p, m, v};
          if (info.check(params)) continue;
          const Program program = info.build(params);
          for (const auto& [forward, backward, weight] : costs) {
            for (const double latency : latencies) {
              FormulaInput in;
              in.params = params;
              in.forward = forward;
              in.backward = backward;
              in.weight = weight;
              in.latency = latency;
              std::optional<Result> result;
              for (const ClosedForm& form : closed_forms()) {
                if (form.schedule != info.name || !form.holds(in)) continue;
                forms_per_schedule[info.name].insert(&form);
                if (!result) {
                  // F and B are a micro-batch's: Seq1F1B's slices cost 1/k of them each.
                  SimulationOutcome outcome =
                      program.units_per_microbatch > 1
                          ? engine.run(program, SlicedCostModel(std::make_unique<UniformCostModel>(cost_model_for(in)),
                                                                program.units_per_microbatch))
                          : engine.run(program, cost_model_for(in));
                  if (!outcome.result) throw ScheduleError(std::string(info.name) + " did not finish", "");
                  result = std::move(outcome.result);
                }
                const int devices = form.per_device() ? p : 1;
                for (int d = 0; d < devices; ++d) {
                  const double predicted = form.value(in, d);
                  const double simulated = simulated_figure(*result, form.figure, d);
                  ++checks;
                  ++checks_per_schedule[info.name];
                  if (agrees(predicted, simulated)) continue;
                  ++deviations;
                  report << "DEVIATION " << info.name << " " << figure_name(form.figure)
                         << (form.per_device() ? " d" + std::to_string(d) : "") << " = " << form.expression
                         << " at p=" << p << " m=" << m << " v=" << v << " F=" << forward << " B=" << backward
                         << " W=" << weight << " L=" << latency << ": closed form " << show(predicted) << ", simulated "
                         << show(simulated) << "\n";
                }
              }
            }
          }
        }
      }
    }
  }
  if (checks == 0) {
    throw InputError("formulas --check: no closed form holds for the schedules and sizes given (-s, -p, -v, -m)");
  }
  // The ring is no schedule: it runs with the whole grid, not with one narrowed to schedules or sizes.
  const bool whole_grid = grid.schedules.empty() && !grid.p && !grid.v && !grid.m;
  const std::size_t ring_checks = whole_grid ? check_ring_attention(report, deviations) : 0;
  out << report.str();
  std::size_t forms_checked = 0;
  for (const auto& [name, count] : checks_per_schedule) {
    const std::size_t forms = forms_per_schedule[name].size();
    forms_checked += forms;
    out << name << ": " << forms << (forms == 1 ? " closed form, " : " closed forms, ") << count << " checks\n";
  }
  if (whole_grid) out << "ring attention (--cp-comm p2p): " << ring_checks << " checks against a step-by-step replay\n";
  // The forms this grid checked (narrowed by -s, -p, -v, -m), not every form there is.
  out << "formulas --check: " << forms_checked + (whole_grid ? 1 : 0) << " closed forms, "
      << checks + ring_checks << " checks, " << deviations << " beyond " << kFormulaTolerance << " relative\n";
  return deviations == 0;
}

}  // namespace ppsim
