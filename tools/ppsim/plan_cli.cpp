// SPDX-License-Identifier: Apache-2.0
#include "tools/ppsim/plan_cli.hpp"

#include "study/input/config.hpp"

namespace ppsim {

void add_plan_options(CLI::App& plan, PlanOptions& options) {
  plan.add_option("plan", options.file, "a config file that may also hold gpus, top, objective, jobs, framework")
      ->type_name("PLAN.json");
  const struct {
    const char* flag;
    const char* key;
    const char* value;
    const char* help;
  } flags[] = {
      {"--gpus", "gpus", "N", "GPUs the layout must use exactly (required, here or in PLAN.json)"},
      {"--top", "top", "K", "layouts to show (default 5)"},
      {"--objective", "objective", "NAME", "step_time (default), p99_step_time, goodput or tokens_per_second_per_gpu"},
      {"-j,--jobs", "jobs", "N", "simulations side by side; 0 is every core (default 1); same output for any N"},
      {"--framework", "framework", "NAME", "megatron, torchtitan or both (default): whose layouts to consider"},
      {"--split-budget", "split-budget", "N", "splits the layer-split search judges per finalist (default 32; 0 none)"},
  };
  for (const auto& flag : flags) {
    options.options[flag.key] = plan.add_option(flag.flag, options.text[flag.key], flag.help)->type_name(flag.value);
  }
  plan.add_option("--html", options.html, "write a page: step time against memory with its Pareto front, the tables")
      ->type_name("FILE");
}

PlanRequest plan_request_from_file(const PlanOptions& options) {
  PlanRequest request;
  if (!options.file.empty()) apply_plan_settings(read_config_file(options.file), options.file, options.file, request);
  return request;
}

void apply_plan_flags(const PlanOptions& options, PlanSettings& settings) {
  for (const std::string_view key : kPlanKeys) {
    const auto option = options.options.find(key);
    if (option == options.options.end() || option->second->count() == 0) continue;
    apply_plan_option(key, options.text.at(std::string(key)), (key == "jobs" ? "--jobs" : "--" + std::string(key)),
                      settings);
  }
}

}  // namespace ppsim
