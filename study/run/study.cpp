// SPDX-License-Identifier: Apache-2.0
#include "study/run/study.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "models/stage_table_cost_model.hpp"
#include "models/sliced_cost_model.hpp"
#include "models/straggler_cost_model.hpp"
#include "models/uniform_cost_model.hpp"
#include "schedules/excerpt.hpp"
#include "schedules/registry.hpp"
#include "schedules/torch_lowering.hpp"
#include "schedules/validate.hpp"
#include "sim/report/time_axis.hpp"
#include "study/common/errors.hpp"
#include "study/input/calibrated_costs.hpp"
#include "study/input/config.hpp"
#include "study/input/provenance.hpp"
#include "study/input/variability_settings.hpp"
#include "study/run/closed_form_point.hpp"
#include "study/run/layer_split.hpp"
#include "study/run/monte_carlo.hpp"
#include "study/run/program_cache.hpp"
#include "study/run/reliability_study.hpp"
#include "study/run/schedule_loader.hpp"
#include "study/run/transformer_study.hpp"

namespace ppsim {
namespace {

std::string registry_names() {
  std::string names;
  for (const auto& info : schedule_registry()) names += (names.empty() ? "" : ", ") + std::string(info.name);
  return names;
}

std::string unknown_schedule(const Scenario& scenario, std::string_view name) {
  std::vector<std::string_view> names;
  for (const auto& info : schedule_registry()) names.push_back(info.name);
  const std::string suggestion = nearest_name(name, names);
  return scenario.source_of("schedule") + ": unknown schedule " + quoted_excerpt(name) +
         (suggestion.empty() ? "" : " (did you mean " + suggestion + "?)") + "; known: " + registry_names();
}

// A list holds one value (for all) or exactly `expected` values.
template <typename T>
void check_length(const std::vector<T>& list, std::size_t expected, std::string_view key, std::string_view per,
                  const Scenario& scenario) {
  if (list.size() == 1 || list.size() == expected) return;
  throw InputError(scenario.source_of(key) + ": has " + std::to_string(list.size()) + " values; give 1 or one per " +
                   std::string(per) + " (" + std::to_string(expected) + " for p=" + std::to_string(scenario.params.p) +
                   ", v=" + std::to_string(scenario.params.v) + ")");
}

template <typename T>
T pick(const std::vector<T>& list, std::size_t i) {
  return list.size() == 1 ? list[0] : list[i];
}

std::string show(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

// Stage s of a schedule with k chunks per device is the k-th part of stage floor(s/k) at v = 1,
// so a per-stage list at v = 1 expands to p*k entries, each cost or stash divided by k.
std::vector<Duration> split_durations(const std::vector<Duration>& list, int k) {
  std::vector<Duration> split;
  const std::size_t copies = list.size() == 1 ? 1 : static_cast<std::size_t>(k);
  for (const Duration& value : list) split.insert(split.end(), copies, Duration{value.value / k, value.with_unit});
  return split;
}

std::vector<ByteCount> split_bytes(const std::vector<ByteCount>& list, int k) {
  std::vector<ByteCount> split;
  const std::size_t copies = list.size() == 1 ? 1 : static_cast<std::size_t>(k);
  for (const ByteCount& value : list) {
    split.insert(split.end(), copies,
                 ByteCount{static_cast<std::int64_t>(std::llround(static_cast<double>(value.value) / k))});
  }
  return split;
}

}  // namespace

std::string constraint_error(const Scenario& scenario, const ScheduleInfo& info, const std::string& why) {
  // Checks say "needs v ..." or "needs m ...": the error names the flag or JSON path of that parameter.
  const std::string key = why.starts_with("needs the micro-batch group") ? "microbatch-group-size"
                          : why.starts_with("needs m")                   ? "m"
                          : why.starts_with("needs v")                   ? "v"
                                                                         : "schedule";
  return scenario.source_of(key) + ": " + std::string(info.name) + " " + why;
}

void split_costs_over_chunks(Scenario& scenario, std::string_view who) {
  const int k = scenario.params.v;
  // A transformer study splits its layers over however many stages there are.
  if (k == 1 || scenario.costs_per_chunk || !scenario.model.empty()) return;
  const auto p = static_cast<std::size_t>(scenario.params.p);
  auto check_per_device_share = [&](std::size_t size, std::string_view key) {
    if (size != 1 && size != p) {
      throw InputError(scenario.source_of(key) + ": has " + std::to_string(size) + " values; give 1 or one per " +
                       "device (" + std::to_string(p) + " for p=" + std::to_string(p) + "), which " +
                       std::string(who) + " splits into its " + std::to_string(k) +
                       " chunks, or one per stage with --costs-per chunk");
    }
  };
  check_per_device_share(scenario.forward.size(), "forward");
  check_per_device_share(scenario.backward.size(), "backward");
  check_per_device_share(resolved_weight(scenario).size(), "weight");
  check_per_device_share(scenario.activation_bytes.size(), "activation-bytes");
  if (scenario.message_bytes.size() != 1) {
    throw InputError(scenario.source_of("message-bytes") + ": per-boundary sizes need --costs-per chunk when " +
                     std::string(who) + " (v = " + std::to_string(k) + ") adds boundaries between chunks");
  }
  const std::vector<Duration> weight = resolved_weight(scenario);
  scenario.forward = split_durations(scenario.forward, k);
  scenario.backward = split_durations(scenario.backward, k);
  scenario.weight = split_durations(weight, k);
  scenario.activation_bytes = split_bytes(scenario.activation_bytes, k);
  if (scenario.overlap) scenario.overlap = Duration{scenario.overlap->value / k, scenario.overlap->with_unit};
  scenario.costs_per_chunk = true;  // as they now are: a report's scenario reads back to the same run
}

Scenario scenario_for_schedule(Scenario scenario, const ScheduleInfo& info) {
  if (scenario.sources.count("v") == 0) scenario.params.v = info.default_v;
  calibrated_costs_for_schedule(scenario);
  split_costs_over_chunks(scenario, info.name);
  // Seq1F1B's slices: the count is part of the run, written in its scenario (make_cost_model cuts the costs).
  if (info.name != "seq1f1b") {
    scenario.params.sequence_splits = 0;
  } else if (scenario.params.sequence_splits == 0) {
    scenario.params.sequence_splits = kDefaultSequenceSplits;
  }
  return scenario;
}

namespace {

// Every (stage, micro-batch) has at most three ops (F, I, W).
// Seq1F1B's slices are units of their own.
double op_bound(const ScheduleParams& params) {
  return 3.0 * params.p * static_cast<double>(params.v) * params.m * std::max(1, params.sequence_splits);
}

// A timeline of an MoE model under expert parallelism also records every MoE layer's dispatch and
// combine (TransformerCostModel::exchanges): at most this many per op, from the fullest stage with
// the MTP modules, twice where the recomputation re-runs them. 0 for any other model.
double exchanges_per_op(const Scenario& scenario) {
  if (scenario.model.empty()) return 0;
  const TransformerSetup setup = transformer_setup(scenario);
  const Architecture& arch = setup.arch;
  const TrainingLayout& layout = setup.layout;
  if (!has_experts(arch) || std::int64_t{layout.expert_parallel} * layout.expert_tensor_parallel <= 1) return 0;
  const double stages = std::max(1.0, static_cast<double>(scenario.params.p) * scenario.params.v);
  double fullest = std::ceil(arch.layers / stages);
  for (const int layers : layout.layers_per_stage) fullest = std::max(fullest, static_cast<double>(layers));
  const bool again = layout.recompute == Recompute::kFull || layout.activation_layout().recomputes_moe();
  return 2 * (fullest + arch.mtp_layers) * (again ? 2 : 1);
}

// An all-to-all's record (about 40 bytes kept, 200 in a trace) weighs about a quarter of an op's
// (a span, its memory samples and its message): the timeline limits count them so.
constexpr double kExchangesPerOp = 4;

double timeline_records(const ScheduleParams& params, double exchanges) {
  return op_bound(params) * (1 + exchanges / kExchangesPerOp);
}

}  // namespace

void check_size(const Scenario& scenario, const OpLimit& limit) {
  const auto& params = scenario.params;
  // Each stage and device costs about a KiB of state and output whatever m is.
  const double stages = static_cast<double>(params.p) * params.v;
  if (stages > static_cast<double>(kMaxStages)) {
    throw InputError(scenario.source_of("p") + ": p=" + std::to_string(params.p) + ", v=" + std::to_string(params.v) +
                     " places " + show(stages) + " stages, above the limit of " + std::to_string(kMaxStages) +
                     " per run");
  }
  const double ops = op_bound(params);
  if (ops > static_cast<double>(limit.ops)) {
    throw InputError(scenario.source_of("m") + ": p=" + std::to_string(params.p) + ", v=" + std::to_string(params.v) +
                     ", m=" + std::to_string(params.m) + " would simulate up to " + show(ops) +
                     " ops, above the limit of " + std::to_string(limit.ops) + " per run" +
                     (limit.why.empty() ? "" : " " + std::string(limit.why)));
  }
}

void check_timeline_records(const Scenario& scenario, const OpLimit& limit) {
  check_size(scenario, limit);
  const double exchanges = exchanges_per_op(scenario);
  const double records = timeline_records(scenario.params, exchanges);
  if (exchanges > 0 && records > static_cast<double>(limit.ops)) {
    const auto& params = scenario.params;
    throw InputError(scenario.source_of("m") + ": p=" + std::to_string(params.p) + ", v=" + std::to_string(params.v) +
                     ", m=" + std::to_string(params.m) + " would record up to " + show(op_bound(params)) +
                     " ops and " + show(exchanges) + " expert all-to-alls per op, as many as " + show(records) +
                     " ops (four all-to-alls weigh one), above the limit of " + std::to_string(limit.ops) +
                     " per run " + std::string(limit.why));
  }
}

// Times with units are seconds, plain numbers the user's own unit: a run that mixes them
// (`--forward 1ms --backward 2`, or `--forward 1ms` against the default B of 2) is nonsense, refused
// naming both. Zero is zero in any unit. A transformer study derives its own costs.
void check_time_units(const Scenario& scenario) {
  if (!scenario.model.empty()) return;
  struct Given {
    const char* key;
    const std::vector<Duration>* times;
  };
  const std::vector<Duration> latency{scenario.latency};
  const std::vector<Duration> overlap = scenario.overlap ? std::vector<Duration>{*scenario.overlap} : std::vector<Duration>{};
  const std::array<Given, 5> given = {{{"forward", &scenario.forward},
                                       {"backward", &scenario.backward},
                                       {"weight", &scenario.weight},
                                       {"overlap", &overlap},
                                       {"latency", &latency}}};
  const Given* with_unit = nullptr;
  const Given* without_unit = nullptr;
  for (const Given& setting : given) {
    for (const Duration& time : *setting.times) {
      if (time.value == 0) continue;
      const Given*& first = time.with_unit ? with_unit : without_unit;
      if (first == nullptr) first = &setting;
    }
  }
  if (with_unit == nullptr || without_unit == nullptr) return;
  const bool defaulted = !scenario.sources.contains(without_unit->key);
  throw InputError(scenario.source_of(without_unit->key) + ": " + (defaulted ? "its default has" : "has") +
                   " no unit, but " + scenario.source_of(with_unit->key) +
                   " has one: give every time a unit (1ms, 2ms) or none" + (defaulted ? " (set it, with a unit)" : ""));
}

void check_scenario(const Scenario& scenario) {
  check_variability(scenario);
  check_time_units(scenario);
  for (const auto& name : scenario.schedules) {
    if (find_schedule(name) == nullptr) {
      throw InputError(unknown_schedule(scenario, name));
    }
    // Only Megatron's interleaved schedule has a micro-batch group; elsewhere the flag would be ignored.
    if (scenario.params.microbatch_group > 0 && name != "interleaved-1f1b") {
      throw InputError(scenario.source_of("microbatch-group-size") +
                       ": only interleaved-1f1b takes a micro-batch group size, not " + name);
    }
    if (name == "seq1f1b" && !scenario.model.empty()) {
      throw InputError(scenario.source_of("model") + ": seq1f1b's sequence slices are not in the transformer "
                       "cost model (each slice's attention over its prefix); give its costs per micro-batch with "
                       "--forward and --backward, which it splits over the slices");
    }
  }
  // Seq1F1B's slices: given with other schedules (compare -s 1f1b,seq1f1b), they cut only seq1f1b's.
  if (scenario.params.sequence_splits > 0 &&
      std::find(scenario.schedules.begin(), scenario.schedules.end(), "seq1f1b") == scenario.schedules.end()) {
    throw InputError(scenario.source_of("sequence-splits") + ": only seq1f1b cuts micro-batches into sequence "
                     "slices, and it is not among the schedules (" + scenario.schedules.front() +
                     (scenario.schedules.size() > 1 ? ", ..." : "") + ")");
  }
  for (const auto& list : {std::cref(scenario.forward), std::cref(scenario.backward)}) {
    for (const Duration& time : list.get()) {
      if (time.value <= 0) {
        throw InputError(scenario.source_of(&list.get() == &scenario.forward ? "forward" : "backward") +
                         ": must be positive, got " + show(time.value));
      }
    }
  }
}

namespace {

std::unique_ptr<CostModel> base_cost_model(const Scenario& scenario, const std::vector<int>& stage_device,
                                           int pipelines);

}  // namespace

std::unique_ptr<CostModel> make_cost_model(const Scenario& scenario, const std::vector<int>& stage_device,
                                           int pipelines) {
  std::unique_ptr<CostModel> base = base_cost_model(scenario, stage_device, pipelines);
  // Only seq1f1b takes sequence splits (check_scenario): each of its units is a 1/k slice.
  if (scenario.params.sequence_splits > 1) {
    base = std::make_unique<SlicedCostModel>(std::move(base), scenario.params.sequence_splits);
  }
  if (scenario.stragglers.empty()) return base;
  // --straggler D:FACTOR: device d's compute is that much slower in every step, the samples' too.
  const int devices = stage_device.empty() ? 0 : *std::max_element(stage_device.begin(), stage_device.end()) + 1;
  std::vector<double> factors(static_cast<std::size_t>(devices), 1.0);
  for (const auto& [device, factor] : scenario.stragglers) {
    if (device >= devices) {
      throw InputError(scenario.source_of("straggler") + ": device " + std::to_string(device) + " is not one of the " +
                       std::to_string(devices) + " devices (0 to " + std::to_string(devices - 1) + ")");
    }
    factors[static_cast<std::size_t>(device)] *= factor;
  }
  const CostModel& model = *base;
  return std::make_unique<StragglerCostModel>(model, stage_device, std::move(factors), std::move(base));
}

namespace {

std::unique_ptr<CostModel> base_cost_model(const Scenario& scenario, const std::vector<int>& stage_device,
                                           int pipelines) {
  // The stages of one pipeline: the others' are replicas (DualPipe's second direction).
  const PipelineShape shape{static_cast<int>(stage_device.size()), pipelines};
  const auto s = static_cast<std::size_t>(shape.length());
  if (!scenario.model.empty()) {
    TransformerSetup setup = transformer_setup(scenario);
    const StagePlan plan = plan_stages(setup.arch, static_cast<int>(s), setup.layout.layers_per_stage);
    if (!plan.error.empty()) throw InputError(scenario.source_of("layers-per-stage") + ": " + plan.error);
    auto model = std::make_unique<TransformerCostModel>(std::move(setup), stage_device, pipelines);
    // Sizes beyond 1 EiB are typos, and beyond 2^63 they would not even fit the engine's counters.
    for (std::size_t stage = 0; stage < model->stages().size(); ++stage) {
      const double bytes = model->stages()[stage].activation_bytes;
      if (bytes > static_cast<double>(kMaxBytes)) {
        throw InputError(scenario.source_of("seq") + ": s=" + std::to_string(scenario.layout.seq) +
                         " with b=" + std::to_string(scenario.layout.micro_batch) + " would stash " + show(bytes) +
                         " bytes per micro-batch on stage " + std::to_string(stage) + ", above 1 EiB: absurdly large");
      }
    }
    return model;
  }
  const auto p = static_cast<std::size_t>(scenario.params.p);
  check_length(scenario.forward, s, "forward", "stage", scenario);
  check_length(scenario.backward, s, "backward", "stage", scenario);
  const std::vector<Duration> weights = resolved_weight(scenario);
  check_length(weights, s, "weight", "stage", scenario);
  check_length(scenario.activation_bytes, s, "activation-bytes", "stage", scenario);
  check_length(scenario.message_bytes, s > 1 ? s - 1 : 1, "message-bytes", "boundary between stages", scenario);
  check_length(scenario.static_bytes, p, "static-bytes", "device", scenario);
  for (std::size_t i = 0; i < s; ++i) {
    const double backward = pick(scenario.backward, i).value;
    const double weight = pick(weights, i).value;
    if (weight > backward) {
      throw InputError(scenario.source_of("weight") + ": W (" + show(weight) + ") exceeds the full backward B (" +
                       show(backward) + ") on stage " + std::to_string(i) + "; B = I + W needs W <= B");
    }
  }

  const bool uniform = scenario.forward.size() == 1 && scenario.backward.size() == 1 && weights.size() == 1 &&
                       scenario.activation_bytes.size() == 1 && scenario.message_bytes.size() == 1 &&
                       scenario.static_bytes.size() == 1;
  if (uniform) {
    UniformCosts costs;
    costs.forward = scenario.forward[0];
    costs.backward = scenario.backward[0];
    costs.weight = weights[0];
    costs.activation_bytes = scenario.activation_bytes[0];
    costs.weight_stash_fraction = scenario.weight_stash_fraction;
    costs.message_bytes = scenario.message_bytes[0];
    costs.static_bytes = scenario.static_bytes[0];
    costs.latency = scenario.latency;
    costs.bandwidth = scenario.bandwidth;
    costs.overlap = scenario.overlap;
    return std::make_unique<UniformCostModel>(costs);
  }
  if (scenario.overlap) {
    throw InputError(scenario.source_of("overlap") + ": needs uniform costs (one forward and one backward time)");
  }
  StageTable table;
  for (int k = 0; k < shape.stages; ++k) {
    const auto i = static_cast<std::size_t>(shape.logical(k));  // a replica costs what its stage does
    table.stages.push_back(
        {pick(scenario.forward, i), pick(scenario.backward, i), pick(weights, i), pick(scenario.activation_bytes, i)});
  }
  for (int k = 0; k + 1 < shape.stages; ++k) {
    // No message crosses from one pipeline's last stage to the next pipeline's first.
    table.boundary_bytes.push_back(shape.last(k) ? ByteCount{}
                                                 : pick(scenario.message_bytes, static_cast<std::size_t>(shape.logical(k))));
  }
  for (std::size_t d = 0; d < p; ++d) table.static_bytes.push_back(pick(scenario.static_bytes, d));
  table.weight_stash_fraction = scenario.weight_stash_fraction;
  table.latency = scenario.latency;
  table.bandwidth = scenario.bandwidth;
  return std::make_unique<StageTableCostModel>(std::move(table));
}

}  // namespace

namespace {

// Every time the engine will add up is finite and at most kMaxDuration: a model or hardware file
// with a near-zero peak (1e-300 FLOP/s) would otherwise overflow the clock to infinity, which the
// engine could only report as a deadlock.
void check_costs(const Scenario& scenario, const CostModel& costs, const Program& program) {
  // The message is built only on failure: sweeps check every point.
  auto check = [&](double time, auto what) {
    if (!(time >= 0 && time <= kMaxDuration)) {
      const std::string source =
          scenario.model.empty() ? scenario.source_of("forward") : scenario.source_of("hardware");
      throw InputError(source + ": " + what() + " takes " + show(time) + ", beyond the limit of " +
                       show(kMaxDuration) + " (check the model's and the hardware's numbers)");
    }
  };
  const auto stages = static_cast<int>(program.stage_device.size());
  const PipelineShape shape = program.pipeline_shape();
  for (int stage = 0; stage < stages; ++stage) {
    for (Op op : {Op::kForward, Op::kBackward, Op::kBackwardInput, Op::kBackwardWeight}) {
      check(costs.compute_time(op, stage),
            [&] { return "stage " + std::to_string(stage) + "'s " + std::string(1, op_letter(op)); });
    }
    if (!shape.last(stage) && program.stage_device[stage] != program.stage_device[stage + 1]) {
      const LinkParams link = costs.link(program.stage_device[stage], program.stage_device[stage + 1]);
      const auto bytes = static_cast<double>(costs.message_bytes(stage, stage + 1));
      check(link.latency + (bytes > 0 ? bytes / link.bandwidth : 0.0),
            [&] { return "a message from stage " + std::to_string(stage) + " to " + std::to_string(stage + 1); });
    }
  }
}

}  // namespace

namespace {

// Each device's all-gathers and reduce-scatters of a lowered program under FSDP, in a step. Per
// block, the ops that gather and reduce are those the engine charges (ShardingCosts::gathers_in).
void add_fsdp_collectives(TrainingFigures& training, const Program& program, const CostModel& costs) {
  if (program.comms.empty()) return;
  // Once per stage, not once per action: the costs are a stage's.
  std::vector<ShardingCosts> stages;
  for (int stage = 0; stage < program.num_stages(); ++stage) stages.push_back(costs.sharding(stage));
  for (std::size_t d = 0; d < program.comms.size(); ++d) {
    double gather = 0;
    double reduce = 0;
    for (const CommAction& action : program.comms[d]) {
      const ShardingCosts& sharding = stages[static_cast<std::size_t>(action.stage)];
      if (action.op == CommOp::kUnshard && !sharding.per_block) gather += sharding.gather_time;
      if (action.op == CommOp::kReduceGrad && !sharding.reduce_per_op) reduce += sharding.reduce_time;
    }
    std::vector<std::uint8_t> gathered(static_cast<std::size_t>(program.num_stages()), 0);
    for (const Action& action : d < program.actions.size() ? program.actions[d] : std::vector<Action>{}) {
      const ShardingCosts& sharding = stages[static_cast<std::size_t>(action.stage)];
      if (!sharding.per_block) continue;
      if (sharding.gathers_in(action.op, gathered[static_cast<std::size_t>(action.stage)])) {
        gather += sharding.unit_gathers;
      }
      if (sharding.reduces_in(action.op)) reduce += sharding.unit_reduces;
    }
    training.fsdp_gather_time = std::max(training.fsdp_gather_time, gather);
    training.fsdp_reduce_time = std::max(training.fsdp_reduce_time, reduce);
  }
}

EngineOptions engine_options(const Scenario& scenario, std::string_view name, const CostModel& costs,
                             bool record_timeline) {
  EngineOptions options;
  options.comm = engine_comm_mode(scenario, name);
  options.record_timeline = record_timeline;
  options.wait_at_receives = scenario.comm_actions == Scenario::CommActions::kWaitAtRecv;
  // A transformer study places its data-parallel collectives against each stage's gradients.
  options.record_stage_times = dynamic_cast<const TransformerCostModel*>(&unwrapped(costs)) != nullptr;
  return options;
}

// With a transformer model: the training step's figures of a finished run, from its result.
void add_training_figures(Report& report, const CostModel& costs, const Program* full = nullptr) {
  const auto* transformer = dynamic_cast<const TransformerCostModel*>(&unwrapped(costs));
  if (transformer == nullptr) return;
  std::vector<double> device_end;
  std::vector<std::int64_t> peak_activations;
  for (const DeviceFigures& device : report.result.per_device) {
    device_end.push_back(device.end);
    peak_activations.push_back(device.peak_activation_bytes);
  }
  std::vector<StageTimes> stage_times;
  for (const StageFigures& stage : report.result.per_stage) {
    stage_times.push_back({stage.gradient_start, stage.gradient_end, stage.first_forward});
  }
  std::vector<std::int64_t> unsharded;
  for (const DeviceFigures& device : report.result.per_device) {
    unsharded.push_back(device.peak_memory_bytes - device.static_bytes - device.peak_activation_bytes);
  }
  report.training = training_figures(*transformer, report.result.makespan, device_end, peak_activations,
                                     stage_times, unsharded);
  add_fsdp_collectives(*report.training, full != nullptr ? *full : report.program, *transformer);
  report.memory_capacity = transformer->setup().hardware.memory_capacity;
}

// The report of a finished run. `program` is the program replayed, or for a generated run only its
// shape (stage placement, no action lists): what the summary reporters read. A sweep point's report
// goes without the scenario (`with_scenario` false), which no sweep output reads.
Report make_report(const Scenario& scenario, std::string_view name, Program program, Result result,
                   const CostModel& costs, const EngineOptions& options, bool with_scenario = true,
                   const Program* full = nullptr) {
  Report report;
  report.schedule = std::string(name);
  report.params = scenario.params;
  report.samples_per_microbatch = scenario.layout.micro_batch;
  report.program = std::move(program);
  report.result = std::move(result);
  if (with_scenario) {
    report.scenario = scenario_to_json(scenario, name);
    report.provenance = provenance_of(scenario);
    report.scenario["comm"] = comm_mode_name(options.comm);  // as resolved for this schedule
    if (report.scenario.contains("overlap-p2p-comm")) {
      // What ran, so the scenario reads back as a config: true for asynchronous sends, false for
      // paired ones, null for blocking (which is neither).
      report.scenario["overlap-p2p-comm"] = options.comm == CommMode::kBlocking
                                                ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(options.comm == CommMode::kOverlap);
    }
  }
  add_training_figures(report, costs, full);
  return report;
}

// --samples and --mtbf: the Monte-Carlo steps of `program` (null: none, a generated run) and the
// reliability of the run, added to the deterministic step's report.
void add_samples_and_failures(Report& report, const Scenario& scenario, const Program* program, const CostModel& costs,
                              const EngineOptions& options) {
  if (has_samples(scenario) && program != nullptr) report.samples = sample_steps(scenario, *program, costs, options);
  if (has_failures(scenario) && report.training) {
    const auto& transformer = dynamic_cast<const TransformerCostModel&>(unwrapped(costs));
    report.reliability =
        reliability_report(scenario, transformer, *report.training, report.samples ? &*report.samples : nullptr);
  }
}

[[noreturn]] void throw_deadlock(std::string_view name, const Program& program, const Deadlock& deadlock) {
  std::vector<GridMark> marks;
  for (const auto& stuck : deadlock.devices) marks.push_back({stuck.device, stuck.step});
  throw ScheduleError("schedule " + std::string(name) + " cannot finish: " + deadlock.summary(),
                      format_step_grid(program, marks));
}

// A registry schedule replayed from its generators: nothing grows with m. Its programs are valid
// by construction (tests/registry_test.cpp validates them over a grid of sizes), so they are not
// validated again on every run.
Report simulate_generated(const Scenario& scenario, std::string_view name, const ScheduleInfo& info, Engine& engine,
                          bool with_scenario) {
  const ScheduleStreams streams = info.streams(scenario.params);
  const auto costs = make_cost_model(scenario, streams.stage_device, streams.num_pipelines);
  Program shape;
  shape.num_devices = streams.params.p;
  shape.num_microbatches = streams.num_microbatches();
  shape.num_pipelines = streams.num_pipelines;
  shape.units_per_microbatch = streams.units_per_microbatch;
  shape.stage_device = streams.stage_device;
  check_costs(scenario, *costs, shape);
  const EngineOptions options = engine_options(scenario, name, *costs, false);
  SimulationOutcome outcome = engine.run(streams, *costs, options);
  if (outcome.deadlock) {
    // A registry schedule that cannot finish is a bug in it; its grid needs the stored program,
    // which is built only where one may be.
    Program grid_program = shape;
    if (op_bound(scenario.params) <= static_cast<double>(kMaxOps)) {
      grid_program = info.build(scenario.params);
    }
    throw_deadlock(name, grid_program, *outcome.deadlock);
  }
  Report report = make_report(scenario, name, std::move(shape), std::move(*outcome.result), *costs, options, with_scenario);
  add_samples_and_failures(report, scenario, nullptr, *costs, options);
  return report;
}

}  // namespace

Report simulate_program(const Scenario& scenario, std::string_view name, Program program, bool record_timeline,
                        Engine& engine, TimelineStreamer* streamer) {
  record_timeline = record_timeline || streamer != nullptr;
  const OpLimit& limit = streamer != nullptr ? kStreamedTimelineLimit : kTimelineLimit;
  if (record_timeline && program.num_ops() > static_cast<std::size_t>(limit.ops)) {
    throw InputError(scenario.source_of(name == "custom" ? "schedule-file" : "m") + ": " + std::string(name) + " has " +
                     std::to_string(program.num_ops()) + " ops, above the limit of " + std::to_string(limit.ops) +
                     " per run " + std::string(limit.why));
  }
  // A registry schedule's program is valid by construction (tests/registry_test.cpp checks them over
  // a grid): only a file's, or a lowered one's actions, are checked here, at about 30 instructions an op.
  const ScheduleInfo* info = find_schedule(name);
  const bool trusted = info != nullptr && info->generated() && program.comms.empty();
  std::optional<ScheduleProblem> problem = trusted ? std::nullopt : validate_program(program);
  if (!problem && !trusted) problem = validate_comm_actions(program);
  if (problem) {
    std::string grid;
    if (problem->where) grid = format_step_grid(program, std::span<const GridMark>(&*problem->where, 1));
    throw ScheduleError("schedule " + std::string(name) + " is invalid: " + problem->message, grid);
  }
  const auto costs = make_cost_model(scenario, program.stage_device, program.num_pipelines);
  check_costs(scenario, *costs, program);
  EngineOptions options = engine_options(scenario, name, *costs, record_timeline);
  if (!program.comms.empty() && options.comm == CommMode::kPaired) {
    throw InputError(scenario.source_of("comm") + ": paired sends are Megatron's; a lowered schedule places its own " +
                     "sends and receives, so use --comm overlap or blocking (or --comm-actions ignore)");
  }
  if (streamer != nullptr) {
    options.timeline_sink = &streamer->begin(
        {program.stage_device, program.num_microbatches, times_in_seconds(scenario_to_json(scenario, name)),
         program.num_devices});
  }
  SimulationOutcome outcome = engine.run(program, *costs, options);
  if (outcome.deadlock) throw_deadlock(name, program, *outcome.deadlock);
  Result result = std::move(*outcome.result);
  Report report = make_report(scenario, name, std::move(program), std::move(result), *costs, options);
  add_samples_and_failures(report, scenario, &report.program, *costs, options);
  if (streamer != nullptr) {
    streamer->end(report);
    // What was streamed needs no program any more, and a study of several large runs should not
    // keep each one's: only its shape stays, as for a generated run.
    report.program.actions.clear();
    report.program.actions.shrink_to_fit();
  }
  return report;
}

// torch's runtime lowers a compute-only schedule before it runs it (lower_like_torch); under FSDP its
// UNSHARD, RESHARD and REDUCE_GRAD are what cost. A program the lowering cannot take is invalid.
Program lowered_for_fsdp(const Scenario& scenario, Program program) {
  if (program.num_pipelines > 1) {
    // torch's runtime, whose FSDP actions --fsdp models, runs one pipeline; DualPipe runs its own.
    throw InputError(scenario.source_of("fsdp") + ": models torch.distributed.pipelining's FSDP actions, and a "
                     "schedule of " + std::to_string(program.num_pipelines) +
                     " pipelines (dualpipe, chimera, bitpipe) is not one torch's runtime runs");
  }
  std::optional<ScheduleProblem> problem = validate_program(program);
  if (problem) return program;  // simulate_program reports it with its grid
  try {
    return lower_like_torch(program);
  } catch (const std::runtime_error& error) {
    throw ScheduleError(scenario.source_of("fsdp") + ": torch's lowering refuses the schedule: " + error.what(),
                        format_step_grid(program, {}));
  }
}

Report simulate_schedule_file(const Scenario& scenario, bool record_timeline, Engine& engine,
                              TimelineStreamer* streamer) {
  if (scenario.schedule_file.empty()) {
    throw InputError(scenario.source_of("schedule") + ": custom takes its actions from --schedule-file FILE");
  }
  Program program = load_schedule_file(scenario.schedule_file);
  Scenario adjusted = scenario;
  // p and m come from the file; flags that say otherwise are a mistake worth naming.
  auto check_given = [&](std::string_view key, int given, int in_file, const char* what) {
    if (scenario.sources.count(key) > 0 && given != in_file) {
      throw InputError(scenario.source_of(key) + ": " + std::to_string(given) + " does not match the " +
                       std::to_string(in_file) + " " + what + " of " + scenario.schedule_file);
    }
  };
  check_given("p", scenario.params.p, program.num_devices, "devices");
  check_given("m", scenario.params.m, program.microbatches_per_step(), "micro-batches");
  adjusted.params.p = program.num_devices;
  adjusted.params.m = program.microbatches_per_step();
  // Seq1F1B's slices (a JSON file's "sequence-splits"): each unit costs 1/k (make_cost_model).
  adjusted.params.sequence_splits = program.units_per_microbatch > 1 ? program.units_per_microbatch : 0;
  if (adjusted.params.sequence_splits > 0 && !scenario.model.empty()) {
    throw InputError(scenario.source_of("model") + ": " + scenario.schedule_file + " runs sequence slices, which the "
                     "transformer cost model does not price (each slice's attention over its prefix)");
  }
  // Chunks per device and pipeline: DualPipe's two stages on a device are one per direction.
  adjusted.params.v = std::max(1, program.num_stages() / program.num_pipelines / program.num_devices);
  split_costs_over_chunks(adjusted, scenario.schedule_file);
  // torch's lowered dumps: sends and receives are ordering points unless the user asks for the compute only.
  if (scenario.comm_actions == Scenario::CommActions::kIgnore) program.comms.clear();
  // FSDP runs a compute-only file as torch's _load_csv(format="compute_only") does: lowered first.
  if (scenario.layout.fsdp && program.comms.empty()) program = lowered_for_fsdp(adjusted, std::move(program));
  return simulate_program(adjusted, "custom", std::move(program), record_timeline, engine, streamer);
}

namespace {

// A registry schedule's stored program from the scenario's ProgramCache (built, lowered under FSDP and
// validated once), replayed without a timeline or samples. The report keeps the program's shape only,
// as a generated run's does.
Report simulate_shared_program(const Scenario& scenario, std::string_view schedule, Engine& engine) {
  const ScheduleInfo& info = *find_schedule(schedule);
  const std::shared_ptr<const Program> program =
      scenario.programs->get(std::string(schedule), scenario.params, scenario.layout.fsdp, [&] {
        Program built = info.build(scenario.params);
        if (scenario.layout.fsdp) built = lowered_for_fsdp(scenario, std::move(built));
        std::optional<ScheduleProblem> problem = validate_program(built);
        if (!problem) problem = validate_comm_actions(built);
        if (problem) throw ScheduleError("schedule " + std::string(schedule) + " is invalid: " + problem->message, "");
        return built;
      });
  const auto costs = make_cost_model(scenario, program->stage_device, program->num_pipelines);
  check_costs(scenario, *costs, *program);
  const EngineOptions options = engine_options(scenario, schedule, *costs, false);
  if (!program->comms.empty() && options.comm == CommMode::kPaired) {
    throw InputError(scenario.source_of("comm") + ": paired sends are Megatron's; a lowered schedule places its own " +
                     "sends and receives, so use --comm overlap or blocking (or --comm-actions ignore)");
  }
  SimulationOutcome outcome = engine.run(*program, *costs, options);
  if (outcome.deadlock) throw_deadlock(schedule, *program, *outcome.deadlock);
  Program shape;
  shape.num_devices = program->num_devices;
  shape.num_microbatches = program->num_microbatches;
  shape.num_pipelines = program->num_pipelines;
  shape.units_per_microbatch = program->units_per_microbatch;
  shape.stage_device = program->stage_device;
  Report report = make_report(scenario, schedule, std::move(shape), std::move(*outcome.result), *costs, options,
                              /*with_scenario=*/false, program.get());
  return report;
}

Report schedule_report(Scenario scenario, std::string_view schedule, bool record_timeline, bool closed_forms,
                       Engine& engine, TimelineStreamer* streamer);

// --layers-per-stage auto: the split this schedule runs fastest that fits (study/run/layer_split.hpp),
// each candidate judged by a whole run of the schedule without samples, failures or pictures.
Scenario with_chosen_split(Scenario adjusted, std::string_view schedule, const ScheduleInfo& info, Engine& engine,
                           SplitSearch& search) {
  const ScheduleStreams streams = info.streams(adjusted.params);
  const int stages = static_cast<int>(streams.stage_device.size()) / std::max(1, streams.num_pipelines);
  const int layers = resolve_architecture(adjusted).layers;
  if (layers < stages) {
    throw InputError(adjusted.source_of("layers-per-stage") + ": auto gives every stage a layer, and " +
                     std::to_string(layers) + " layers do not fill " + std::to_string(stages) + " stages");
  }
  Scenario candidate = adjusted;
  candidate.auto_layer_split = false;
  candidate.samples = 0;
  candidate.failures = {};
  candidate.timeline = false;
  // The start: stage compute as even as it gets, from one layer's F + B and the first and last
  // stages' extras, read off the cost model of the even split and of one layer more on stage 0.
  auto stage_times = [&](const std::vector<int>& split) {
    candidate.layout.layers_per_stage = split;
    const auto model = make_cost_model(candidate, streams.stage_device, streams.num_pipelines);
    std::vector<double> times;
    for (int s = 0; s < stages; ++s) times.push_back(model->compute_time(Op::kForward, s) + model->compute_time(Op::kBackward, s));
    return times;
  };
  std::vector<int> even(static_cast<std::size_t>(stages), layers / stages);
  for (int s = 0; s < layers % stages; ++s) ++even[static_cast<std::size_t>(s)];
  std::vector<int> start = even;
  if (stages > 1 && even.back() > 1) {
    std::vector<int> shifted = even;
    ++shifted.front();
    --shifted.back();
    const std::vector<double> base = stage_times(even);
    const double per_layer = stage_times(shifted).front() - base.front();
    const double first_extra = base.front() - even.front() * per_layer;
    const double last_extra = base.back() - even.back() * per_layer;
    const std::vector<int> balanced = min_max_split(layers, stages, per_layer, first_extra, last_extra);
    if (!balanced.empty()) start = balanced;
  }
  const SplitJudge judge = [&](const std::vector<int>& split) {
    candidate.layout.layers_per_stage = split;
    const Report report = schedule_report(candidate, schedule, false, false, engine, nullptr);
    double spread = 0;
    for (const StageSummary& stage : report.training->stages) {
      const double compute = stage.forward + stage.input_grad + stage.weight_grad;
      spread += compute * compute;
    }
    return SplitScore{report.training->step_time, report.training->fits, spread};
  };
  // The search starts from the better of the even split and the balanced one, so it never ends
  // worse than the even split.
  if (start != even && is_better_split(judge(even), judge(start))) start = even;
  search = search_layer_split(start, judge, adjusted.auto_layer_split_budget);
  adjusted.auto_layer_split = false;
  adjusted.layout.layers_per_stage = search.layers_per_stage;
  return adjusted;
}

// The scenario by value: a sweep's point moves its own in, and it is adjusted in place.
Report schedule_report(Scenario scenario, std::string_view schedule, bool record_timeline, bool closed_forms,
                       Engine& engine, TimelineStreamer* streamer) {
  const ScheduleInfo* info = find_schedule(schedule);
  if (info == nullptr) throw InputError(unknown_schedule(scenario, schedule));
  if (!info->generated()) {
    if (scenario.auto_layer_split) {
      throw InputError(scenario.source_of("layers-per-stage") +
                       ": auto searches a registry schedule's split; a schedule file gives its stages, so give their "
                       "layers too");
    }
    return simulate_schedule_file(scenario, record_timeline, engine, streamer);
  }
  record_timeline = record_timeline || streamer != nullptr;
  Scenario adjusted = scenario_for_schedule(std::move(scenario), *info);
  if (auto why = info->check(adjusted.params)) throw InputError(constraint_error(adjusted, *info, *why));
  if (adjusted.auto_layer_split) {
    SplitSearch search;
    adjusted = with_chosen_split(std::move(adjusted), schedule, *info, engine, search);
    Report report = schedule_report(adjusted, schedule, record_timeline, closed_forms, engine, streamer);
    if (report.training) {
      report.training->pipeline_layout =
          megatron_layout(search.layers_per_stage, resolve_architecture(adjusted).mtp_layers);
      report.training->splits_judged = search.evaluated;
      report.training->torchtitan_modules = torchtitan_module_lists(search.layers_per_stage);
    }
    return report;
  }
  // The event queue replays a stored program: for timelines, paired sends and FSDP's lowered actions.
  const bool stored = record_timeline || engine_comm_mode(adjusted, schedule) == CommMode::kPaired ||
                      adjusted.layout.fsdp || has_samples(adjusted);
  if (record_timeline) {
    check_timeline_records(adjusted, streamer != nullptr ? kStreamedTimelineLimit : kTimelineLimit);
  } else {
    check_size(adjusted, stored                 ? kStoredProgramLimit
                         : info->bounded_window ? kGeneratedLimit
                                                : OpLimit{kMaxOps, "of a schedule whose messages wait for all m micro-batches"});
  }
  if (closed_forms && !stored) {
    if (std::optional<Report> report = closed_form_report(adjusted, schedule)) return std::move(*report);
  }
  if (!stored) return simulate_generated(adjusted, schedule, *info, engine, /*with_scenario=*/!closed_forms);
  if (adjusted.programs && !record_timeline && !has_samples(adjusted)) {
    return simulate_shared_program(adjusted, schedule, engine);
  }
  Program program = info->build(adjusted.params);
  if (adjusted.layout.fsdp) program = lowered_for_fsdp(adjusted, std::move(program));
  return simulate_program(adjusted, schedule, std::move(program), record_timeline, engine, streamer);
}

}  // namespace

Report simulate_schedule(const Scenario& scenario, std::string_view schedule, bool record_timeline, Engine& engine,
                         TimelineStreamer* streamer) {
  return schedule_report(scenario, schedule, record_timeline, /*closed_forms=*/false, engine, streamer);
}

Report summarize_schedule(const Scenario& scenario, std::string_view schedule, Engine& engine) {
  return schedule_report(scenario, schedule, /*record_timeline=*/false, /*closed_forms=*/true, engine, nullptr);
}

Report summarize_schedule(Scenario&& scenario, std::string_view schedule, Engine& engine) {
  return schedule_report(std::move(scenario), schedule, /*record_timeline=*/false, /*closed_forms=*/true, engine,
                         nullptr);
}

Report with_training_of(const Report& report, const Scenario& variant) {
  const ScheduleInfo* info = find_schedule(report.schedule);
  if (info == nullptr || !info->generated() || !report.training || variant.layout.fsdp) {
    throw std::logic_error("with_training_of: needs a registry schedule's transformer report without FSDP");
  }
  const Scenario adjusted = scenario_for_schedule(variant, *info);
  const auto costs = make_cost_model(adjusted, report.program.stage_device, report.program.num_pipelines);
  Report varied = report;
  varied.scenario = nlohmann::ordered_json();
  add_training_figures(varied, *costs);
  varied.training->pipeline_layout = report.training->pipeline_layout;
  varied.training->splits_judged = report.training->splits_judged;
  varied.training->torchtitan_modules = report.training->torchtitan_modules;
  return varied;
}

double timeline_op_bound(const Scenario& given) {
  const Scenario scenario = resolve_transformer_scenario(given);
  check_scenario(scenario);
  double bound = 0;
  for (const auto& name : scenario.schedules) {
    const ScheduleInfo& info = *find_schedule(name);
    if (info.generated()) {
      const Scenario adjusted = scenario_for_schedule(scenario, info);
      bound = std::max(bound, timeline_records(adjusted.params, exchanges_per_op(adjusted)));
    } else if (!scenario.schedule_file.empty()) {  // without one, the run names what is missing
      bound = std::max(bound, static_cast<double>(load_schedule_file(scenario.schedule_file).num_ops()));
    }
  }
  return bound;
}

void check_timeline_size(const Scenario& given) {
  const Scenario scenario = resolve_transformer_scenario(given);
  check_scenario(scenario);
  for (const auto& name : scenario.schedules) {
    const ScheduleInfo& info = *find_schedule(name);
    if (info.generated()) check_timeline_records(scenario_for_schedule(scenario, info), kStreamedTimelineLimit);
  }
}

std::vector<Report> simulate_all(const Scenario& given, bool record_timeline, TimelineStreamer* streamer) {
  const Scenario scenario = resolve_transformer_scenario(given);
  check_scenario(scenario);
  Engine engine;
  std::vector<Report> reports;
  for (const auto& name : scenario.schedules)
    reports.push_back(simulate_schedule(scenario, name, record_timeline, engine, streamer));
  return reports;
}

}  // namespace ppsim
