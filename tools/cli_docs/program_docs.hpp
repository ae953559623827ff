// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the man pages and completions of ppsim and ppsim-calibrate say beyond their command-line
// definitions: summaries, the words each enumerated value accepts, the schedules, the files.

#include <string_view>

#include "tools/cli_docs/cli_docs.hpp"

namespace ppsim::cli_docs {

// `data_dir`: where the configs are installed (/usr/share/ppsim).
CommandDocs ppsim_docs(std::string_view data_dir);
CommandDocs calibrate_docs();

}  // namespace ppsim::cli_docs
