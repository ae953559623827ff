// SPDX-License-Identifier: Apache-2.0
#include "study/run/transformer_study.hpp"

#include <algorithm>
#include <cctype>
#include <memory>

#include "models/json/architecture_json.hpp"
#include "models/json/hardware_profile_json.hpp"
#include "models/json/json_input_error.hpp"
#include "study/common/errors.hpp"
#include "study/input/calibrated_costs.hpp"
#include "study/input/config.hpp"
#include "study/input/preset_family.hpp"

namespace ppsim {
namespace {

bool is_file_name(std::string_view text) { return text.ends_with(".json"); }

template <typename Preset, typename Names>
std::string unknown_preset(const Scenario& scenario, std::string_view key, std::string_view what,
                           std::string_view given, const Names& names) {
  std::vector<std::string_view> candidates(names.begin(), names.end());
  const std::string suggestion = nearest_name(lower_case(given), candidates);
  std::string known;
  for (std::string_view name : candidates) known += (known.empty() ? "" : ", ") + std::string(name);
  return scenario.source_of(key) + ": unknown " + std::string(what) + " '" + std::string(given) + "'" +
         (suggestion.empty() ? "" : " (did you mean " + suggestion + "?)") + "; presets: " + known +
         ", or a .json file";
}

// Megatron-LM's and Transformer Engine's rules for context parallelism, each refusal one line.
void check_context_parallel(const Scenario& scenario, const Architecture& arch) {
  const TrainingLayout& layout = scenario.layout;
  const int c = layout.context_parallel;
  const std::string cp_flag = scenario.source_of("context-parallel");
  const bool hierarchical = layout.cp_comm == "a2a+p2p";
  if (!layout.hierarchical_cp.empty() && !hierarchical) {
    throw InputError(scenario.source_of("hierarchical-context-parallel-sizes") + ": needs --cp-comm a2a+p2p, got " +
                     layout.cp_comm);
  }
  if (c <= 1) return;
  if (!layout.flash_attention) {
    // Transformer Engine runs context parallelism inside its fused attention only.
    throw InputError(cp_flag + ": needs flash attention, the fused attention Transformer Engine's context "
                               "parallelism runs in");
  }
  if (layout.seq % (2 * std::int64_t{c}) != 0) {
    // Megatron splits each sequence into 2c chunks for a load-balanced causal mask (get_batch_on_this_cp_rank).
    throw InputError(cp_flag + ": c=" + std::to_string(c) + " does not split s=" + std::to_string(layout.seq) +
                     " into 2c equal chunks, as Megatron's load-balanced split needs");
  }
  int a2a = layout.cp_comm == "a2a" ? c : 1;  // ranks an all-to-all splits the heads over
  if (hierarchical) {
    if (layout.hierarchical_cp.size() != 2) {
      throw InputError(scenario.source_of("cp-comm") + ": a2a+p2p needs --hierarchical-context-parallel-sizes A,P");
    }
    if (std::int64_t{layout.hierarchical_cp[0]} * layout.hierarchical_cp[1] != c) {
      throw InputError(scenario.source_of("hierarchical-context-parallel-sizes") + ": " +
                       std::to_string(layout.hierarchical_cp[0]) + " * " + std::to_string(layout.hierarchical_cp[1]) +
                       " is not c=" + std::to_string(c));
    }
    a2a = layout.hierarchical_cp[0];
  }
  const int heads = arch.heads / layout.tensor_parallel;  // this rank's heads
  if (a2a > 1 && heads % a2a != 0) {
    // The all-to-all hands each of its ranks a whole share of the heads (DeepSpeed-Ulysses).
    throw InputError(scenario.source_of("cp-comm") + ": " + layout.cp_comm + " splits this rank's " +
                     std::to_string(heads) + " heads over " + std::to_string(a2a) + " ranks, which must divide them");
  }
}

}  // namespace

Architecture resolve_architecture(const Scenario& scenario) {
  if (is_file_name(scenario.model)) {
    try {
      return load_architecture(scenario.model);
    } catch (const JsonInputError& error) {
      throw InputError(error.what());
    }
  }
  std::vector<std::string> names;
  for (const Architecture& preset : architecture_presets()) {
    if (lower_case(preset.name) == lower_case(scenario.model)) return preset;
    names.push_back(preset.name);
  }
  throw InputError(unknown_preset<Architecture>(scenario, "model", "model", scenario.model, names));
}

HardwareProfile resolve_hardware(const Scenario& scenario) {
  if (is_file_name(scenario.hardware)) {
    try {
      return load_hardware_profile(scenario.hardware).profile;
    } catch (const JsonInputError& error) {
      throw InputError(error.what());
    }
  }
  std::vector<std::string> names;
  for (const HardwareProfile& preset : hardware_presets()) {
    if (lower_case(preset.name) == lower_case(scenario.hardware)) return preset;
    names.push_back(lower_case(preset.name));
  }
  throw InputError(unknown_preset<HardwareProfile>(scenario, "hardware", "hardware", scenario.hardware, names));
}

Scenario resolve_transformer_scenario(Scenario scenario) {
  if (scenario.model.empty()) {
    for (const auto& [key, source] : scenario.sources) {
      if (is_model_setting(key)) throw InputError(source + ": needs --model (a transformer study)");
    }
    resolve_calibration(scenario);
    return scenario;  // moved: a sweep's point that needs no model is not copied
  }
  for (const auto& [key, source] : scenario.sources) {
    if (is_cost_setting(key)) {
      throw InputError(source + ": cannot be combined with --model, which derives F, B, W, memory and links");
    }
  }
  return resolve_transformer_scenario_with(scenario, std::make_shared<const Architecture>(resolve_architecture(scenario)),
                                           std::make_shared<const HardwareProfile>(resolve_hardware(scenario)));
}

Scenario resolve_transformer_scenario_with(const Scenario& scenario, std::shared_ptr<const Architecture> model,
                                           std::shared_ptr<const HardwareProfile> hardware_profile) {
  Scenario resolved = scenario;
  resolved.resolved_model = std::move(model);
  resolved.resolved_hardware = std::move(hardware_profile);
  const Architecture& arch = *resolved.resolved_model;
  const HardwareProfile& hardware = *resolved.resolved_hardware;
  TrainingLayout& layout = resolved.layout;
  const int t = layout.tensor_parallel;
  auto refuse_t = [&](const std::string& why) { throw InputError(scenario.source_of("t") + ": " + why); };
  if (arch.heads % t != 0) {
    refuse_t("t=" + std::to_string(t) + " does not divide the " + std::to_string(arch.heads) + " attention heads of " +
             arch.name);
  }
  if (arch.kv_heads % t != 0) {
    // Megatron-LM asserts the same: each rank holds whole KV groups.
    refuse_t("t=" + std::to_string(t) + " does not divide the " + std::to_string(arch.kv_heads) + " KV heads of " +
             arch.name);
  }
  if (has_experts(arch) && t > 1 && !layout.sequence_parallel) {
    // Megatron asserts the same (megatron/training/arguments.py: "When using MoE and tensor
    // parallelism, sequence parallelism must be used"); the experts then take each rank's shard.
    refuse_t("t=" + std::to_string(t) + " with " + arch.name +
             "'s mixture-of-experts layers needs --sequence-parallel, as Megatron-LM requires");
  }
  if (moe_layer_count(arch) < arch.layers && arch.ffn_hidden % t != 0) {  // a dense MLP to split
    refuse_t("t=" + std::to_string(t) + " does not divide the FFN width " + std::to_string(arch.ffn_hidden) + " of " +
             arch.name);
  }
  if (layout.tp_comm_overlap && !(layout.sequence_parallel && layout.tensor_parallel > 1)) {
    // Megatron asserts the same (arguments.py): the overlapped collectives are sequence parallelism's.
    throw InputError(scenario.source_of("tp-comm-overlap") + ": needs --sequence-parallel with t > 1, whose "
                                                            "all-gathers and reduce-scatters it overlaps");
  }
  const bool agree = scenario.overlap_p2p_comm && (*scenario.overlap_p2p_comm ? scenario.comm == CommMode::kOverlap
                                                                                : scenario.comm == CommMode::kPaired);
  if (scenario.sources.count("comm") > 0 && scenario.overlap_p2p_comm && !agree) {
    // Both may be given when they agree (a report's scenario has both): overlap with true, paired
    // with false.
    throw InputError(scenario.source_of("overlap-p2p-comm") + ": " + (*scenario.overlap_p2p_comm ? "true" : "false") +
                     " disagrees with " + scenario.source_of("comm") + " " + comm_mode_name(scenario.comm));
  }
  if (scenario.overlap_p2p_comm && !*scenario.overlap_p2p_comm && scenario.sources.count("comm") == 0) {
    // Megatron's paired sends are its own schedules' (1F1B and interleaved 1F1B); the others'
    // runtimes send asynchronously, and paired sends deadlock some of them (ZB-H2, ZB-V).
    for (const std::string& schedule : scenario.schedules) {
      if (schedule != "1f1b" && schedule != "interleaved-1f1b") {
        throw InputError(scenario.source_of("overlap-p2p-comm") + ": false (Megatron's paired sends) applies to "
                                                                 "1f1b and interleaved-1f1b, not to " + schedule +
                         ", whose runtime sends asynchronously; --comm paired forces it");
      }
    }
  }
  if (scenario.sources.count("recompute-modules") > 0) {
    // Megatron-LM reads --recompute-modules under selective granularity only.
    if (scenario.sources.count("recompute") > 0 && layout.recompute != Recompute::kSelective) {
      throw InputError(scenario.source_of("recompute-modules") + ": needs --recompute selective, got " +
                       scenario.source_of("recompute") + " " + recompute_name(layout.recompute));
    }
    layout.recompute = Recompute::kSelective;
    const RecomputeModules& modules = layout.recompute_modules;
    auto refuse_module = [&](const char* name, const std::string& why) {
      throw InputError(scenario.source_of("recompute-modules") + ": " + name + " needs " + why);
    };
    for (const auto& [on, name] : {std::pair{modules.moe_act, "moe_act"}, std::pair{modules.moe, "moe"},
                                   std::pair{modules.shared_experts, "shared_experts"}}) {
      if (on && !has_experts(arch)) refuse_module(name, "a mixture-of-experts model; " + arch.name + " is dense");
    }
    if (modules.shared_experts && arch.moe.shared_experts == 0) {
      refuse_module("shared_experts", "shared experts; " + arch.name + " has none");
    }
    // Megatron-LM refuses it too (transformer_config.py): only with multi-latent attention.
    if (modules.mla_up_proj && !has_mla(arch)) {
      refuse_module("mla_up_proj", "multi-latent attention (\"mla\"); " + arch.name + " has none");
    }
  }
  const int e = layout.expert_parallel;
  auto refuse_e = [&](const std::string& why) { throw InputError(scenario.source_of("e") + ": " + why); };
  if (e > 1 && !has_experts(arch)) refuse_e("needs a mixture-of-experts model; " + arch.name + " is dense");
  if (e > 1 && arch.moe.experts % e != 0) {
    // Megatron asserts the same (megatron/core/transformer/moe/moe_layer.py): whole experts per rank.
    refuse_e("e=" + std::to_string(e) + " does not divide the " + std::to_string(arch.moe.experts) + " experts of " +
             arch.name);
  }
  const int etp = layout.expert_tensor_parallel;
  auto refuse_etp = [&](const std::string& why) {
    throw InputError(scenario.source_of("expert-tensor-parallel") + ": " + why);
  };
  if (etp > 1 && !has_experts(arch)) refuse_etp("needs a mixture-of-experts model; " + arch.name + " is dense");
  // Expert parallelism folds out of the t * c * d ranks of a pipeline stage (parallel_state.py,
  // initialize_model_parallel: the expert groups, etp x ep x edp, divide the same ranks as tp x cp x dp).
  const std::int64_t stage_ranks = std::int64_t{t} * layout.context_parallel * layout.data_parallel;
  const std::string folded = (layout.context_parallel > 1 ? "t*c*d = " : "t*d = ") + std::to_string(stage_ranks) +
                             " ranks of a pipeline stage, out of which it folds";
  if (e > 1 && stage_ranks % (std::int64_t{e} * etp) != 0) {
    refuse_e("e=" + std::to_string(e) + (etp > 1 ? " times --expert-tensor-parallel " + std::to_string(etp) : "") +
             " does not divide the " + folded);
  }
  if (etp > 1 && stage_ranks % (std::int64_t{e} * etp) != 0) {
    refuse_etp(std::to_string(etp) + " times e=" + std::to_string(e) + " does not divide the " + folded);
  }
  check_context_parallel(scenario, arch);
  if (layout.data_parallel_replicate > 1) {
    const std::string flag = scenario.source_of("data-parallel-replicate");
    if (!layout.fsdp) throw InputError(flag + ": HSDP replicates FSDP's shards, so it needs --fsdp");
    if (layout.data_parallel % layout.data_parallel_replicate != 0) {
      throw InputError(flag + ": R=" + std::to_string(layout.data_parallel_replicate) + " does not divide d=" +
                       std::to_string(layout.data_parallel) + " into replicas of equal shards");
    }
  }
  if (etp > 1 && arch.moe.expert_ffn_hidden % etp != 0) {
    refuse_etp(std::to_string(etp) + " does not divide the expert FFN width " +
               std::to_string(arch.moe.expert_ffn_hidden) + " of " + arch.name);
  }
  if (has_experts(arch) && shared_expert_width(arch) % t != 0) {  // the shared experts split t ways
    refuse_t("t=" + std::to_string(t) + " does not divide the shared experts' width " +
             std::to_string(shared_expert_width(arch)) + " of " + arch.name);
  }
  if (e > 1 && layout.fsdp) refuse_e("FSDP with expert parallelism is not modelled; give one of the two");
  if (etp > 1 && layout.fsdp) refuse_etp("FSDP with expert tensor parallelism is not modelled; give one of the two");
  for (const std::string& schedule : scenario.schedules) {
    if (schedule != "combined-1f1b") continue;
    // Megatron-LM's asserts for overlap_moe_expert_parallel_comm (transformer_config.py): expert
    // parallelism to overlap, a dispatcher that runs all-to-alls, no full recomputation.
    auto refuse = [&](const std::string& why) {
      throw InputError(scenario.source_of("schedule") + ": combined-1f1b " + why);
    };
    if (!has_experts(arch) || e <= 1) {
      refuse("overlaps MoE all-to-alls, so it needs a mixture-of-experts model and -e > 1, as Megatron-LM's "
             "--overlap-moe-expert-parallel-comm does");
    }
    if (layout.moe_dispatcher == "allgather") refuse("needs --moe-dispatcher alltoall or deepep, as Megatron-LM does");
    if (layout.recompute == Recompute::kFull) refuse("does not run with --recompute full, as in Megatron-LM");
  }
  if (layout.moe_dispatcher != "alltoall" && !has_experts(arch)) {
    throw InputError(scenario.source_of("moe-dispatcher") + ": needs a mixture-of-experts model; " + arch.name +
                     " is dense");
  }
  if (layout.moe_imbalance != 1 && !has_experts(arch)) {
    throw InputError(scenario.source_of("moe-imbalance") + ": needs a mixture-of-experts model; " + arch.name +
                     " is dense");
  }
  if (layout.fsdp && layout.distributed_optimizer) {
    throw InputError(scenario.source_of("distributed-optimizer") + ": --fsdp shards the optimizer state already; "
                                                                  "give one of the two");
  }
  if (!layout.fsdp && layout.fsdp_unit != "block") {
    throw InputError(scenario.source_of("fsdp-unit") + ": says what FSDP shards as one unit; it needs --fsdp");
  }
  if (layout.reshard_after_forward != "default") {
    if (!layout.fsdp) throw InputError(scenario.source_of("reshard-after-forward") + ": is FSDP's; it needs --fsdp");
    if (layout.fsdp_unit == "stage") {
      throw InputError(scenario.source_of("reshard-after-forward") + ": applies to blocks, and --fsdp-unit stage "
                                                                    "gathers the stage once (UNSHARD to RESHARD)");
    }
  }
  if (layout.fsdp_float8_all_gather && (!layout.fsdp || layout.precision != "fp8")) {
    throw InputError(scenario.source_of("fsdp-float8-all-gather") + ": gathers FP8 weights, so it needs --fsdp and "
                                                                     "--precision fp8");
  }
  if (layout.fsdp && scenario.comm_actions == Scenario::CommActions::kIgnore) {
    throw InputError(scenario.source_of("fsdp") + ": its costs are those of UNSHARD, RESHARD and REDUCE_GRAD, which "
                                                 "--comm-actions ignore drops");
  }
  if (layout.fsdp && layout.grad_compression != "none") {
    throw InputError(scenario.source_of("grad-compression") + ": compresses Megatron-style data-parallel reductions, "
                                                             "not FSDP's; give one of the two");
  }
  if (layout.grad_compression == "1bit" && layout.distributed_optimizer) {
    // DeepSpeed's 1-bit Adam runs without ZeRO's sharded optimizer state.
    throw InputError(scenario.source_of("grad-compression") + ": 1bit (1-bit Adam) keeps the whole optimizer state "
                                                             "on every rank; it does not combine with "
                                                             "--distributed-optimizer");
  }
  if (layout.fp8_param_gather && layout.precision != "fp8") {
    // Megatron asserts the same (arguments.py): FP8 parameters need an FP8 recipe.
    throw InputError(scenario.source_of("fp8-param-gather") + ": needs --precision fp8, whose FP8 weights it keeps "
                                                             "as the parameters");
  }
  if (layout.overlap_param_gather && !layout.distributed_optimizer) {
    // Megatron asserts the same (arguments.py): only the distributed optimizer gathers parameters.
    throw InputError(scenario.source_of("overlap-param-gather") + ": needs --distributed-optimizer, whose "
                                                                 "parameter all-gather it overlaps");
  }
  if (!hardware.peak_flops(layout.precision)) {
    throw InputError(scenario.source_of("precision") + ": " + hardware.name + " has no " + layout.precision +
                     " peak in its profile");
  }
  const std::int64_t per_microbatch = layout.micro_batch * layout.data_parallel;
  if (scenario.sources.count("global-batch") > 0) {
    if (layout.global_batch % per_microbatch != 0) {
      throw InputError(scenario.source_of("global-batch") + ": " + std::to_string(layout.global_batch) +
                       " sequences do not split into micro-batches of b=" + std::to_string(layout.micro_batch) +
                       " on d=" + std::to_string(layout.data_parallel) + " replicas (needs a multiple of " +
                       std::to_string(per_microbatch) + ")");
    }
    const std::int64_t m = layout.global_batch / per_microbatch;
    if (scenario.sources.count("m") > 0 && m != scenario.params.m) {
      throw InputError(scenario.source_of("m") + ": " + std::to_string(scenario.params.m) +
                       " disagrees with the global batch: " + std::to_string(layout.global_batch) + " / (b=" +
                       std::to_string(layout.micro_batch) + " * d=" + std::to_string(layout.data_parallel) +
                       ") = " + std::to_string(m) + " micro-batches");
    }
    if (m > 1'000'000'000) throw InputError(scenario.source_of("global-batch") + ": is absurdly large");
    resolved.params.m = static_cast<int>(m);
    resolved.sources["m"] = scenario.source_of("global-batch");
  } else {
    layout.global_batch = std::int64_t{scenario.params.m} * per_microbatch;
  }
  return resolved;
}

TransformerSetup transformer_setup(const Scenario& scenario) {
  TransformerSetup setup{scenario.resolved_model ? *scenario.resolved_model : resolve_architecture(scenario),
                         scenario.layout,
                         scenario.resolved_hardware ? *scenario.resolved_hardware : resolve_hardware(scenario)};
  setup.layout.pipeline = scenario.params.p;
  setup.layout.chunks = scenario.params.v;
  if (scenario.layout.dropout >= 0) setup.arch.dropout = scenario.layout.dropout;  // --dropout over the model's
  return setup;
}

}  // namespace ppsim
