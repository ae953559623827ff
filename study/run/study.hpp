// SPDX-License-Identifier: Apache-2.0
#pragma once
// From a Scenario to Reports: check the inputs, build each schedule's program, validate it,
// make the cost model and replay it. Failures are InputError (exit 2) or ScheduleError (exit 3).

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "models/cost_model.hpp"
#include "schedules/registry.hpp"
#include "sim/engine.hpp"
#include "sim/report/report.hpp"
#include "study/input/scenario.hpp"

namespace ppsim {

// Compute ops one simulation may have, by what it must keep in memory (bytes per op):
// - a summary of a registry schedule is generated as it runs and keeps nothing that grows with m,
//   so it may go far; at tens of millions of ops a second the limit is tens of seconds of work, and
//   anything larger is almost surely a typo in p, m or v;
// - a stored program (paired sends, a schedule file, an export) holds 12 bytes an action: ~1 GiB;
// - a timeline kept in memory holds every span, message and memory sample, and its writers more:
//   about 1 KiB an op for a trace, 3 KiB for --timeline --format json. Up to kMaxTimelineOps the
//   pictures (--svg, --html, a table's --timeline) keep it; above, they are drawn from digests
//   filled as the engine runs (streamed_pictures.hpp), and a trace or JSON timeline is always
//   streamed to disk. Those runs keep the stored program and the event queue's state, ~25 bytes an
//   op, write ~500 bytes an op to disk for a trace, and stop at kMaxStreamedTimelineOps.
inline constexpr std::int64_t kMaxGeneratedOps = 1'000'000'000;
inline constexpr std::int64_t kMaxOps = 50'000'000;
inline constexpr std::int64_t kMaxTimelineOps = 2'000'000;
inline constexpr std::int64_t kMaxStreamedTimelineOps = 10'000'000;

// Stages (p·v) one simulation may have: each stage and device holds about a KiB of state and
// output, so a million of them take about a GiB, whatever m is.
inline constexpr std::int64_t kMaxStages = 1'000'000;

struct OpLimit {
  std::int64_t ops;
  std::string_view why;  // the end of the refusal: what makes this run's limit lower
};
inline constexpr OpLimit kGeneratedLimit{kMaxGeneratedOps, ""};
inline constexpr OpLimit kStoredProgramLimit{kMaxOps, "that stores its program (paired sends or an export)"};
inline constexpr OpLimit kTimelineLimit{kMaxTimelineOps, "that keeps its timeline in memory"};
inline constexpr OpLimit kStreamedTimelineLimit{kMaxStreamedTimelineOps,
                                                "with a timeline (--timeline, --trace, --svg or --html)"};

// Checks what does not depend on a schedule: names exist and costs are consistent.
void check_scenario(const Scenario& scenario);

// Refuses sizes whose bound on the op count is above `limit`.
void check_size(const Scenario& scenario, const OpLimit& limit);

// The costs of a scenario at v chunks per device, per chunk: a device's share (the default,
// --costs-per device) is split evenly over its v chunks, so that -v changes how the model is cut,
// never how much work there is; costs given per chunk stay as they are. `who` (a schedule or a
// schedule file) names what cut the model in errors.
void split_costs_over_chunks(Scenario& scenario, std::string_view who);

// The scenario as one schedule runs it: at -v, or at the schedule's own default v without it, with
// its costs split over the chunks (split_costs_over_chunks), so schedules of different v compare on
// the same model whether -v is given or not.
Scenario scenario_for_schedule(Scenario scenario, const ScheduleInfo& info);

// The cost model for a program whose stages sit on `stage_device` (p devices): the transformer model
// with --model, else the uniform or per-stage model of the cost settings (list lengths checked here).
// `pipelines` (Program::num_pipelines): per-stage settings and a model's layers describe the stages of
// one pipeline, which the others replicate.
std::unique_ptr<CostModel> make_cost_model(const Scenario& scenario, const std::vector<int>& stage_device,
                                           int pipelines = 1);

// The one-line error for a size a schedule refuses, naming the -m or -v flag (or JSON path) at fault.
std::string constraint_error(const Scenario& scenario, const ScheduleInfo& info, const std::string& why);

// Simulates the program of --schedule-file (schedule `custom`); p and m come from the file.
// With a streamer, the timeline goes to it as the engine runs (and record_timeline is implied).
Report simulate_schedule_file(const Scenario& scenario, bool record_timeline, Engine& engine,
                              TimelineStreamer* streamer = nullptr);

// Simulates one registry schedule.
Report simulate_schedule(const Scenario& scenario, std::string_view schedule, bool record_timeline, Engine& engine,
                         TimelineStreamer* streamer = nullptr);

// The figures of one schedule without a timeline, as a sweep point wants them: from the exact
// closed forms where they apply (closed_form_point.hpp), else simulated as simulate_schedule does.
// The result is the same to the last bit either way; only its phases, times and links are left out,
// and the report's scenario (no sweep output reads it).
Report summarize_schedule(const Scenario& scenario, std::string_view schedule, Engine& engine);
// The same for a scenario the caller no longer needs (a sweep's point): not copied.
Report summarize_schedule(Scenario&& scenario, std::string_view schedule, Engine& engine);

// `report`'s run (a registry schedule of a transformer study) under `variant`, a scenario that differs
// from the one simulated only in what the step adds after the pipeline's last op: the distributed
// optimizer's sharding, reduction and memory (not FSDP's, whose collectives are the program's). The training figures are computed again from the same
// simulated times and peaks, without simulating again (ppsim plan's shared pipelines). Its scenario
// is left empty.
Report with_training_of(const Report& report, const Scenario& variant);

// Validates and simulates a program built elsewhere (tests, and custom schedules later).
Report simulate_program(const Scenario& scenario, std::string_view name, Program program, bool record_timeline,
                        Engine& engine, TimelineStreamer* streamer = nullptr);

// The most compute ops a timeline of one of the scenario's runs may have: 3·p·v·m for a registry
// schedule (at the v it runs at), the actions of a schedule file.
double timeline_op_bound(const Scenario& scenario);

// Refuses, before any run, a scenario whose registry schedules' timelines would pass
// kMaxStreamedTimelineOps (a schedule file's is checked as it loads).
void check_timeline_size(const Scenario& scenario);

// Every schedule of the scenario, in the order given.
std::vector<Report> simulate_all(const Scenario& scenario, bool record_timeline,
                                 TimelineStreamer* streamer = nullptr);

}  // namespace ppsim
