// SPDX-License-Identifier: Apache-2.0
// The man pages and completions (tools/cli_docs) are written from the parser's own definition:
// they name every command and flag it knows, and every value word they offer is one it accepts.
#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>
#include <string>

#include "models/hardware/profile.hpp"
#include "models/transformer/architecture.hpp"
#include "schedules/registry.hpp"
#include "study/common/version.hpp"
#include "study/input/config.hpp"
#include "study/sweep/sweep_study.hpp"
#include "support/cli_run.hpp"
#include "tools/calibrate/backend.hpp"
#include "tools/calibrate/cli.hpp"
#include "tools/calibrate/cpu_backend.hpp"
#include "tools/cli_docs/cli_docs.hpp"
#include "tools/cli_docs/program_docs.hpp"
#include "tools/ppsim/cli.hpp"

namespace {

using ppsim::test::cli;
using ppsim::test::CliRun;

// How roff shows a flag: every hyphen escaped.
std::string roff_flag(const std::string& name) {
  std::string escaped;
  for (const char c : name) escaped += c == '-' ? std::string("\\-") : std::string(1, c);
  return escaped;
}

// Calls check(command, "--flag") for every command of `app` and every long flag it parses, and
// on_command(command) first for each command.
template <typename OnCommand, typename Check>
void for_each_long_flag(const CLI::App& app, OnCommand on_command, Check check) {
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    INFO(command->get_name());
    on_command(command->get_name());
    for (const CLI::Option* option : command->get_options()) {
      for (const std::string& name : option->get_lnames()) {
        INFO(name);
        check("--" + name);
      }
    }
  }
}

}  // namespace

TEST_CASE("the man page names every command and every flag that ppsim parses", "[cli-docs]") {
  std::size_t flags = 0;
  ppsim::visit_cli_definition([&](const CLI::App& app) {
    const std::string page = ppsim::cli_docs::man_page(app, ppsim::cli_docs::ppsim_docs("/usr/share/ppsim"));
    CHECK(page.find(".TH PPSIM 1") != std::string::npos);
    for_each_long_flag(
        app, [&](const std::string& command) { CHECK(page.find(".SS \"ppsim " + command + "\"") != std::string::npos); },
        [&](const std::string& flag) {
          CHECK(page.find("\\fB" + roff_flag(flag) + "\\fR") != std::string::npos);
          ++flags;
        });
  });
  CHECK(flags > 100);  // run, compare, export and formulas each have every scenario flag
}

TEST_CASE("the completions offer every command and flag, and the bash one every schedule name", "[cli-docs]") {
  ppsim::visit_cli_definition([&](const CLI::App& app) {
    const auto docs = ppsim::cli_docs::ppsim_docs("/usr/share/ppsim");
    const std::string bash = ppsim::cli_docs::bash_completion(app, docs);
    const std::string zsh = ppsim::cli_docs::zsh_completion(app, docs);
    CHECK(bash.find("complete -o bashdefault -o default -F _ppsim ppsim") != std::string::npos);
    CHECK(zsh.starts_with("#compdef ppsim\n"));
    for_each_long_flag(
        app, [&](const std::string& command) { CHECK(zsh.find("'" + command + ":") != std::string::npos); },
        [&](const std::string& flag) {
          CHECK(bash.find(" " + flag) != std::string::npos);
          CHECK(zsh.find(flag + "[") != std::string::npos);
        });
    // -s offers the registry's names, all of them and nothing else.
    const std::string offer = "\"run -s\"|\"run --schedule\")\n      _ppsim_words \"";
    const std::size_t at = bash.find(offer);
    REQUIRE(at != std::string::npos);
    const std::size_t from = at + offer.size();
    std::string expected;
    for (const ppsim::ScheduleInfo& info : ppsim::schedule_registry()) {
      expected += (expected.empty() ? "" : " ") + std::string(info.name);
    }
    CHECK(bash.substr(from, bash.find('"', from) - from) == expected);
  });
}

TEST_CASE("every value word the completions offer is one ppsim accepts", "[cli-docs]") {
  const auto docs = ppsim::cli_docs::ppsim_docs("/usr/share/ppsim");
  REQUIRE(docs.choices.size() == 9);
  for (const auto& [flag, words] : docs.choices) {
    for (const std::string& word : words) {
      INFO(flag << " " << word);
      if (flag == "--schedule") {
        CHECK(ppsim::find_schedule(word) != nullptr);
      } else if (flag == "--model") {
        CHECK(ppsim::find_architecture_preset(word) != nullptr);
      } else if (flag == "--hardware") {
        CHECK(cli({"run", "--model", "llama3.1-8b", "-p", "2", "-m", "2", "--hardware", word}).status == 0);
      } else {
        // The transformer settings need a model; the rest run on the default costs.
        std::vector<std::string> args{"run", flag, word};
        if (flag == "--recompute" || flag == "--precision") {
          args.insert(args.end(), {"--model", "llama3.1-8b", "-p", "2", "-m", "2", "-t", "2"});
        }
        const CliRun run = cli(args);
        CHECK(run.err.find("error") == std::string::npos);  // notes (the m < 2p advice) are no refusal
        CHECK(run.status == 0);
      }
    }
  }
  const auto calibrate = ppsim::cli_docs::calibrate_docs();
  for (const std::string& word : calibrate.choices.at("--precision")) {
    CHECK(ppsim::calibrate::parse_precision(word).has_value());
  }
}

TEST_CASE("man page text that roff would take for requests or escapes stays text", "[cli-docs]") {
  CLI::App app{".starts with a dot\n'and a quote \\ and a backslash", "tool"};
  app.add_option("--path", "a -p value")->type_name("FILE");
  bool quiet = false;
  app.add_flag("--quiet", quiet, "say less");
  ppsim::cli_docs::CommandDocs docs;
  docs.program = "tool";
  docs.summary = "does things";
  docs.version = "tool 1.0";
  const std::string page = ppsim::cli_docs::man_page(app, docs);
  CHECK(page.find("\n\\&.starts with a dot\n") != std::string::npos);
  CHECK(page.find("\n\\&'and a quote \\e and a backslash\n") != std::string::npos);
  CHECK(page.find("\\fB\\-\\-path\\fR \\fIFILE\\fR\na \\-p value\n") != std::string::npos);
  CHECK(page.find("\\fB\\-\\-quiet\\fR\nsay less\n") != std::string::npos);
  CHECK(page.find(".SH COMMANDS") == std::string::npos);  // no subcommands, no section
}

TEST_CASE("ppsim --version names the release and the git revision the binary was built from", "[cli-docs]") {
  const CliRun version = cli({"--version"});
  CHECK(version.status == 0);
  CHECK(version.out == std::string("ppsim ") + ppsim::version() + " (git " + ppsim::git_revision() + ")\n");
  CHECK(std::string(ppsim::version()) == PPSIM_PROJECT_VERSION);
  CHECK(!std::string(ppsim::git_revision()).empty());
}

namespace {
// A word as man(7) text writes it: each "-" as "\-".
std::string dashes_escaped(std::string_view word) {
  std::string out;
  for (const char c : word) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}
}  // namespace

TEST_CASE("The man page documents every config key and study key, and the bare default's report", "[cli-docs]") {
  std::string page;
  ppsim::visit_cli_definition([&](const CLI::App& app) {
    page = ppsim::cli_docs::man_page(app, ppsim::cli_docs::ppsim_docs("/usr/share/ppsim"));
  });
  const std::size_t config = page.find(".SH CONFIG FILES");
  const std::size_t study = page.find(".SH STUDY FILES");
  REQUIRE(config != std::string::npos);
  REQUIRE(study != std::string::npos);
  const std::string config_section = page.substr(config, study - config);
  for (const ppsim::SettingInfo& setting : ppsim::scenario_settings()) {
    INFO(setting.key);
    CHECK(config_section.find("\"" + dashes_escaped(setting.key) + "\"") != std::string::npos);
  }
  for (const ppsim::StudyKeyInfo& key : ppsim::study_keys()) {
    INFO(key.key);
    CHECK(page.find("\"" + dashes_escaped(key.key) + "\" \\- ", study) != std::string::npos);
  }
  CHECK(page.find("ppsim\\-report.html") != std::string::npos);
  CHECK(page.find("/usr/local/share/ppsim/examples") == std::string::npos);  // the .deb's directory, not the build's
  const CliRun help = cli({"--help"});
  CHECK(help.out.find("ppsim-report.html") != std::string::npos);
}
