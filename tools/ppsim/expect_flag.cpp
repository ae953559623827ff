// SPDX-License-Identifier: Apache-2.0
#include "tools/ppsim/expect_flag.hpp"

#include "study/common/errors.hpp"

namespace ppsim {

void add_expect_flag(CLI::App& command, std::vector<std::string>& expect) {
  command.add_option("--expect", expect, "exit 1 unless a figure meets this, e.g. 'bubble_ratio <= 0.1' (repeatable)")
      ->type_name("EXPR")
      ->allow_extra_args(false);  // one expression per --expect, so it never takes a positional argument
}

int report_expectations(const std::vector<std::string>& failures, std::ostream& err) {
  for (const std::string& failure : failures) err << "ppsim: " << one_line(failure) << '\n';
  return failures.empty() ? kExitOk : kExitFailure;
}

}  // namespace ppsim
