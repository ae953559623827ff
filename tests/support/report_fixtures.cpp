// SPDX-License-Identifier: Apache-2.0
#include "support/report_fixtures.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>

#include "sim/engine.hpp"

namespace ppsim {

Report simulate_report(const std::string& name, Program program, const UniformCosts& costs) {
  Report report;
  report.schedule = name;
  report.params = {program.num_devices, program.num_microbatches,
                   program.num_stages() / std::max(program.num_devices, 1)};
  SimulationOutcome outcome = Engine{}.run(program, UniformCostModel{costs}, {.record_timeline = true});
  REQUIRE(outcome.result);
  report.program = std::move(program);
  report.result = std::move(*outcome.result);
  return report;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace ppsim
