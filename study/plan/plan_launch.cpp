// SPDX-License-Identifier: Apache-2.0
#include "study/plan/plan_launch.hpp"

#include <algorithm>

#include "study/input/config.hpp"
#include "study/run/layer_split.hpp"

namespace ppsim {
namespace {

// torch.distributed.pipelining's class names, as torchtitan's pipeline_parallel_schedule takes them.
std::string torch_schedule_name(std::string_view schedule) {
  if (schedule == "gpipe") return "GPipe";
  if (schedule == "1f1b") return "1F1B";
  if (schedule == "interleaved-1f1b") return "Interleaved1F1B";
  if (schedule == "looped-bfs") return "LoopedBFS";
  if (schedule == "interleaved-zb") return "InterleavedZeroBubble";
  if (schedule == "zbv") return "ZBVZeroBubble";
  if (schedule == "dualpipev") return "DualPipeV";
  return "";
}

bool megatron_schedule(std::string_view schedule) {
  return schedule == "1f1b" || schedule == "interleaved-1f1b" || schedule == "combined-1f1b";
}

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

// Megatron-LM's arguments (megatron/training/arguments.py) for the layout.
std::string megatron_arguments(const Scenario& base, const PlanLayout& layout, const std::vector<int>& split) {
  const TrainingLayout& training = base.layout;
  const int layers = base.resolved_model->layers;
  std::string args = "--tensor-model-parallel-size " + std::to_string(layout.t);
  if (layout.t > 1 && (base.sources.count("sequence-parallel") == 0 || training.sequence_parallel)) {
    args += " --sequence-parallel";
  }
  args += " --pipeline-model-parallel-size " + std::to_string(layout.p);
  const bool uniform = layers % (layout.p * layout.v) == 0 &&
                       std::all_of(split.begin(), split.end(), [&](int n) { return n == split.front(); });
  if (layout.p * layout.v > 1 && !uniform) {
    // An uneven split, as Megatron's PipelineParallelLayerLayout reads it; it implies the virtual size.
    args += " --pipeline-model-parallel-layout " + quoted(megatron_layout(split, base.resolved_model->mtp_layers));
  } else if (layout.v > 1) {
    args += " --num-virtual-stages-per-pipeline-rank " + std::to_string(layout.v);
  }
  if (layout.c > 1) args += " --context-parallel-size " + std::to_string(layout.c) + " --cp-comm-type " + training.cp_comm;
  if (layout.e > 1) {
    args += " --expert-model-parallel-size " + std::to_string(layout.e) + " --moe-token-dispatcher-type " +
            (training.moe_dispatcher == "deepep" ? std::string("flex") : training.moe_dispatcher);
  }
  if (has_experts(*base.resolved_model)) args += " --expert-tensor-parallel-size " + std::to_string(layout.etp);
  args += " --micro-batch-size " + std::to_string(layout.b) + " --global-batch-size " +
          std::to_string(training.global_batch) + " --seq-length " + std::to_string(training.seq);
  if (layout.recompute == Recompute::kSelective) args += " --recompute-granularity selective";
  if (layout.recompute == Recompute::kFull) {
    args += " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1";
  }
  if (layout.distributed_optimizer) args += " --use-distributed-optimizer";
  if (training.overlap_grad_reduce) args += " --overlap-grad-reduce";
  if (training.overlap_param_gather && layout.distributed_optimizer) args += " --overlap-param-gather";
  // ppsim's default for Megatron's own schedules, as engine_comm_mode states it.
  if (layout.schedule != "1f1b") args += " --overlap-p2p-comm";
  if (layout.schedule == "combined-1f1b") args += " --overlap-moe-expert-parallel-comm";
  if (training.precision == "fp8") {
    args += " --bf16 --fp8-format hybrid";
  } else {
    args += " --" + training.precision;
  }
  return args;
}

// parallelism.module_fqns_per_model_part as TOML: a list of lists of strings.
std::string module_lists(const std::vector<int>& split) {
  std::string out = "[";
  for (const std::vector<std::string>& stage : torchtitan_module_lists(split)) {
    std::string names;
    for (const std::string& name : stage) names += (names.empty() ? "" : ", ") + quoted(name);
    out += (out.size() == 1 ? "[" : ", [") + names + "]";
  }
  return out + "]";
}

std::string torchtitan_toml(const Scenario& base, const PlanLayout& layout, const std::vector<int>& split) {
  const TrainingLayout& training = base.layout;
  const int shard = layout.d / std::max(1, layout.replicate);
  std::string toml = "[parallelism]\n";
  toml += "data_parallel_replicate_degree = " + std::to_string(layout.replicate) + "\n";
  toml += "data_parallel_shard_degree = " + std::to_string(shard) + "\n";
  toml += "tensor_parallel_degree = " + std::to_string(layout.t) + "\n";
  toml += "context_parallel_degree = " + std::to_string(layout.c) + "\n";
  toml += "pipeline_parallel_degree = " + std::to_string(layout.p) + "\n";
  if (layout.p > 1) {
    toml += "pipeline_parallel_schedule = " + quoted(torch_schedule_name(layout.schedule)) + "\n";
    toml += "pipeline_parallel_microbatch_size = " + std::to_string(layout.b) + "\n";
    toml += "module_fqns_per_model_part = " + module_lists(split) + "\n";
  }
  if (layout.e > 1) toml += "expert_parallel_degree = " + std::to_string(layout.e) + "\n";
  toml += "\n[training]\n";
  toml += "global_batch_size = " + std::to_string(training.global_batch) + "\n";
  // Per data-parallel rank (torchtitan's local_batch_size): the global batch over d.
  toml += "local_batch_size = " + std::to_string(training.global_batch / layout.d) + "\n";
  toml += "seq_len = " + std::to_string(training.seq) + "\n";
  toml += "\n[activation_checkpoint]\nmode = " + quoted(recompute_name(layout.recompute)) + "\n";
  return toml;
}

std::string flag_of(const std::string& key) { return key.size() == 1 ? "-" + key : "--" + key; }

}  // namespace

std::vector<int> layers_of_stages(const Scenario& base, const PlanLayout& layout) {
  if (!layout.layers_per_stage.empty()) return layout.layers_per_stage;
  const int stages = layout.p * layout.v;
  const int layers = base.resolved_model->layers;
  std::vector<int> split(static_cast<std::size_t>(stages), layers / stages);
  for (int s = 0; s < layers % stages; ++s) ++split[static_cast<std::size_t>(s)];
  return split;
}

LaunchFlags launch_flags(const Scenario& base, const PlanLayout& layout) {
  LaunchFlags flags;
  const std::vector<int> split = layers_of_stages(base, layout);
  if (layout.fsdp) {
    flags.megatron_not = "FSDP2 as torchtitan runs it; Megatron-LM's own FSDP is not what ppsim models";
  } else if (!megatron_schedule(layout.schedule)) {
    flags.megatron_not = layout.schedule + " is not one of Megatron-LM's schedules";
  } else {
    flags.megatron = megatron_arguments(base, layout, split);
  }
  if (!layout.fsdp) {
    flags.torchtitan_not = "torchtitan shards with FSDP2; Megatron's DDP and distributed optimizer are not its";
  } else if (torch_schedule_name(layout.schedule).empty()) {
    flags.torchtitan_not = layout.schedule + " is not one of torchtitan's schedules";
  } else {
    flags.torchtitan = torchtitan_toml(base, layout, split);
  }
  Scenario scenario = layout_scenario(base, layout);
  nlohmann::ordered_json config = scenario_to_json(scenario, layout.schedule);
  config.erase("m");  // follows from the global batch
  flags.ppsim_config = config;
  // The command line: the layout's axes and whatever the plan was given, nothing at its default.
  std::vector<std::string> keys{"model", "hardware", "seq", "global-batch", "t", "context-parallel", "e",
                                "expert-tensor-parallel", "p", "v", "d", "micro-batch", "recompute",
                                "sequence-parallel", "distributed-optimizer", "fsdp", "data-parallel-replicate",
                                "schedule", "layers-per-stage"};
  for (const auto& [key, source] : base.sources) {
    if (key != "m" && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  std::string command = "ppsim run";
  for (const std::string& key : keys) {
    if (!config.contains(key)) continue;
    const auto& value = config[key];
    if (key == "layers-per-stage" && layout.layers_per_stage.empty()) continue;
    if ((key == "context-parallel" || key == "e" || key == "expert-tensor-parallel" ||
         key == "data-parallel-replicate" || key == "v") &&
        value.is_number() && value.get<double>() == 1 && base.sources.count(key) == 0) {
      continue;
    }
    if (value.is_boolean()) {
      if (value.get<bool>() || base.sources.count(key) > 0) command += " " + (value.get<bool>() ? flag_of(key) : "--no-" + key);
      continue;
    }
    std::string text;
    if (value.is_array()) {
      for (const auto& item : value) text += (text.empty() ? "" : ",") + item.dump();
    } else if (value.is_string()) {
      text = value.get<std::string>();
    } else {
      text = value.dump();
    }
    command += " " + flag_of(key) + " " + text;
  }
  flags.ppsim_command = command;
  return flags;
}

}  // namespace ppsim
