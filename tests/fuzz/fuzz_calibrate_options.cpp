// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: ppsim-calibrate's command line (tools/calibrate/cli.hpp) with NUL-separated
// arguments, through parsing and every check that runs before measuring. Its one backend says it
// cannot run here, so nothing is measured and no file is written: what is fuzzed is the refusal of
// bad options (one line, exit 2), never a crash, an abort or an allocation sized by an option.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "tools/calibrate/cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args(1);
  for (std::size_t i = 0; i < size && args.size() <= 16; ++i) {
    if (data[i] == 0) {
      args.emplace_back();
    } else if (args.back().size() < 256) {
      args.back() += static_cast<char>(data[i]);
    }
  }
  const std::vector<ppsim::calibrate::BackendEntry> backends = {
      {"cpu", [] { return std::string("not measured while fuzzing"); }, [](bool) { return nullptr; }}};
  std::ostringstream out;
  std::ostringstream err;
  (void)ppsim::calibrate::run_calibrate_cli(args, backends, out, err);
  return 0;
}
