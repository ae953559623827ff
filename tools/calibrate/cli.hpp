// SPDX-License-Identifier: Apache-2.0
#pragma once
// The ppsim-calibrate command line, runnable in-process so tests see exit statuses and streams:
//   ppsim-calibrate [--backend cpu|cuda] [--model FILE.json|PRESET] [--tp N] [--seq N]
//                   [--micro-batch N] [--precision bf16[,fp16,tf32,fp32]] [--quick] [-o FILE]
// Exit status as ppsim's (DESIGN.md): 0 success, 2 bad input (one line naming the flag), 1 anything
// else. The profile goes to -o FILE (written to FILE.tmp, then renamed, so a failed run leaves no
// partial file) or to stdout; progress goes to stderr.

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "tools/calibrate/backend.hpp"

namespace CLI {
class App;
}

namespace ppsim::calibrate {

// `args` excludes the program name; `backends` in order of preference for the default (the first
// one available is used when --backend is not given).
int run_calibrate_cli(const std::vector<std::string>& args, const std::vector<BackendEntry>& backends,
                      std::ostream& out, std::ostream& err);

// Defines every flag and hands the command line to `visit` unparsed: its man page and completions
// are written from it (tools/cli_docs).
void visit_calibrate_cli_definition(const std::vector<BackendEntry>& backends,
                                    const std::function<void(const CLI::App&)>& visit);

}  // namespace ppsim::calibrate
