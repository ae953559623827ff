// SPDX-License-Identifier: Apache-2.0
#include "study/input/setting_aliases.hpp"

#include <algorithm>
#include <array>

#include "study/input/config.hpp"

namespace ppsim {
namespace {

struct Alias {
  std::string_view name;
  std::string_view key;          // "" when only explained
  std::string_view explanation;  // why not, and what to write instead
};

// Megatron-LM: megatron/training/arguments.py (core_v0.15), the flags without their "--".
// torchtitan: torchtitan/config/job_config.py, the [parallelism] and [training] fields
// ([activation_checkpoint]'s mode is read in its section, config.cpp).
constexpr std::array kAliases = {
    // Megatron-LM
    Alias{"tensor-model-parallel-size", "t", ""},
    Alias{"pipeline-model-parallel-size", "p", ""},
    Alias{"num-virtual-stages-per-pipeline-rank", "v", ""},
    Alias{"virtual-pipeline-model-parallel-size", "v", ""},
    Alias{"num-layers-per-virtual-pipeline-stage", "",
          "is Megatron-LM's layers per virtual stage; ppsim's \"v\" is virtual stages per device: v = layers / (p * N)"},
    Alias{"micro-batch-size", "micro-batch", ""},
    Alias{"global-batch-size", "global-batch", ""},
    Alias{"seq-length", "seq", ""},
    Alias{"context-parallel-size", "context-parallel", ""},
    Alias{"cp-comm-type", "cp-comm", ""},
    Alias{"expert-model-parallel-size", "e", ""},
    Alias{"expert-tensor-parallel-size", "expert-tensor-parallel", ""},
    Alias{"use-distributed-optimizer", "distributed-optimizer", ""},
    Alias{"recompute-granularity", "recompute", ""},
    Alias{"ddp-bucket-size", "bucket-size", ""},
    Alias{"microbatch-group-size-per-vp-stage", "microbatch-group-size", ""},
    Alias{"pipe-sp-splits", "sequence-splits", ""},  // thunlp/Seq1F1B
    Alias{"num-seq-splits", "sequence-splits", ""},  // the zero-bubble repository's seq1f1b
    Alias{"data-parallel-size", "",
          "is derived in Megatron-LM (world size / (t * p * context-parallel)); ppsim's \"d\" is the data-parallel "
          "degree"},
    Alias{"num-layers", "", "belongs to the model: give \"model\" a preset or a model file"},
    // torchtitan [parallelism]
    Alias{"tensor_parallel_degree", "t", ""},
    Alias{"pipeline_parallel_degree", "p", ""},
    Alias{"pipeline_parallel_schedule", "schedule", ""},
    Alias{"pipeline_parallel_schedule_csv", "schedule-file", ""},
    Alias{"pipeline_parallel_microbatch_size", "micro-batch", ""},
    Alias{"pipeline_parallel_layers_per_stage", "",
          "is torchtitan's layers per stage, the embedding and the output counted as one layer each, giving "
          "ceil((layers + 2) / N) stages; ppsim's \"layers-per-stage\" lists each stage's transformer layers, and "
          "\"v\" sets the stages per device"},
    Alias{"context_parallel_degree", "context-parallel", ""},
    Alias{"expert_parallel_degree", "e", ""},
    Alias{"expert_tensor_parallel_degree", "expert-tensor-parallel", ""},
    Alias{"data_parallel_replicate_degree", "data-parallel-replicate", ""},
    Alias{"data_parallel_shard_degree", "",
          "is torchtitan's FSDP degree; ppsim's \"d\" is replicate * shard, with \"fsdp\": true and "
          "\"data-parallel-replicate\" the replicas"},
    Alias{"fsdp_reshard_after_forward", "reshard-after-forward", ""},
    // torchtitan [training] and [activation_checkpoint]
    Alias{"seq_len", "seq", ""},
    Alias{"global_batch_size", "global-batch", ""},
    Alias{"local_batch_size", "",
          "is torchtitan's sequences per data-parallel rank; ppsim's \"global-batch\" is local_batch_size * d"},
};

// "tensor_model_parallel_size" -> "tensor-model-parallel-size".
std::string hyphenated(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

}  // namespace

std::optional<SettingAlias> setting_alias(std::string_view name) {
  const std::string dashed = hyphenated(name);
  for (const SettingInfo& setting : scenario_settings()) {
    if (setting.key == name) return SettingAlias{std::string(setting.key), {}};
    // The long option name: "-t,--tensor-parallel" -> "tensor-parallel".
    const std::size_t dashes = setting.flag.rfind("--");
    if (dashes != std::string_view::npos && setting.flag.substr(dashes + 2) == name) {
      return SettingAlias{std::string(setting.key), {}};
    }
  }
  for (const Alias& alias : kAliases) {
    if (alias.name == name || hyphenated(alias.name) == dashed) {
      return SettingAlias{std::string(alias.key), std::string(alias.explanation)};
    }
  }
  return std::nullopt;
}

bool is_torchtitan_section(std::string_view name) {
  return name == "parallelism" || name == "training" || name == "activation_checkpoint";
}

}  // namespace ppsim
