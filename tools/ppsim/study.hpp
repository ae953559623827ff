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
#include "tools/ppsim/scenario.hpp"

namespace ppsim {

// Compute ops one simulation may have when it stores its program (a timeline or picture, paired
// sends, a schedule file, an export): at ~12 bytes an action plus the timeline, about 1 GiB at the
// limit. A summary of a registry schedule is generated as it runs and stores nothing that grows with
// m, so it may go much further; at a few hundred million ops a second the limit is seconds of work,
// and anything larger is almost surely a typo in p, m or v.
inline constexpr std::int64_t kMaxOps = 50'000'000;
inline constexpr std::int64_t kMaxGeneratedOps = 1'000'000'000;

// Checks what does not depend on a schedule: names exist and costs are consistent.
void check_scenario(const Scenario& scenario);

// Refuses sizes above kMaxGeneratedOps, or above kMaxOps when `limited_by` says why the run needs
// memory that grows with its size (kStoredProgram, for one).
void check_size(const Scenario& scenario, std::string_view limited_by);
inline constexpr std::string_view kStoredProgram =
    "that stores its program (a timeline, a picture, paired sends or an export)";

// The scenario as one schedule runs it. Without -v a schedule runs at its own default v, and the
// costs given (per stage at v = 1, i.e. per device's share of the model) are split evenly over its
// chunks, so schedules of different v compare on the same model. With -v nothing changes.
Scenario scenario_for_schedule(const Scenario& scenario, const ScheduleInfo& info);

// The cost model for a program whose stages sit on `stage_device` (p devices): the transformer model
// with --model, else the uniform or per-stage model of the cost settings (list lengths checked here).
std::unique_ptr<CostModel> make_cost_model(const Scenario& scenario, const std::vector<int>& stage_device);

// The one-line error for a size a schedule refuses, naming the -m or -v flag (or JSON path) at fault.
std::string constraint_error(const Scenario& scenario, const ScheduleInfo& info, const std::string& why);

// Simulates the program of --schedule-file (schedule `custom`); p and m come from the file.
Report simulate_schedule_file(const Scenario& scenario, bool record_timeline, Engine& engine);

// Simulates one registry schedule.
Report simulate_schedule(const Scenario& scenario, std::string_view schedule, bool record_timeline, Engine& engine);

// The figures of one schedule without a timeline, as a sweep point wants them: from the exact
// closed forms where they apply (closed_form_point.hpp), else simulated as simulate_schedule does.
// The result is the same to the last bit either way; only its phases, times and links are left out.
Report summarize_schedule(const Scenario& scenario, std::string_view schedule, Engine& engine);

// Validates and simulates a program built elsewhere (tests, and custom schedules later).
Report simulate_program(const Scenario& scenario, std::string_view name, Program program, bool record_timeline,
                        Engine& engine);

// Every schedule of the scenario, in the order given.
std::vector<Report> simulate_all(const Scenario& scenario, bool record_timeline);

}  // namespace ppsim
