// SPDX-License-Identifier: Apache-2.0
#pragma once
// The ppsim command line (DESIGN.md, "Command line"), runnable in-process so tests see exit
// statuses and both streams. Output goes to `out` only once every simulation has succeeded.

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ppsim {

// `args` excludes the program name. Returns the exit status.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// Defines the whole command line (every command and every flag, as help shows them) and hands it
// to `visit` without parsing anything: the man page and the shell completions are written from it
// (tools/cli_docs), so they never disagree with what the parser accepts.
void visit_cli_definition(const std::function<void(const CLI::App&)>& visit);

}  // namespace ppsim
