// SPDX-License-Identifier: Apache-2.0
#include "study/run/schedule_loader.hpp"

#include <algorithm>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "models/json/json_document.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule_file.hpp"
#include "schedules/torch_lowering.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "study/common/errors.hpp"
#include "study/run/study.hpp"
#include "study/run/transformer_study.hpp"

namespace ppsim {
namespace {

// Devices and micro-batches a JSON schedule may declare; the op limit bounds what it may hold.
constexpr long long kMaxCount = 1'000'000'000;

}  // namespace

ScheduleFileParse parse_json_schedule(const std::string& path, const std::string& text) {
  nlohmann::json document;
  try {
    document = parse_json_text(text, path);
  } catch (const JsonInputError& error) {
    throw InputError(error.what());
  }
  DeclaredShape declared;
  const nlohmann::json* rows = &document;
  std::string rows_path = "$";
  if (document.is_object()) {
    for (const auto& [key, value] : document.items()) {
      if (key != "actions" && key != "stage_device" && key != "microbatches" && key != "pipelines" &&
          key != "layerwise_pairs" && key != "sequence-splits") {
        throw InputError(path + ": $." + excerpt(key) +
                         ": unknown key (a schedule has \"actions\", \"stage_device\", \"microbatches\", "
                         "\"pipelines\", \"layerwise_pairs\" and \"sequence-splits\")");
      }
    }
    if (!document.contains("actions")) throw InputError(path + ": $.actions: missing (one list of actions per device)");
    rows = &document["actions"];
    rows_path = "$.actions";
    // Read as checked integers: nlohmann's get<int>() of 1e29 is undefined behaviour, not an error.
    auto count = [&](const nlohmann::json& value, const std::string& where, int min) {
      if (!value.is_number_integer() || value.get<long long>() < min || value.get<long long>() > kMaxCount) {
        throw InputError(path + ": " + where + ": must be a whole number from " + std::to_string(min) + " to " +
                         std::to_string(kMaxCount) + ", got " + json_excerpt(value));
      }
      return static_cast<int>(value.get<long long>());
    };
    if (document.contains("stage_device")) {
      const nlohmann::json& map = document["stage_device"];
      if (!map.is_array()) {
        throw InputError(path + ": $.stage_device: must be a list of device numbers, got " + json_excerpt(map));
      }
      declared.stage_device.emplace();
      for (std::size_t s = 0; s < map.size(); ++s) {
        declared.stage_device->push_back(count(map[s], "$.stage_device[" + std::to_string(s) + "]", 0));
      }
    }
    if (document.contains("microbatches")) declared.num_microbatches = count(document["microbatches"], "$.microbatches", 1);
    if (document.contains("pipelines")) declared.num_pipelines = count(document["pipelines"], "$.pipelines", 1);
    if (document.contains("sequence-splits")) {
      declared.units_per_microbatch = count(document["sequence-splits"], "$.sequence-splits", 1);
      if (declared.num_microbatches && *declared.num_microbatches % *declared.units_per_microbatch != 0) {
        throw InputError(path + ": $.sequence-splits: " + std::to_string(*declared.units_per_microbatch) +
                         " slices do not divide the " + std::to_string(*declared.num_microbatches) +
                         " units of $.microbatches into whole micro-batches");
      }
    }
    if (document.contains("layerwise_pairs")) {
      const nlohmann::json& layerwise = document["layerwise_pairs"];
      if (!layerwise.is_boolean()) {
        throw InputError(path + ": $.layerwise_pairs: must be true or false, got " + json_excerpt(layerwise));
      }
      declared.layerwise_pairs = layerwise.get<bool>();
    }
  }
  if (!rows->is_array()) throw InputError(path + ": " + rows_path + ": must be a list of rows, one per device");
  ScheduleCells cells;
  for (std::size_t d = 0; d < rows->size(); ++d) {
    const auto& row = (*rows)[d];
    const std::string row_path = rows_path + "[" + std::to_string(d) + "]";
    if (!row.is_array()) throw InputError(path + ": " + row_path + ": must be a list of action strings");
    auto& out = cells.emplace_back();
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (row[i].is_null()) {
        out.emplace_back();
      } else if (row[i].is_string()) {
        out.push_back(row[i].get<std::string>());
      } else {
        throw InputError(path + ": " + row_path + "[" + std::to_string(i) +
                         "]: must be an action string like \"0F1\", got " + json_excerpt(row[i]));
      }
    }
  }
  return program_from_cells(cells, declared);
}

Program load_schedule_file(const std::string& path) {
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  std::string text;
  try {
    text = read_bounded_file(path, json ? kMaxJsonScheduleFileBytes : kMaxCsvScheduleFileBytes, "schedule file");
  } catch (const JsonInputError& error) {
    throw InputError(error.what());
  }
  // Every cell ends at a comma or a line end: their count bounds the cells, checked before any is stored.
  const auto separators = static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return c == ',' || c == '\n' || c == '\r';
  }));
  if (!json && separators > kMaxScheduleFileCells) {
    throw InputError(path + ": the schedule file holds more than " + std::to_string(kMaxScheduleFileCells) +
                     " cells and rows, above the op limit of one run");
  }
  ScheduleFileParse parse = json ? parse_json_schedule(path, text) : parse_schedule_csv(text);
  if (!parse.ok()) {
    std::string grid;
    if (parse.problem->where && parse.program.num_devices > 0) {
      grid = format_step_grid(parse.program, std::span<const GridMark>(&*parse.problem->where, 1));
    }
    throw ScheduleError(path + ": " + parse.problem->message, grid);
  }
  std::size_t ops = 0;
  for (const auto& list : parse.program.actions) ops += list.size();
  if (ops > static_cast<std::size_t>(kMaxOps)) {
    throw InputError(path + ": the schedule has " + std::to_string(ops) + " actions, above the limit of " +
                     std::to_string(kMaxOps) + " ops per run");
  }
  return std::move(parse.program);
}

std::string export_schedule(const Scenario& given, bool lowered) {
  // A transformer study's m may come from its global batch.
  const Scenario scenario = resolve_transformer_scenario(given);
  if (scenario.schedules.size() != 1) {
    throw InputError(scenario.source_of("schedule") + ": export writes one schedule; give one name");
  }
  check_scenario(scenario);
  const ScheduleInfo& info = *find_schedule(scenario.schedules[0]);
  Program program;
  if (info.name == "custom") {
    // Replayed once, as `run` would: an invalid or deadlocking file is exit 3 here too, never
    // written back out as if it were a schedule.
    Engine engine;
    program = simulate_schedule_file(scenario, false, engine).program;
  } else {
    const Scenario adjusted = scenario_for_schedule(scenario, info);
    if (auto why = info.check(adjusted.params)) throw InputError(constraint_error(scenario, info, *why));
    check_size(adjusted, kStoredProgramLimit);
    program = info.build(adjusted.params);
  }
  if (lowered && program.comms.empty()) {
    try {
      program = lower_like_torch(program);
    } catch (const std::runtime_error& error) {
      throw ScheduleError(std::string(info.name) + ": " + error.what(), format_step_grid(program, {}));
    }
  }
  if (scenario.format == OutputFormat::kJson) return write_schedule_json(program);
  if (program.num_pipelines > 1) {
    throw InputError(scenario.source_of("format") + ": " + std::string(info.name) + " runs " +
                     std::to_string(program.num_pipelines) +
                      " pipelines side by side, which torch's schedule CSV cannot say; write JSON (--format json or -o FILE.json)");
  }
  if (program.units_per_microbatch > 1) {
    throw InputError(scenario.source_of("format") + ": " + std::string(info.name) + "'s units are sequence slices of "
                     "its micro-batches, which torch's schedule CSV cannot say; write JSON (--format json or -o "
                     "FILE.json)");
  }
  if (program.layerwise_pairs) {
    throw InputError(scenario.source_of("format") + ": " + std::string(info.name) +
                     "'s overlapped pairs interleave layer by layer, which torch's schedule CSV cannot say (torch runs "
                     "OVERLAP_F_B's halves one after the other); write JSON (--format json or -o FILE.json)");
  }
  return write_schedule_csv(program);
}

}  // namespace ppsim
