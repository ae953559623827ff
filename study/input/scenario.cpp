// SPDX-License-Identifier: Apache-2.0
#include "study/input/scenario.hpp"

#include <unordered_set>

#include "study/input/variability_settings.hpp"

namespace ppsim {

Scenario default_study() {
  Scenario scenario;
  scenario.schedules = {"gpipe", "1f1b"};
  scenario.timeline = true;
  return scenario;
}

std::string Scenario::source_of(std::string_view key) const {
  if (auto it = sources.find(key); it != sources.end()) return it->second;
  return key.size() == 1 ? "-" + std::string(key) : "--" + std::string(key);
}

std::vector<Duration> resolved_weight(const Scenario& scenario) {
  if (!scenario.weight.empty()) return scenario.weight;
  std::vector<Duration> half;
  for (const Duration& backward : scenario.backward) half.push_back(Duration{backward.value / 2, backward.with_unit});
  return half;
}

bool is_model_setting(std::string_view key) {
  // A set, not a scan of the list: a sweep asks this of every setting of every point.
  static const std::unordered_set<std::string_view> kModelKeys = {
      "hardware", "seq", "global-batch", "t", "d", "e", "context-parallel", "cp-comm",
      "hierarchical-context-parallel-sizes", "data-parallel-replicate", "expert-tensor-parallel", "moe-dispatcher",
      "moe-imbalance", "sequence-parallel", "recompute", "recompute-modules", "flash-attention",
      "distributed-optimizer", "fsdp", "fsdp-unit", "reshard-after-forward", "fsdp-float8-all-gather", "precision",
      "grad-reduce-dtype", "fp8-param-gather", "grad-compression", "layers-per-stage", "overlap-grad-reduce",
      "bucket-size", "overlap-param-gather", "tp-comm-overlap", "dropout", "workspace", "memory-headroom",
      "overlap-p2p-comm"};
  return kModelKeys.contains(key) || is_failure_setting(key);
}

bool is_cost_setting(std::string_view key) {
  for (std::string_view cost_key : {"forward", "backward", "weight", "overlap", "costs-per", "latency", "bandwidth", "message-bytes",
                                    "activation-bytes", "static-bytes", "weight-stash-fraction", "calibrated-from"}) {
    if (key == cost_key) return true;
  }
  return false;
}

const char* comm_mode_name(CommMode mode) {
  switch (mode) {
    case CommMode::kOverlap:
      return "overlap";
    case CommMode::kBlocking:
      return "blocking";
    case CommMode::kPaired:
      return "paired";
  }
  return "overlap";
}

CommMode engine_comm_mode(const Scenario& scenario, std::string_view schedule) {
  if (scenario.model.empty() || scenario.sources.count("comm") > 0) return scenario.comm;
  // Megatron-LM keeps --overlap-p2p-comm (on by default) only for its interleaved schedule and
  // turns it off for its schedule without interleaving, 1F1B (training/arguments.py, validate_args);
  // batch_p2p_comm is its negation (training/argument_utils.py), so Megatron's 1F1B sends blocking
  // and paired. The other schedules are not Megatron's: their own runtimes (torch.distributed.
  // pipelining, the zero-bubble and DualPipe repositories) issue asynchronous sends and wait only
  // before the op that needs the data, which is the overlap mode.
  // Under FSDP every schedule runs on torch's runtime, so its sends too are asynchronous.
  const bool megatron_blocking = schedule == "1f1b" && !scenario.layout.fsdp;
  return scenario.overlap_p2p_comm.value_or(!megatron_blocking) ? CommMode::kOverlap : CommMode::kPaired;
}

}  // namespace ppsim
