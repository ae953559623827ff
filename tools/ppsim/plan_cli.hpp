// SPDX-License-Identifier: Apache-2.0
#pragma once
// The plan subcommand's own options: `ppsim plan [PLAN.json] --gpus N [--top K] [--objective O]
// [-j N] [--framework F] [--split-budget N] [--html FILE]`, beside the scenario flags every
// simulating command takes (--model, --hardware, --seq, --global-batch, and any layout flag, which
// pins its axis).

#include <CLI/CLI.hpp>
#include <map>
#include <string>

#include "study/api.hpp"

namespace ppsim {

struct PlanOptions {
  std::string file;  // PLAN.json: a config with the plan's keys too
  std::string html;
  std::map<std::string, std::string, std::less<>> text;  // kPlanKeys as typed
  std::map<std::string, CLI::Option*, std::less<>> options;
};

void add_plan_options(CLI::App& plan, PlanOptions& options);

// The plan file's settings (when one is given) with the plan flags over them; the scenario flags are
// applied over request.scenario by the caller.
PlanRequest plan_request_from_file(const PlanOptions& options);
void apply_plan_flags(const PlanOptions& options, PlanSettings& settings);

}  // namespace ppsim
