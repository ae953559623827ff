// SPDX-License-Identifier: Apache-2.0
#pragma once
// A command line's documents, written from its CLI11 definition (the one the parser uses, so they
// cannot drift from it): a man page (roff, man(7) macros), a bash completion and a zsh completion.

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace ppsim::cli_docs {

// What the definition does not say.
struct CommandDocs {
  std::string program;  // "ppsim"
  std::string summary;  // the man page's NAME line, after "ppsim \-"
  std::string version;  // the man page's footer, "ppsim 0.1.0"
  // The words a flag's value may be ("--schedule" -> gpipe, 1f1b, ...), for the completions; a
  // flag whose value name says FILE (or .json, .csv) completes file names.
  std::map<std::string, std::vector<std::string>, std::less<>> choices;
  // Further man page sections (title, paragraphs) after the options: schedules, files, examples.
  std::vector<std::pair<std::string, std::vector<std::string>>> sections;
  std::vector<std::string> see_also;  // "ppsim-calibrate(1)"
};

std::string man_page(const CLI::App& app, const CommandDocs& docs);
// Sourced by bash-completion (share/bash-completion/completions/PROGRAM): `complete -F`.
std::string bash_completion(const CLI::App& app, const CommandDocs& docs);
// A #compdef file (share/zsh/vendor-completions/_PROGRAM) built on _arguments.
std::string zsh_completion(const CLI::App& app, const CommandDocs& docs);

}  // namespace ppsim::cli_docs
