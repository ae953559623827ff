// SPDX-License-Identifier: Apache-2.0
#pragma once
// The sweep and merge subcommands: `ppsim sweep STUDY.json [-j N] [-o FILE] [--shard I/N] [--html FILE]` and
// `ppsim merge -o OUT FILES...`.

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace ppsim {

// More threads than this is a typo: points are shared out one at a time anyway.
inline constexpr unsigned kMaxJobs = 4096;

struct SweepCommands {
  CLI::App* sweep = nullptr;
  CLI::App* merge = nullptr;
  std::string study;
  unsigned threads = 0;  // 0: every core
  bool progress = false;  // --progress: progress lines when stderr is not a terminal
  bool simulate_all = false;  // --simulate-all: no closed-form fast path
  std::string output;
  std::string shard;
  std::string html;
  std::string summary;  // --summary FILE.json
  std::vector<std::string> expect;  // --expect: on the top point
  std::string merge_output;
  std::vector<std::string> merge_inputs;
};

// Adds both subcommands to `app`; `commands` must outlive the parse (CLI11 writes into it).
void add_sweep_commands(CLI::App& app, SweepCommands& commands, bool sweep_options, bool merge_options);

// Runs whichever of them was parsed and returns the exit status (1: an --expect failed); throws
// InputError or ScheduleError like the other commands.
int run_sweep_commands(const SweepCommands& commands, std::ostream& out, std::ostream& err);

}  // namespace ppsim
