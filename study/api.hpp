// SPDX-License-Identifier: Apache-2.0
#pragma once
// The library's public face: every operation of ppsim, as the command line (tools/ppsim) and the
// Python module (tools/python) both call it. A front end turns its arguments into a Scenario or a
// Study, calls one of these and prints or returns what comes back; nothing else is theirs.
//
// Failures are exceptions with the command line's one-line messages: InputError for bad input
// (exit 2; ppsim.InputError in Python), ScheduleError for a schedule that is invalid or deadlocks
// (exit 3; ppsim.ScheduleError), JsonInputError for a bad model or hardware file (exit 2).

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/json/json_input_error.hpp"
#include "sim/report/report.hpp"
#include "study/check.hpp"
#include "study/common/errors.hpp"
#include "study/common/version.hpp"
#include "study/input/preset_list.hpp"
#include "study/input/scenario.hpp"
#include "study/output/expectation.hpp"
#include "study/output/pictures.hpp"
#include "study/plan/plan.hpp"
#include "study/run/schedule_loader.hpp"
#include "study/run/synth_study.hpp"
#include "study/sweep/sweep_runner.hpp"
#include "study/sweep/sweep_study.hpp"

namespace ppsim {

// The ASCII timeline's width where no terminal says otherwise.
inline constexpr std::size_t kDefaultTimelineWidth = 160;

// Settings as a config file holds them: a JSON object whose keys are the long option names. Errors
// name `origin` and the JSON path, as for a file ("ppsim.run: $.m: ..."). A config file, when
// given, is read first and the settings override it, as flags override -c.
Scenario scenario_from_settings(const nlohmann::json& settings, const std::string& origin,
                                const std::string& config_path = "");

// A schedule file names its schedule: schedule `custom` is implied unless the scenario names one.
// scenario_from_settings applies it; a front end that builds a scenario from flags calls it last.
void imply_custom_schedule(Scenario& scenario);

// ppsim run (one schedule) and ppsim compare (several, side by side: compare's layout, an array in
// JSON). Simulates every schedule of the scenario, writes its --format output to `out` and the
// pictures asked for; nothing reaches `out` unless every schedule simulated and every file was
// written. Returns the reports.
void check_run_schedules(const Scenario& scenario);  // run's rule: exactly one schedule
std::vector<Report> write_reports(const Scenario& scenario, bool side_by_side, const PictureFiles& pictures,
                                  std::ostream& out, std::size_t timeline_width = kDefaultTimelineWidth);
// The same for a caller that takes the figures as data (Python): the reports as JSON's value, and the
// pictures written; nullopt, with nothing run, for a JSON timeline (streamed as text: use
// write_reports). Returns the reports beside the value.
struct ReportsAsData {
  std::vector<Report> reports;
  nlohmann::ordered_json value;
};
std::optional<ReportsAsData> reports_as_data(const Scenario& scenario, bool side_by_side, const PictureFiles& pictures);

// compare without -s: GPipe against 1F1B.
void default_compare_schedules(Scenario& scenario);

// ppsim check: check_baseline and check_report (study/check.hpp). --expect: parse_expectation and
// expectation_failures (study/output/expectation.hpp).
// ppsim export: export_schedule (study/run/schedule_loader.hpp), a schedule's per-device actions as
// torch.distributed.pipelining's CSV (or JSON with --format json).
// ppsim models: write_preset_list (study/input/preset_list.hpp).

// ppsim synth: write_synth (study/run/synth_study.hpp), a schedule found by search under a memory limit.

// ppsim schedules: the registry as text, and as data (--format json): name, summary, constraints,
// source and default v of each schedule. ppsim models --format json: preset_list_json.
void write_schedule_list(std::ostream& out);
nlohmann::ordered_json schedule_list_json();

// ppsim formulas: the closed forms of the scenario's schedules (every schedule that accepts its
// sizes unless it names some) beside one simulation of each, written to `out`. With `check`, the
// grid of formulas --check instead, narrowed by the schedules and sizes the scenario names; returns
// whether every closed form agreed (always true without `check`).
bool write_formulas_study(Scenario scenario, bool check, std::ostream& out);

// ppsim sweep's files: runs the study's points (`options`: threads, shard, progress) and writes the
// points file (`output`: .csv or .jsonl), the page (`html`) and the summary's tables as JSON
// (`summary`: sweep_result_json without its points) asked for, all or none; "" asks for none.
// `output` "-" (kStdoutPath) writes the points as CSV to `points_out` instead, after the files.
// Returns the points, for the summary and sweep_result_json.
struct SweepFiles {
  std::string output;
  std::string html;
  std::string summary;
};
std::vector<PointResult> sweep_to_files(const Study& study, const SweepOptions& options, const SweepFiles& files,
                                        std::ostream* points_out = nullptr);

// "I/N" with 0 <= I < N, as --shard takes it; InputError otherwise.
void parse_shard(const std::string& text, std::size_t& index, std::size_t& count);

// ppsim merge: the shards' files joined into the file one machine would have written, at `output`
// ("-": as CSV to `merged_out`).
void merge_to_file(const std::string& output, const std::vector<std::string>& inputs,
                   std::ostream* merged_out = nullptr);

// ppsim sweep: every point of the study (run_sweep, in point order for any number of threads),
// and what the summary shows of them as data: "points" as the .jsonl file writes them, "top" and
// "pareto_front" (those points' rows), "choose_m" (per schedule, p and v: the point with the
// smallest m whose bubble is at most the target, or the best that ran) and the "summary" text.
nlohmann::ordered_json sweep_result_json(const Study& study, const std::vector<PointResult>& points,
                                         std::size_t shard_index = 0, std::size_t shard_count = 1,
                                         bool with_points = true);

// ppsim plan (study/plan/plan.hpp): the whole layout for N GPUs. Its settings as a JSON object (a
// plan file, or ppsim.plan's keywords) hold the plan's own keys, kPlanKeys, and any scenario setting
// of a config file; errors name `origin` and the JSON path. With `path`, the object was read from that
// file, and files it names are found beside it.
struct PlanRequest {
  Scenario scenario;
  PlanSettings settings;
};
inline constexpr std::string_view kPlanKeys[] = {"gpus", "top", "objective", "jobs", "framework", "split-budget"};
void apply_plan_settings(nlohmann::json settings, const std::string& origin, const std::string& path,
                         PlanRequest& request);
// One of kPlanKeys from JSON (a number or a string; a flag's value as a string); `source` names it.
void apply_plan_option(std::string_view key, const nlohmann::json& value, const std::string& source,
                       PlanSettings& settings);
// Plans and writes: the page at `html` ("" none) first, then the table or JSON (the scenario's
// --format) to `out`, nothing to `out` when the page cannot be written.
PlanResult write_plan(const PlanRequest& request, const std::string& html, std::ostream& out);

}  // namespace ppsim
