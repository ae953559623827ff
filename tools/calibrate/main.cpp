// SPDX-License-Identifier: Apache-2.0
// The ppsim-calibrate executable: the backends this build has, then the in-process command line.
#include <iostream>
#include <string>
#include <vector>

#include "study/common/output_file.hpp"
#include "tools/calibrate/cli.hpp"
#include "tools/calibrate/cpu_backend.hpp"
#ifdef PPSIM_CALIBRATE_HAVE_CUDA
#include "tools/calibrate/cuda_backend.hpp"
#endif

int main(int argc, char** argv) {
  std::vector<ppsim::calibrate::BackendEntry> backends;
#ifdef PPSIM_CALIBRATE_HAVE_CUDA
  backends.push_back(ppsim::calibrate::cuda_backend_entry());  // preferred when a GPU is present
#endif
  backends.push_back(ppsim::calibrate::cpu_backend_entry());
  ppsim::remove_temporaries_on_signals();
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int status = ppsim::calibrate::run_calibrate_cli(args, backends, std::cout, std::cerr);
  std::cout.flush();
  return std::cout.good() ? status : 1;
}
