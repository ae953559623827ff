// SPDX-License-Identifier: Apache-2.0
#include "tools/cli_docs/cli_docs.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <sstream>

namespace ppsim::cli_docs {
namespace {

// One flag or positional argument as the documents show it.
struct Flag {
  std::vector<std::string> names;  // "-s", "--schedule"; a positional's name ("study")
  std::string value;               // the value's name ("NAME[,NAME...]"); empty for a switch
  std::string help;
  bool positional = false;
  bool repeatable = false;
};

std::vector<Flag> flags_of(const CLI::App& app) {
  std::vector<Flag> flags;
  for (const CLI::Option* option : app.get_options()) {
    Flag flag;
    flag.positional = !option->nonpositional();
    if (flag.positional) {
      flag.names.push_back(option->get_name());
    } else {
      for (const std::string& name : option->get_snames()) flag.names.push_back("-" + name);
      for (const std::string& name : option->get_lnames()) flag.names.push_back("--" + name);
    }
    if (option->get_type_size() != 0) flag.value = option->get_type_name();
    flag.help = option->get_description();
    flag.repeatable = option->get_items_expected_max() > 1;
    flags.push_back(std::move(flag));
  }
  return flags;
}

std::vector<const CLI::App*> commands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

bool names_files(const Flag& flag) {
  for (const char* hint : {"FILE", ".json", ".csv"}) {
    if (flag.value.find(hint) != std::string::npos) return true;
  }
  return false;
}

const std::vector<std::string>* choices_of(const Flag& flag, const CommandDocs& docs) {
  for (const std::string& name : flag.names) {
    if (auto found = docs.choices.find(name); found != docs.choices.end()) return &found->second;
  }
  return nullptr;
}

std::string join(const std::vector<std::string>& words, std::string_view separator) {
  std::string joined;
  for (const std::string& word : words) joined += (joined.empty() ? "" : std::string(separator)) + word;
  return joined;
}

// --- man page -------------------------------------------------------------------------------

// Text as roff reads it: backslashes escaped, no line that a leading dot or quote would turn
// into a request, hyphens that stay hyphens when copied from the page.
std::string roff(std::string_view text) {
  std::string escaped;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) escaped += "\\&";
    if (c == '\\') {
      escaped += "\\e";
    } else if (c == '-') {
      escaped += "\\-";
    } else {
      escaped += c;
    }
    line_start = c == '\n';
  }
  return escaped;
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

void write_man_flags(std::ostringstream& page, const std::vector<Flag>& flags) {
  for (const Flag& flag : flags) {
    page << ".TP\n";
    if (flag.positional) {
      page << "\\fI" << roff(flag.value.empty() ? flag.names[0] : flag.value) << "\\fR\n";
    } else {
      std::vector<std::string> names;
      for (const std::string& name : flag.names) names.push_back("\\fB" + roff(name) + "\\fR");
      page << join(names, ", ");
      if (!flag.value.empty()) page << " \\fI" << roff(flag.value) << "\\fR";
      page << '\n';
    }
    page << roff(flag.help) << (flag.repeatable && !flag.positional ? " (repeatable)" : "") << '\n';
  }
}

void write_paragraphs(std::ostringstream& page, std::string_view text) {
  bool first = true;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    if (!first) page << ".PP\n";
    page << roff(line) << '\n';
    first = false;
  }
}

// --- shells -------------------------------------------------------------------------------

std::string shell_words(const std::vector<Flag>& flags) {
  std::vector<std::string> words;
  for (const Flag& flag : flags) {
    if (!flag.positional) words.insert(words.end(), flag.names.begin(), flag.names.end());
  }
  return join(words, " ");
}

std::string identifier(std::string_view name) {
  std::string id;
  for (const char c : name) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return id;
}

// Inside a zsh single-quoted _arguments spec: quotes closed and reopened, brackets escaped (they
// end the description), colons out of the message (they end it).
std::string zsh_text(std::string_view text, bool message) {
  std::string out;
  for (const char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else if (c == '[' || c == ']') {
      out += message ? std::string(1, c) : std::string("\\") + c;
    } else if (c == ':' && message) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string zsh_action(const Flag& flag, const CommandDocs& docs) {
  if (const auto* words = choices_of(flag, docs)) {
    // Lists (NAME[,NAME...]) complete each comma-separated item.
    const bool list = flag.value.find(',') != std::string::npos;
    return list ? "_sequence compadd - " + join(*words, " ") : "(" + join(*words, " ") + ")";
  }
  return names_files(flag) ? "_files" : " ";
}

// One quoted spec a line, each continued with a backslash: the caller ends the command.
std::string zsh_specs(const std::vector<Flag>& flags, const CommandDocs& docs, std::string_view indent) {
  std::ostringstream specs;
  int position = 0;
  for (const Flag& flag : flags) {
    const std::string action = zsh_action(flag, docs);
    const std::string message = zsh_text(flag.value.empty() ? flag.names[0] : flag.value, true);
    if (flag.positional) {
      specs << indent << '\'' << (flag.repeatable ? std::string("*") : std::to_string(++position)) << ':' << message
            << ':' << action << "' \\\n";
      continue;
    }
    // Spellings of one flag exclude each other, unless it may be given again.
    const std::string exclusion = flag.repeatable ? "*" : "(" + join(flag.names, " ") + ")";
    const bool ends_parsing = flag.names.back() == "--help" || flag.names.back() == "--version";
    for (const std::string& name : flag.names) {
      specs << indent << '\'' << (ends_parsing ? "(- *)" : exclusion) << name << '[' << zsh_text(flag.help, false)
            << ']';
      if (!flag.value.empty()) specs << ':' << message << ':' << action;
      specs << "' \\\n";
    }
  }
  return specs.str();
}

}  // namespace

std::string man_page(const CLI::App& app, const CommandDocs& docs) {
  std::ostringstream page;
  page << ".\\\" Generated from " << docs.program << "'s command-line definition by ppsim-cli-docs; do not edit.\n";
  page << ".TH " << upper(roff(docs.program)) << " 1 \"\" \"" << roff(docs.version) << "\" \"User Commands\"\n";
  page << ".SH NAME\n" << roff(docs.program) << " \\- " << roff(docs.summary) << '\n';
  const std::vector<const CLI::App*> commands = commands_of(app);
  page << ".SH SYNOPSIS\n.B " << roff(docs.program) << '\n'
       << (commands.empty() ? "[\\fIOPTIONS\\fR]\n" : "[\\fICOMMAND\\fR] [\\fIOPTIONS\\fR]\n");
  page << ".SH DESCRIPTION\n";
  write_paragraphs(page, app.get_description());
  if (!commands.empty()) {
    page << ".SH COMMANDS\n";
    for (const CLI::App* command : commands) {
      page << ".TP\n.B " << roff(command->get_name()) << '\n' << roff(command->get_description()) << '\n';
    }
  }
  page << ".SH OPTIONS\n";
  write_man_flags(page, flags_of(app));
  for (const CLI::App* command : commands) {
    const std::vector<Flag> flags = flags_of(*command);
    page << ".SS \"" << roff(docs.program) << ' ' << roff(command->get_name()) << "\"\n";
    page << roff(command->get_description()) << '\n';
    write_man_flags(page, flags);
  }
  for (const auto& [title, paragraphs] : docs.sections) {
    page << ".SH " << upper(roff(title)) << '\n';
    for (std::size_t i = 0; i < paragraphs.size(); ++i) page << (i ? ".PP\n" : "") << roff(paragraphs[i]) << '\n';
  }
  if (!app.get_footer().empty()) {
    page << ".SH \"EXIT STATUS\"\n";
    write_paragraphs(page, app.get_footer());
  }
  if (!docs.see_also.empty()) page << ".SH \"SEE ALSO\"\n" << roff(join(docs.see_also, ", ")) << '\n';
  return page.str();
}

std::string bash_completion(const CLI::App& app, const CommandDocs& docs) {
  const std::string function = "_" + identifier(docs.program);
  const std::vector<const CLI::App*> commands = commands_of(app);
  std::vector<std::string> command_names;
  for (const CLI::App* command : commands) command_names.push_back(command->get_name());
  std::ostringstream script;
  script << "# bash completion for " << docs.program << ", generated from its command-line definition by "
         << "ppsim-cli-docs; do not edit.\n\n";
  // Completes the item after the last comma of a list such as -s gpipe,1f1b.
  script << function << "_words() {\n"
         << "  local prefix=\"\" last=\"$cur\"\n"
         << "  if [[ \"$cur\" == *,* ]]; then prefix=\"${cur%,*},\"; last=\"${cur##*,}\"; fi\n"
         << "  COMPREPLY=($(compgen -P \"$prefix\" -W \"$1\" -- \"$last\"))\n"
         << "}\n\n";
  script << function << "() {\n"
         << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" command=\"\" i\n";
  if (!commands.empty()) {
    script << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
           << "    case \"${COMP_WORDS[i]}\" in\n"
           << "      " << join(command_names, "|") << ") command=\"${COMP_WORDS[i]}\"; break ;;\n"
           << "    esac\n"
           << "  done\n";
  }
  // A flag's value: its words, file names (the default completion), or nothing to offer.
  std::vector<std::pair<const CLI::App*, std::string>> scopes{{&app, ""}};
  for (const CLI::App* command : commands) scopes.emplace_back(command, command->get_name());
  script << "  case \"$command $prev\" in\n";
  for (const auto& [scope, name] : scopes) {
    for (const Flag& flag : flags_of(*scope)) {
      if (flag.positional || flag.value.empty()) continue;
      std::vector<std::string> patterns;
      for (const std::string& flag_name : flag.names) patterns.push_back("\"" + name + " " + flag_name + "\"");
      script << "    " << join(patterns, "|") << ")\n";
      if (const auto* words = choices_of(flag, docs)) {
        script << "      " << function << "_words \"" << join(*words, " ") << "\"; return ;;\n";
      } else if (names_files(flag)) {
        script << "      COMPREPLY=(); return ;;  # file names\n";
      } else {
        script << "      COMPREPLY=(); compopt +o default 2>/dev/null; return ;;  # a value to type\n";
      }
    }
  }
  script << "  esac\n";
  script << "  case \"$command\" in\n";
  script << "    \"\") " << function << "_words \"" << shell_words(flags_of(app))
         << (command_names.empty() ? "" : " " + join(command_names, " ")) << "\" ;;\n";
  for (const CLI::App* command : commands) {
    const std::vector<Flag> flags = flags_of(*command);
    const bool takes_files = std::any_of(flags.begin(), flags.end(), [](const Flag& f) { return f.positional; });
    script << "    " << command->get_name() << ") ";
    if (takes_files) script << "[[ \"$cur\" == -* ]] && ";
    script << function << "_words \"" << shell_words(flags) << "\" ;;\n";
  }
  script << "  esac\n}\n\ncomplete -o bashdefault -o default -F " << function << ' ' << docs.program << '\n';
  return script.str();
}

std::string zsh_completion(const CLI::App& app, const CommandDocs& docs) {
  const std::string function = "_" + identifier(docs.program);
  const std::vector<const CLI::App*> commands = commands_of(app);
  std::ostringstream script;
  script << "#compdef " << docs.program << "\n# zsh completion for " << docs.program
         << ", generated from its command-line definition by ppsim-cli-docs; do not edit.\n\n";
  script << function << "() {\n";
  if (commands.empty()) {
    script << "  _arguments -s -S \\\n" << zsh_specs(flags_of(app), docs, "    ") << "    && return 0\n}\n\n";
  } else {
    script << "  local curcontext=\"$curcontext\" state line\n  local -a commands=(\n";
    for (const CLI::App* command : commands) {
      // _describe splits at the first colon only: the description keeps its own.
      std::string description;
      for (const char c : command->get_description()) description += c == '\'' ? std::string("'\\''") : std::string(1, c);
      script << "    '" << command->get_name() << ':' << description << "'\n";
    }
    script << "  )\n  _arguments -C \\\n" << zsh_specs(flags_of(app), docs, "    ")
           << "    '1:command:->command' \\\n    '*::argument:->argument'\n";
    script << "  case $state in\n    command) _describe -t commands '" << docs.program
           << " command' commands ;;\n    argument)\n      case $line[1] in\n";
    for (const CLI::App* command : commands) {
      script << "        " << command->get_name() << ")\n          _arguments -s -S \\\n"
             << zsh_specs(flags_of(*command), docs, "            ") << "          ;;\n";
    }
    script << "      esac ;;\n  esac\n}\n\n";
  }
  script << function << " \"$@\"\n";
  return script.str();
}

}  // namespace ppsim::cli_docs
