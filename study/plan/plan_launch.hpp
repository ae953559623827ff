// SPDX-License-Identifier: Apache-2.0
#pragma once
// A planned layout as ready-to-paste launch settings: Megatron-LM's arguments (pretrain_gpt.py), a
// torchtitan TOML [parallelism] section with its per-stage module lists, and ppsim's own config and
// command line, each empty with the reason where that framework does not run the layout.

#include <string>

#include <nlohmann/json.hpp>

#include "study/input/scenario.hpp"
#include "study/plan/plan_space.hpp"

namespace ppsim {

struct LaunchFlags {
  std::string megatron;     // arguments of pretrain_gpt.py
  std::string megatron_not;  // why Megatron-LM does not run it, when megatron is empty
  std::string torchtitan;   // TOML
  std::string torchtitan_not;
  nlohmann::ordered_json ppsim_config;  // reads back with ppsim run -c
  std::string ppsim_command;
};

// `base`: the plan's fixed settings (resolved); the layout's split, when it has none, is the even one.
LaunchFlags launch_flags(const Scenario& base, const PlanLayout& layout);

// The stages' layers as each framework's default places them: as even as possible, the remainder
// on the first stages.
std::vector<int> layers_of_stages(const Scenario& base, const PlanLayout& layout);

}  // namespace ppsim
