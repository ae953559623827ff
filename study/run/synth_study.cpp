// SPDX-License-Identifier: Apache-2.0
#include "study/run/synth_study.hpp"

#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "schedules/schedule_file.hpp"
#include "sim/report/format.hpp"
#include "sim/report/reporter.hpp"
#include "study/common/errors.hpp"
#include "study/common/output_file.hpp"
#include "study/run/study.hpp"
#include "study/run/transformer_study.hpp"
#include "synth/search.hpp"
#include "synth/stage_costs.hpp"

namespace ppsim {
namespace {

// The search replays its candidates thousands of times: sizes beyond these would take minutes.
constexpr int kMaxSynthStages = 256;
constexpr double kMaxSynthOps = 1e6;

std::int64_t memory_limit_of(const SynthSettings& settings) {
  if (settings.memory_limit.empty()) {
    throw InputError("--memory-limit: synth needs the activation memory each device may hold, e.g. 8GiB");
  }
  const Parsed<ByteCount> parsed = parse_bytes(settings.memory_limit);
  if (!parsed.ok) throw InputError("--memory-limit: " + parsed.error);
  if (parsed.value.value <= 0) throw InputError("--memory-limit: must be above 0 bytes");
  return parsed.value.value;
}

double time_limit_of(const SynthSettings& settings) {
  if (settings.time_limit.empty()) return 10;
  const Parsed<Duration> parsed = parse_duration(settings.time_limit);
  if (!parsed.ok) throw InputError("--time-limit: " + parsed.error);
  if (parsed.value.value <= 0 || parsed.value.value > 3600) {
    throw InputError("--time-limit: must be above 0 and at most 1 h");
  }
  return parsed.value.value;
}

const char* synth_stop_name(SynthStop stop) {
  switch (stop) {
    case SynthStop::kPass:
      return "pass";
    case SynthStop::kWindow:
      return "window";
    case SynthStop::kBudget:
      return "budget";
    case SynthStop::kTimeLimit:
      return "time_limit";
  }
  return "pass";
}

nlohmann::ordered_json synth_json(const SynthOutcome& outcome, std::int64_t limit, const std::string& placement) {
  nlohmann::ordered_json json;
  json["memory_limit"] = limit;
  json["placement"] = placement;
  json["makespan"] = outcome.makespan;
  json["peak_activation_bytes"] = outcome.peak_activation_bytes;
  json["origin"] = outcome.origin;
  json["moves"] = outcome.moves;
  json["replays"] = outcome.replays;
  json["stopped_by_time_limit"] = outcome.stopped_by_time_limit;
  json["stopped_by"] = synth_stop_name(outcome.stop);
  json["convergence_window"] = outcome.window;
  nlohmann::ordered_json seeds = nlohmann::ordered_json::array();
  for (const SynthSeed& seed : outcome.registry_seeds) {
    seeds.push_back({{"schedule", seed.origin},
                     {"makespan", seed.makespan},
                     {"peak_activation_bytes", seed.peak_activation_bytes}});
  }
  json["registry_schedules"] = seeds;
  return json;
}

void write_synth_table(std::ostream& out, const SynthOutcome& outcome, const Scenario& scenario, std::int64_t limit,
                       const std::string& placement) {
  out << "synth: p=" << scenario.params.p << " m=" << scenario.params.m << " v=" << scenario.params.v << ", "
      << placement << " placement, at most " << format_bytes(limit) << " of activations per device\n";
  out << "found: makespan " << format_figure(outcome.makespan) << ", peak " << format_bytes(outcome.peak_activation_bytes)
      << ", from " << outcome.origin << (outcome.moves > 0 ? " and " + std::to_string(outcome.moves) + " swaps" : "")
      << " (" << outcome.replays << " replays";
  if (outcome.stop == SynthStop::kTimeLimit) out << ", stopped by --time-limit";
  if (outcome.stop == SynthStop::kWindow) out << ", converged: no better order in " << outcome.window << " in a row";
  if (outcome.stop == SynthStop::kBudget) out << ", the replay budget spent";
  out << ")\n";
  if (outcome.registry_seeds.empty()) {
    out << "registry schedules within the limit: none\n";
  } else {
    out << "registry schedules within the limit:";
    for (const SynthSeed& seed : outcome.registry_seeds) {
      out << " " << seed.origin << " " << format_figure(seed.makespan) << " (" << format_bytes(seed.peak_activation_bytes)
          << ")";
    }
    out << "\n";
  }
  out << "\n";
}

}  // namespace

void write_synth(const Scenario& given, const SynthSettings& settings, std::ostream& out) {
  check_scenario(given);
  // A transformer study reads its files once and takes m from --global-batch, as run does.
  Scenario scenario = resolve_transformer_scenario(given);
  const int v = scenario.params.v;
  if (v != 1 && v != 2) {
    throw InputError(scenario.source_of("v") + ": synth searches v = 1 or v = 2 chunks per device (got " +
                     std::to_string(v) + ")");
  }
  const std::string placement = settings.placement.empty() ? (v == 2 ? "v" : "loop") : settings.placement;
  if (placement != "loop" && placement != "v") {
    throw InputError("--placement: loop (stage s on device s mod p) or v (device d holds stages d and 2p-1-d), got " +
                     quoted_excerpt(placement));
  }
  if (placement == "v" && v != 2) throw InputError("--placement: v places two chunks per device; it needs -v 2");
  if (scenario.params.sequence_splits > 0) {
    throw InputError(scenario.source_of("sequence-splits") + ": synth searches orders of whole micro-batches, not "
                     "seq1f1b's sequence slices");
  }
  const std::int64_t limit = memory_limit_of(settings);
  const double time_limit = time_limit_of(settings);
  const int p = scenario.params.p;
  const int m = scenario.params.m;
  if (p * v > kMaxSynthStages) {
    throw InputError(scenario.source_of("p") + ": synth searches up to " + std::to_string(kMaxSynthStages) +
                     " stages (p*v), got " + std::to_string(p * v));
  }
  if (3.0 * p * v * m > kMaxSynthOps) {
    throw InputError(scenario.source_of("m") + ": synth searches up to 1e6 ops (3*p*v*m), got " +
                     format_figure(3.0 * p * v * m));
  }
  split_costs_over_chunks(scenario, "synth");
  scenario.schedules = {"custom"};
  scenario.schedule_file = settings.output;
  const std::vector<int> stage_device = placement == "v" ? v_stage_mapping(p) : loop_stage_mapping(p, v);
  const auto costs = make_cost_model(scenario, stage_device);
  std::int64_t largest_stash = 0;
  for (int s = 0; s < p * v; ++s) largest_stash = std::max(largest_stash, costs->activation_bytes(s));
  if (largest_stash == 0) {
    throw InputError("--memory-limit: the stashes take no memory here; give --activation-bytes or --model");
  }
  SynthRequest request;
  request.shape = {p, m, stage_device};
  request.v = v;
  request.memory_limit = limit;
  request.time_limit = time_limit;
  request.engine.comm = engine_comm_mode(scenario, "custom");
  SynthOutcome outcome;
  try {
    outcome = synthesize(request, *costs);
  } catch (const std::invalid_argument&) {
    throw InputError("--memory-limit: no order fits " + format_bytes(limit) +
                     " per device; a device must hold at least one stash of each of its stages at a time (the "
                     "largest is " + format_bytes(largest_stash) + ")");
  }
  Engine engine;
  const std::vector<Report> reports{simulate_program(scenario, "custom", outcome.program, scenario.timeline, engine)};
  std::ostringstream figures;
  ReportOptions options;
  options.timeline = scenario.timeline;  // the found order's ASCII timeline (JSON: its spans)
  make_reporter(scenario.format)->write(figures, reports, options);
  std::ostringstream text;
  if (scenario.format == OutputFormat::kJson) {
    nlohmann::ordered_json json = nlohmann::ordered_json::parse(figures.str());
    json["synth"] = synth_json(outcome, limit, placement);
    text << json.dump(2) << '\n';
  } else if (scenario.format == OutputFormat::kTable) {
    write_synth_table(text, outcome, scenario, limit, placement);
    text << figures.str();
  } else {
    text << figures.str();
  }
  if (!settings.output.empty()) write_file_atomically(settings.output, write_schedule_csv(outcome.program), "-o");
  out << text.str();
}

}  // namespace ppsim
