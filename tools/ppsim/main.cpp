// SPDX-License-Identifier: Apache-2.0
// The ppsim executable: everything lives in ppsim_app so the tests can drive it in-process.
#include <iostream>
#include <string>
#include <vector>

#include "study/common/output_file.hpp"
#include "tools/ppsim/cli.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  ppsim::remove_temporaries_on_signals();
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int status = ppsim::run_cli(args, std::cout, std::cerr);
  std::cout.flush();
  if (std::cout.good()) return status;
  // An unwritable stdout (a full disk, a closed pipe) is a failure, said as such.
  std::cerr << "ppsim: error: cannot write to stdout\n";
  return 1;
}
