#pragma once
// The ppsim command line (DESIGN.md, "Command line"), runnable in-process so tests see exit
// statuses and both streams. Output goes to `out` only once every simulation has succeeded.

#include <iosfwd>
#include <string>
#include <vector>

namespace ppsim {

// `args` excludes the program name. Returns the exit status.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace ppsim
