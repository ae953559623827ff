// SPDX-License-Identifier: Apache-2.0
// ppsim-cli-docs OUTDIR: writes the man pages and shell completions of ppsim and ppsim-calibrate
// from their command-line definitions, at build time (tools/cli_docs/CMakeLists.txt installs them).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "tools/calibrate/cli.hpp"
#include "tools/calibrate/cpu_backend.hpp"
#include "tools/cli_docs/cli_docs.hpp"
#include "tools/cli_docs/program_docs.hpp"
#include "tools/ppsim/cli.hpp"

namespace {

using ppsim::cli_docs::CommandDocs;

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  if (!file.flush()) throw std::runtime_error("cannot write " + path.string());
}

void write_all(const std::filesystem::path& dir, const CLI::App& app, const CommandDocs& docs) {
  write(dir / (docs.program + ".1"), ppsim::cli_docs::man_page(app, docs));
  write(dir / (docs.program + ".bash"), ppsim::cli_docs::bash_completion(app, docs));
  write(dir / ("_" + docs.program), ppsim::cli_docs::zsh_completion(app, docs));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: ppsim-cli-docs OUTDIR\n";
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    ppsim::visit_cli_definition([&](const CLI::App& app) { write_all(dir, app, ppsim::cli_docs::ppsim_docs(PPSIM_DATA_DIR)); });
    // The CPU backend only: the page lists --backend's values itself (cpu, cuda).
    ppsim::calibrate::visit_calibrate_cli_definition({ppsim::calibrate::cpu_backend_entry()},
                                                     [&](const CLI::App& app) { write_all(dir, app, ppsim::cli_docs::calibrate_docs()); });
  } catch (const std::exception& error) {
    std::cerr << "ppsim-cli-docs: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
