#include "tools/ppsim/scenario.hpp"

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
  for (const Duration& backward : scenario.backward) half.push_back(Duration{backward.value / 2});
  return half;
}

bool is_model_setting(std::string_view key) {
  for (std::string_view model_key : {"hardware", "seq", "micro-batch", "global-batch", "t", "d", "sequence-parallel",
                                     "recompute", "flash-attention", "distributed-optimizer", "precision",
                                     "layers-per-stage", "overlap-grad-reduce", "bucket-size", "overlap-param-gather",
                                     "tp-comm-overlap", "dropout", "workspace"}) {
    if (key == model_key) return true;
  }
  return false;
}

bool is_cost_setting(std::string_view key) {
  for (std::string_view cost_key : {"forward", "backward", "weight", "overlap", "latency", "bandwidth", "message-bytes",
                                    "activation-bytes", "static-bytes", "weight-stash-fraction"}) {
    if (key == cost_key) return true;
  }
  return false;
}

const char* comm_mode_name(CommMode mode) { return mode == CommMode::kOverlap ? "overlap" : "blocking"; }

}  // namespace ppsim
