// SPDX-License-Identifier: Apache-2.0
#include "sim/report/training_report.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "sim/report/format.hpp"

namespace ppsim {
namespace {

// Memory tables read in GiB with one decimal, as capacities are quoted ("80 GiB").
std::string gib(std::int64_t bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", static_cast<double>(bytes) / static_cast<double>(std::int64_t{1} << 30));
  return buffer;
}

std::string stage_extra(const StageSummary& stage) {
  if (stage.embedding && stage.lm_head) return "embedding, lm_head";
  if (stage.embedding) return "embedding";
  if (stage.lm_head) return "lm_head";
  return "";
}

// Under the figures: where the hardware numbers behind step_time and mfu come from, and, when they
// are the datasheet's alone, that they are assumptions.
std::string provenance_line(const TrainingFigures& training) {
  std::string line = "hardware numbers: " + training.hardware_provenance;
  if (training.hardware_assumed) {
    line += ": the kernel efficiency tables are assumptions, not measurements (ppsim-calibrate measures them)";
  }
  return line + "\n";
}

// --layers-per-stage auto: the split chosen, and in Megatron-LM's terms.
std::string layer_split_line(const TrainingFigures& training) {
  if (training.pipeline_layout.empty()) return "";
  std::string split;
  for (const StageSummary& stage : training.stages) split += (split.empty() ? "" : ",") + std::to_string(stage.layers);
  return "layers per stage (auto, " + std::to_string(training.splits_judged) + " splits judged): " + split +
         "; Megatron-LM: --pipeline-model-parallel-layout '" + training.pipeline_layout + "'\n";
}

}  // namespace

void write_training_table(std::ostream& out, const TrainingFigures& training) {
  out << "training step: " << training.model << " on " << training.gpus << " x " << training.hardware
      << ", global batch " << training.global_batch << " (" << training.tokens_per_step << " tokens)\n";
  TextTable figures({Align::kLeft, Align::kLeft});
  figures.add_row({"pipeline_time", format_figure(training.pipeline_time)});
  figures.add_row({"dp_reduce_time", format_figure(training.dp_reduce_time)});
  figures.add_row({"dp_reduce_exposed", format_figure(training.dp_reduce_exposed)});
  figures.add_row({"optimizer_time", format_figure(training.optimizer_time)});
  if (training.param_gather_exposed > 0) {
    figures.add_row({"param_gather_exposed", format_figure(training.param_gather_exposed)});
  }
  if (training.replica_reduce_time > 0) {
    figures.add_row({"replica_reduce_time", format_figure(training.replica_reduce_time)});
  }
  if (training.embedding_reduce_time > 0) {
    figures.add_row({"embedding_reduce_time", format_figure(training.embedding_reduce_time)});
  }
  if (training.fsdp) {
    figures.add_row({"fsdp_gather_time", format_figure(training.fsdp_gather_time)});
    figures.add_row({"fsdp_reduce_time", format_figure(training.fsdp_reduce_time)});
  }
  figures.add_row({"step_time", format_figure(training.step_time)});
  figures.add_row({"tokens_per_second", format_figure(training.tokens_per_second)});
  figures.add_row({"samples_per_second", format_figure(training.samples_per_second)});
  figures.add_row({"model_flops_per_step", format_figure(training.model_flops_per_step)});
  figures.add_row({"mfu", format_figure(training.mfu) + "  (" + format_percent(training.mfu) + ")"});
  figures.add_row({"hfu", format_figure(training.hfu) + "  (" + format_percent(training.hfu) + ")"});
  figures.add_row({"stage_imbalance", format_figure(training.stage_imbalance)});
  out << figures.render();
  out << provenance_line(training) << layer_split_line(training);

  out << "\nstages (seconds per micro-batch on one tensor-parallel rank)\n";
  TextTable stages(numbers_after_name(8));
  stages.add_row({"stage", "device", "layers", "holds", "forward", "input_grad", "weight_grad", "activation_stash"});
  for (std::size_t i : listed_devices(training.stages.size())) {
    if (i == std::string::npos) {
      stages.add_row({"..."});
      continue;
    }
    const StageSummary& stage = training.stages[i];
    stages.add_row({"s" + std::to_string(stage.stage), "d" + std::to_string(stage.device),
                    std::to_string(stage.layers), stage_extra(stage), format_figure(stage.forward),
                    format_figure(stage.input_grad), format_figure(stage.weight_grad),
                    format_bytes(stage.activation_bytes)});
  }
  out << stages.render();

  out << "\nmemory per device (GiB)\n";
  // FSDP's unsharded buffers get a column of their own; without FSDP there are none.
  std::vector<std::string> heading{"device", "parameters", "gradients", "optimizer", "activations"};
  if (training.fsdp) heading.push_back("unsharded");
  heading.insert(heading.end(), {"workspace", "total", "capacity", "fits"});
  TextTable memory(numbers_after_name(heading.size()));
  memory.add_row(heading);
  for (std::size_t d : listed_devices(training.memory.size())) {
    if (d == std::string::npos) {
      memory.add_row({"..."});
      continue;
    }
    const DeviceMemory& device = training.memory[d];
    std::vector<std::string> row{"d" + std::to_string(d), gib(device.parameters), gib(device.gradients),
                                 gib(device.optimizer), gib(device.activations)};
    if (training.fsdp) row.push_back(gib(device.unsharded));
    row.insert(row.end(), {gib(device.workspace), gib(device.total), gib(training.memory_capacity),
                           device.fits ? "yes" : "NO"});
    memory.add_row(std::move(row));
  }
  out << memory.render();
  out << training.memory_verdict << '\n';
}

void write_training_side_by_side(std::ostream& out, std::span<const Report> reports) {
  const auto first = std::find_if(reports.begin(), reports.end(), [](const Report& r) { return r.training.has_value(); });
  if (first == reports.end()) return;
  out << "training step: " << first->training->model << " on " << first->training->gpus << " x "
      << first->training->hardware << ", global batch " << first->training->global_batch << "\n";
  TextTable table(numbers_after_name(reports.size() + 1));
  std::vector<std::string> heading{""};
  for (const Report& report : reports) heading.push_back(report.schedule);
  table.add_row(std::move(heading));
  auto add_row = [&](const std::string& name, auto cell) {
    std::vector<std::string> row{name};
    for (const Report& report : reports) row.push_back(report.training ? cell(*report.training) : "-");
    table.add_row(std::move(row));
  };
  add_row("step_time", [](const TrainingFigures& t) { return format_figure(t.step_time); });
  add_row("tokens_per_second", [](const TrainingFigures& t) { return format_figure(t.tokens_per_second); });
  add_row("mfu", [](const TrainingFigures& t) { return format_figure(t.mfu); });
  add_row("peak_memory_gib", [](const TrainingFigures& t) {
    return gib(t.memory[static_cast<std::size_t>(t.most_memory_device)].total);
  });
  add_row("fits", [](const TrainingFigures& t) { return std::string(t.fits ? "yes" : "NO"); });
  out << table.render();
  out << provenance_line(*first->training);  // one profile for every schedule compared
  for (const Report& report : reports) {
    if (report.training) out << report.schedule << ": " << report.training->memory_verdict << '\n';
  }
  for (const Report& report : reports) {
    if (report.training) {
      if (const std::string line = layer_split_line(*report.training); !line.empty()) out << report.schedule << ": " << line;
    }
  }
}

nlohmann::ordered_json training_to_json(const TrainingFigures& training) {
  nlohmann::ordered_json out;
  out["model"] = training.model;
  out["hardware"] = training.hardware;
  out["hardware_provenance"] = training.hardware_provenance;
  out["gpus"] = training.gpus;
  out["global_batch"] = training.global_batch;
  out["tokens_per_step"] = training.tokens_per_step;
  out["pipeline_time"] = training.pipeline_time;
  out["dp_reduce_time"] = training.dp_reduce_time;
  out["dp_reduce_exposed"] = training.dp_reduce_exposed;
  out["optimizer_time"] = training.optimizer_time;
  out["param_gather_exposed"] = training.param_gather_exposed;
  out["embedding_reduce_time"] = training.embedding_reduce_time;
  if (training.replica_reduce_time > 0) out["replica_reduce_time"] = training.replica_reduce_time;  // DualPipe
  out["fsdp"] = training.fsdp;
  out["fsdp_gather_time"] = training.fsdp_gather_time;
  out["fsdp_reduce_time"] = training.fsdp_reduce_time;
  if (!training.pipeline_layout.empty()) {
    out["layer_split"] = {{"pipeline_model_parallel_layout", training.pipeline_layout},
                          {"module_fqns_per_model_part", training.torchtitan_modules},
                          {"splits_judged", training.splits_judged}};
  }
  out["step_time"] = training.step_time;
  out["tokens_per_second"] = training.tokens_per_second;
  out["samples_per_second"] = training.samples_per_second;
  out["model_flops_per_step"] = training.model_flops_per_step;
  out["hardware_flops_per_step"] = training.hardware_flops_per_step;
  out["mfu"] = training.mfu;
  out["hfu"] = training.hfu;
  out["stage_imbalance"] = training.stage_imbalance;
  out["memory_capacity"] = training.memory_capacity;
  out["fits"] = training.fits;
  out["memory_verdict"] = training.memory_verdict;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const StageSummary& stage : training.stages) {
    stages.push_back({{"stage", stage.stage},
                      {"device", stage.device},
                      {"layers", stage.layers},
                      {"embedding", stage.embedding},
                      {"lm_head", stage.lm_head},
                      {"forward", stage.forward},
                      {"input_grad", stage.input_grad},
                      {"weight_grad", stage.weight_grad},
                      {"activation_bytes", stage.activation_bytes}});
  }
  out["stages"] = stages;
  nlohmann::ordered_json memory = nlohmann::ordered_json::array();
  for (const DeviceMemory& device : training.memory) {
    memory.push_back({{"parameters", device.parameters},
                      {"gradients", device.gradients},
                      {"optimizer", device.optimizer},
                      {"activations", device.activations},
                      {"unsharded", device.unsharded},
                      {"workspace", device.workspace},
                      {"total", device.total},
                      {"fits", device.fits}});
  }
  out["memory"] = memory;
  return out;
}

}  // namespace ppsim
