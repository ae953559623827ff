// SPDX-License-Identifier: Apache-2.0
#pragma once
// --expect EXPR (repeatable) on run, compare and sweep: the flag, its parsing and its failures.

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "study/output/expectation.hpp"

namespace ppsim {

void add_expect_flag(CLI::App& command, std::vector<std::string>& expect);

// Prints each failure ("ppsim: --expect ... failed: ...") and returns the exit status: 1 when any.
int report_expectations(const std::vector<std::string>& failures, std::ostream& err);

}  // namespace ppsim
