// SPDX-License-Identifier: Apache-2.0
#include "tools/ppsim/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>

#include "schedules/excerpt.hpp"
#include "schedules/registry.hpp"
#include "sim/report/svg_timeline.hpp"
#include "study/api.hpp"
#include "study/common/output_file.hpp"
#include "study/input/config.hpp"
#include "study/run/formulas.hpp"
#include "study/run/study.hpp"
#include "study/trace/trace_study.hpp"
#include "study/sweep/sweep_summary.hpp"
#include "tools/ppsim/expect_flag.hpp"
#include "tools/ppsim/plan_cli.hpp"
#include "tools/ppsim/sweep_cli.hpp"
#include "tools/ppsim/terminal.hpp"

namespace ppsim {
namespace {

// The values of the scenario flags of one subcommand, kept as text until the config file is read,
// so that flags override the file.
struct ScenarioFlags {
  std::string config_path;
  std::map<std::string, std::string, std::less<>> text;  // key -> value as typed
  std::map<std::string, CLI::Option*, std::less<>> options;
  // Settings without a value name are switches: `--x` sets true, `--no-x` false.
  std::map<std::string, bool, std::less<>> switches;
};

// "-s,--schedule" -> "--schedule": errors name the long spelling when there is one.
std::string display_flag(std::string_view flag) {
  const auto comma = flag.rfind(',');
  return std::string(comma == std::string_view::npos ? flag : flag.substr(comma + 1));
}

// Which flags a parse registers. CLI11 spends about 20 k instructions on each option it registers
// (it checks every new option's names against the ones before it), more than a short run's whole
// simulation, so a first parse registers only what its command line can name: the chosen command's
// options, and of its ~40 scenario flags those whose names appear in the arguments. Help, and any
// parse error, register everything and parse again, so that their text is what it always was.
class FlagPlan {
 public:
  // `every_command`: the scenario flags of every command, not only the chosen one's (for the docs).
  FlagPlan(const std::vector<std::string>& args, bool all, bool every_command = false)
      : args_(args),
        all_(all),
        every_command_(every_command),
        chosen_(!args.empty() && !args[0].starts_with("-") ? args[0] : std::string()) {}

  bool all() const { return all_; }
  // Whether `command` gets its scenario flags: a command line names one command, first.
  bool defines(std::string_view command) const { return every_command_ || chosen_ == command; }
  // The options of this command: the chosen one's, or every command's.
  bool registers(std::string_view command) const { return all_ || chosen_ == command; }
  // A long flag of the chosen command, such as "--svg": when the arguments name it.
  bool registers_flag(std::string_view name) const { return all_ || names_long(name); }
  // A scenario flag ("-s,--schedule"; a switch also as --no-KEY) that the arguments may name. A
  // superset is harmless: CLI11 then parses exactly as with every flag registered.
  bool registers(const SettingInfo& setting) const {
    return registers_names(setting.flag) ||
           (setting.value_name.empty() && registers_names("--no-" + std::string(setting.key)));
  }
  // Any of CLI11's comma-separated names ("-c,--config").
  bool registers_names(std::string_view names) const {
    if (all_) return true;
    while (!names.empty()) {
      const std::size_t comma = std::min(names.find(','), names.size());
      const std::string_view name = names.substr(0, comma);
      names.remove_prefix(std::min(comma + 1, names.size()));
      if (name.starts_with("--") ? names_long(name) : names_short(name)) return true;
    }
    return false;
  }
  // Help lists every flag, so it needs them all: any word that may ask for it (--help, or -h in a
  // group of short flags) is taken as help. Not every --h... word: --hardware, --heads and --html
  // are ordinary flags (CLI11 matches no prefixes, so --hel is an unknown flag, which registers
  // every flag through the failed parse anyway).
  static bool may_ask_for_help(const std::vector<std::string>& args) {
    return std::any_of(args.begin(), args.end(), [](const std::string& arg) {
      return arg == "--help" || arg.starts_with("--help=") ||
             (arg.size() > 1 && arg[0] == '-' && arg[1] != '-' && arg.find('h') != std::string::npos);
    });
  }

 private:
  bool names_long(std::string_view name) const {
    return std::any_of(args_.begin(), args_.end(), [&](const std::string& arg) {
      return arg.starts_with(name) && (arg.size() == name.size() || arg[name.size()] == '=');
    });
  }
  // "-p" in "-p", "-p8", "-p=8" or a group of short flags.
  bool names_short(std::string_view name) const {
    const char letter = name.size() == 2 ? name[1] : '\0';
    return std::any_of(args_.begin(), args_.end(), [&](const std::string& arg) {
      return arg.size() > 1 && arg[0] == '-' && arg[1] != '-' && arg.find(letter, 1) != std::string::npos;
    });
  }

  const std::vector<std::string>& args_;
  bool all_;
  bool every_command_;
  std::string chosen_;
};

void add_scenario_flags(CLI::App& command, ScenarioFlags& flags, const FlagPlan& plan) {
  if (plan.registers_names("-c,--config")) {
    command.add_option("-c,--config", flags.config_path, "JSON config; keys are the long option names")
        ->type_name("FILE");
  }
  for (const SettingInfo& setting : scenario_settings()) {
    if (!plan.registers(setting)) continue;
    if (setting.value_name.empty()) {
      const std::string negated = "!--no-" + std::string(setting.key);
      flags.options[std::string(setting.key)] =
          command.add_flag(std::string(setting.flag) + "," + negated, flags.switches[std::string(setting.key)],
                           std::string(setting.help));
      continue;
    }
    // run simulates one schedule, at the v the schedule's own default gives (zbv: 2); the table's
    // text is compare's and the config's.
    const bool run = command.get_name() == "run";
    std::string help(setting.help);
    std::string value_name(setting.value_name);
    if (run && setting.key == "schedule") {
      help = "the schedule, from `ppsim schedules` (default 1f1b; compare takes several)";
      value_name = "NAME";
    } else if (run && setting.key == "v") {
      help = "chunks (stages) per device (default: the schedule's own, `ppsim schedules`: 2 for the interleaved and V-shaped ones, else 1)";
    }
    CLI::Option* option = command.add_option(std::string(setting.flag), flags.text[std::string(setting.key)], help);
    option->type_name(value_name);
    // --straggler 1:1.5 --straggler 3:2 reads as "1:1.5,3:2".
    if (setting.repeatable) option->delimiter(',')->multi_option_policy(CLI::MultiOptionPolicy::Join);
    flags.options[std::string(setting.key)] = option;
  }
}

Scenario scenario_from(const ScenarioFlags& flags, std::ostream& err, Scenario scenario = {}) {
  if (!flags.config_path.empty()) apply_config_file(flags.config_path, scenario);
  for (const SettingInfo& setting : scenario_settings()) {
    auto option = flags.options.find(setting.key);
    if (option == flags.options.end() || option->second->count() == 0) continue;
    if (setting.value_name.empty()) {
      const bool on = flags.switches.at(std::string(setting.key));
      apply_setting_text(setting.key, on ? "true" : "false",
                         on ? display_flag(setting.flag) : "--no-" + std::string(setting.key), scenario);
      continue;
    }
    apply_setting_text(setting.key, flags.text.at(std::string(setting.key)), display_flag(setting.flag), scenario);
  }
  imply_custom_schedule(scenario);
  for (const std::string& note : scenario.notes) err << "ppsim: note: " << one_line(note) << '\n';
  return scenario;
}

void add_picture_flags(CLI::App& command, PictureFiles& files, const FlagPlan& plan) {
  if (plan.registers_flag("--svg")) {
    command.add_option("--svg", files.svg, "write the timelines and memory curves as an SVG picture")
        ->type_name("FILE");
  }
  if (plan.registers_flag("--html")) {
    command.add_option("--html", files.html, "write a self-contained HTML report: table, timelines, closed forms")
        ->type_name("FILE");
  }
  if (plan.registers_flag("--trace")) {
    command.add_option("--trace", files.trace, "write a Chrome trace-event JSON for Perfetto or chrome://tracing")
        ->type_name("FILE");
  }
  if (plan.registers_flag("--width")) {
    command
        .add_option("--width", files.width,
                    "width of the --svg and --html figures in px, 400 to 20000 (default: 1160, wider as the busiest "
                    "device's ops need 14 px each, up to 4800)")
        ->type_name("PX")
        ->check(CLI::Validator(
            [](std::string& text) {
              char* end = nullptr;
              const double px = std::strtod(text.c_str(), &end);
              if (end == text.c_str() || *end != '\0' || !(px >= kMinFigureWidth && px <= kMaxFigureWidth)) {
                return "must be a width from 400 to 20000 px, got '" + excerpt(text) + "'";
              }
              return std::string();
            },
            "PX"));
  }
}

// CLI11's "The following arguments were not expected: 1f1b --schedul" as one line that names the
// word it did not know and the nearest it does: a flag of the command, or a command.
std::string unexpected_arguments(const CLI::App& app, const std::vector<std::string>& args, const std::string& what) {
  const std::string chosen = !args.empty() && !args[0].starts_with("-") ? args[0] : std::string();
  std::vector<std::string> commands;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(command->get_name());
  }
  const auto nearest = [](std::string_view word, const std::vector<std::string>& known) {
    const std::vector<std::string_view> views(known.begin(), known.end());
    return nearest_name(word, views);
  };
  if (!chosen.empty() && std::find(commands.begin(), commands.end(), chosen) == commands.end()) {
    const std::string near = nearest(chosen, commands);
    return "unknown command " + quoted_excerpt(chosen) + (near.empty() ? "" : " (did you mean " + near + "?)") +
           "; see ppsim --help";
  }
  const CLI::App* command = chosen.empty() ? &app : app.get_subcommand(chosen);
  std::vector<std::string> flags;
  for (const CLI::Option* option : command->get_options()) {
    for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
    for (const std::string& name : option->get_snames()) flags.push_back("-" + name);
  }
  for (const std::string& arg : args) {
    if (!arg.starts_with("-") || arg == "-" || arg == "--") continue;
    const std::string flag = arg.substr(0, arg.find('='));
    if (std::find(flags.begin(), flags.end(), flag) != flags.end()) continue;
    const std::string near = nearest(flag, flags);
    return "unknown flag " + quoted_excerpt(flag) + (chosen.empty() ? "" : " for " + chosen) +
           (near.empty() ? "" : " (did you mean " + near + "?)");
  }
  return what;  // extra positional arguments: CLI11 names them
}

// "a,b,,c" -> a, b, c.
std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= list.size() && !list.empty()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

// CLI11's help with switches as people type them: "--timeline,--no-timeline", not
// "--timeline,--no-timeline{false}" (the value a --no-X flag stores, which its name already says).
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* option, bool positional) const override {
    std::string name = CLI::Formatter::make_option_name(option, positional);
    for (const std::string_view stored : {"{false}", "{true}"}) {
      for (std::size_t at = name.find(stored); at != std::string::npos; at = name.find(stored)) {
        name.erase(at, stored.size());
      }
    }
    return name;
  }
};

// The notes a scenario prints ("ppsim: note: ..."), held until the command has run: printed when it
// succeeds or its figures fail an --expect, dropped when it ends in bad input or a broken schedule,
// whose one line on stderr is then the whole story.
struct HeldNotes {
  std::ostringstream text;
  std::ostream& err;
  bool dropped = false;
  explicit HeldNotes(std::ostream& to) : err(to) {}
  ~HeldNotes() {
    if (!dropped) err << text.str();
  }
  HeldNotes(const HeldNotes&) = delete;
  HeldNotes& operator=(const HeldNotes&) = delete;
};

// One parse and its command. Returns nullopt when a parse that registered only some flags failed:
// the caller parses again with all of them, for the error's usual text.
// With `visit`, the command line is handed to it once defined, and nothing is parsed.
std::optional<int> run_cli_with(const std::vector<std::string>& args, const FlagPlan& plan, std::ostream& out,
                                std::ostream& err, const std::function<void(const CLI::App&)>* visit = nullptr) {
  CLI::App app{
      "ppsim: a discrete-event simulator of pipeline-parallel training schedules.\n"
      "Without a command it compares GPipe and 1F1B at p=4, m=8, F=1, B=2, and writes their pictures to "
      "ppsim-report.html in the current directory.",
      "ppsim"};
  app.formatter(std::make_shared<HelpFormatter>());  // before the subcommands, which copy it
  app.set_version_flag("--version", version_line("ppsim"));
  app.require_subcommand(0, 1);
  app.footer("Exit status: 0 success, 2 bad input, 3 invalid or deadlocking schedule, 1 anything else.");

  // Only the chosen subcommand gets its options (FlagPlan): a command line names one subcommand, first.
  auto scenario_flags_for = [&](const char* name, CLI::App& command, ScenarioFlags& flags) {
    if (plan.defines(name)) add_scenario_flags(command, flags, plan);
  };
  ScenarioFlags run_flags;
  ScenarioFlags compare_flags;
  PictureFiles run_pictures;
  PictureFiles compare_pictures;
  std::vector<std::string> expect;  // --expect of run or compare (one of them is parsed)
  unsigned sample_threads = 0;  // -j of run or compare (one of them is parsed)
  const auto add_jobs_flag = [&](CLI::App& command) {
    if (!plan.registers_names("-j,--jobs")) return;
    command.add_option("-j,--jobs", sample_threads, "threads for --samples; 0, the default, is every core; same output for any N")
        ->type_name("N");
  };
  CLI::App* run = app.add_subcommand("run", "simulate one schedule and print its figures");
  scenario_flags_for("run", *run, run_flags);
  if (plan.registers("run")) {
    add_picture_flags(*run, run_pictures, plan);
    if (plan.registers_flag("--expect")) add_expect_flag(*run, expect);
    add_jobs_flag(*run);
  }
  CLI::App* compare = app.add_subcommand("compare", "simulate several schedules (-s a,b,...) side by side");
  scenario_flags_for("compare", *compare, compare_flags);
  if (plan.registers("compare")) {
    add_picture_flags(*compare, compare_pictures, plan);
    if (plan.registers_flag("--expect")) add_expect_flag(*compare, expect);
    add_jobs_flag(*compare);
  }
  std::string baseline;
  CheckOptions check_options;
  std::string check_only;
  CLI::App* check_command = app.add_subcommand(
      "check", "re-run the scenario of a stored --format json output of run or compare; exit 1 if a figure moved");
  if (plan.registers("check")) {
    check_command->add_option("baseline", baseline, "the stored output")->required()->type_name("BASELINE.json");
    // CLI11 reads an empty value as 0 for a number: --rtol '' would check with no tolerance at all.
    const CLI::Validator a_number(
        [](const std::string& text) { return text.empty() ? std::string("must be a number, got ''") : std::string(); },
        "", "a number");
    check_command->add_option("--rtol", check_options.rtol, "relative tolerance (default 1e-9)")
        ->type_name("R")
        ->check(a_number);
    check_command->add_option("--atol", check_options.atol, "absolute tolerance (default 0)")
        ->type_name("A")
        ->check(a_number);
    check_command->add_option("--only", check_only, "compare only these figures (any key on a figure's path)")
        ->type_name("NAME[,NAME...]");
  }
  CLI::App* schedules = app.add_subcommand("schedules", "list the schedules: name, summary, constraints, source");
  CLI::App* models = app.add_subcommand("models", "list the model and hardware presets of --model and --hardware");
  std::string schedules_format = "table";
  std::string models_format = "table";
  for (auto [command, format] : {std::pair{schedules, &schedules_format}, std::pair{models, &models_format}}) {
    if (!plan.registers(command->get_name())) continue;
    command->add_option("--format", *format, "table (default) or json")
        ->type_name("FORMAT")
        ->check(CLI::IsMember({"table", "json"}));
  }
  ScenarioFlags export_flags;
  std::string export_path;
  bool export_lowered = false;
  CLI::App* export_command = app.add_subcommand(
      "export", "write a schedule's per-device actions as torch.distributed.pipelining's CSV (or JSON)");
  scenario_flags_for("export", *export_command, export_flags);
  if (plan.registers("export")) {
    export_command->add_option("-o,--output", export_path, "file to write (JSON when it ends in .json); default stdout")
        ->type_name("FILE");
    export_command->add_flag("--lowered", export_lowered,
                             "torch's lowered format, as its _dump_csv writes by default: with SEND/RECV, UNSHARD/"
                             "RESHARD and REDUCE_GRAD as its lowering passes place them");
  }
  ScenarioFlags formula_flags;
  bool check = false;
  CLI::App* formulas =
      app.add_subcommand("formulas", "closed forms beside the simulated figures (all schedules unless -s)");
  scenario_flags_for("formulas", *formulas, formula_flags);
  if (plan.registers("formulas")) {
    formulas->add_flag(
        "--check", check,
        "compare every closed form with simulation over a grid inside its regime; exit 1 on a deviation");
  }
  ScenarioFlags synth_flags;
  SynthSettings synth_settings;
  CLI::App* synth = app.add_subcommand(
      "synth", "search per-device orders of F, I and W for the shortest step under a per-device memory limit");
  scenario_flags_for("synth", *synth, synth_flags);
  if (plan.registers("synth")) {
    synth->add_option("--memory-limit", synth_settings.memory_limit,
                      "activation memory each device may hold, e.g. 6GiB (required)")
        ->type_name("B");
    synth->add_option("--placement", synth_settings.placement,
                      "loop (stage s on device s mod p) or v (device d holds stages d and 2p-1-d; default for -v 2)")
        ->type_name("WHAT");
    synth->add_option("--time-limit", synth_settings.time_limit,
                      "stop the search after this long (default 10 s); within it the result is deterministic")
        ->type_name("T");
    synth->add_option("-o,--output", synth_settings.output, "write the order as torch.distributed.pipelining's CSV")
        ->type_name("FILE.csv");
  }
  ScenarioFlags plan_flags;
  PlanOptions plan_options;
  CLI::App* plan_command = app.add_subcommand(
      "plan", "choose the whole layout for N GPUs: every valid TP, CP, EP, PP, VP, DP, micro-batch, recomputation and "
              "schedule, bounded, simulated, ranked");
  scenario_flags_for("plan", *plan_command, plan_flags);
  if (plan.registers("plan")) add_plan_options(*plan_command, plan_options);
  TraceStudyRequest trace_request;
  std::string trace_format = "table";
  CLI::App* trace_command = app.add_subcommand(
      "trace", "read a real run (torch.profiler traces, one per rank; ppsim's --trace; a Megatron-LM timer log): "
               "replay its step, say where each device's idle time went, calibrate its costs");
  if (plan.registers("trace")) {
    trace_command->add_option("files", trace_request.files, "the run's files, or a directory of them")
        ->required()
        ->type_name("TRACE...");
    trace_command->add_option("--format", trace_format, "table (default) or json")
        ->type_name("FORMAT")
        ->check(CLI::IsMember({"table", "json"}));
    trace_command
        ->add_option("--calibrate", trace_request.calibrate_path,
                     "write the measured costs as a calibration that run --calibrated-from reads")
        ->type_name("FILE.json");
    trace_command->add_option("--svg", trace_request.svg_path, "draw the step with each device's idle time coloured by cause")
        ->type_name("FILE");
    trace_command
        ->add_option("-s,--schedule", trace_request.hints.schedule,
                     "the schedule that ran: which run of a ppsim trace of several, or a timer log's (default 1f1b, "
                     "interleaved-1f1b with -v > 1)")
        ->type_name("NAME");
    trace_command->add_option("--step", trace_request.read.step, "which recorded step (counted from 0; default the last complete one)")
        ->type_name("N");
    trace_command->add_option("-p", trace_request.hints.p, "a timer log's pipeline stages (the log does not say)")->type_name("N");
    trace_command->add_option("-m", trace_request.hints.m, "a timer log's micro-batches per step")->type_name("N");
    trace_command->add_option("-v", trace_request.hints.v, "a timer log's chunks per device (default 1)")->type_name("N");
  }
  SweepCommands sweep_commands;  // ppsim sweep and ppsim merge (sweep_cli.cpp)
  add_sweep_commands(app, sweep_commands, plan.registers("sweep"), plan.registers("merge"));
  if (visit != nullptr) {
    (*visit)(app);
    return kExitOk;
  }

  HeldNotes notes(err);
  try {
    std::vector<const char*> argv{"ppsim"};
    for (const auto& arg : args) argv.push_back(arg.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());

    if (schedules->parsed()) {
      if (schedules_format == "json") {
        out << schedule_list_json().dump(2) << '\n';
      } else {
        write_schedule_list(out);
      }
    } else if (sweep_commands.sweep->parsed() || sweep_commands.merge->parsed()) {
      return run_sweep_commands(sweep_commands, out, err);
    } else if (models->parsed()) {
      if (models_format == "json") {
        out << preset_list_json().dump(2) << '\n';
      } else {
        write_preset_list(out);
      }
    } else if (run->parsed()) {
      Scenario scenario = scenario_from(run_flags, notes.text);
      scenario.sample_threads = sample_threads;
      check_run_schedules(scenario);
      const auto expectations = parse_expectations(expect, "--expect");
      const auto reports = write_reports(scenario, false, run_pictures, out, timeline_width_for(out));
      for (const std::string& line : run_advice(reports)) err << "ppsim: note: " << one_line(line) << '\n';
      return report_expectations(expectation_failures(expectations, reports), err);
    } else if (check_command->parsed()) {
      check_options.only = split_names(check_only);
      const CheckOutcome outcome = check_baseline(baseline, check_options);
      out << check_report(baseline, check_options, outcome);
      return outcome.moved.empty() ? kExitOk : kExitFailure;
    } else if (export_command->parsed()) {
      Scenario scenario = scenario_from(export_flags, notes.text);
      const bool json_path = export_path.size() >= 5 && export_path.compare(export_path.size() - 5, 5, ".json") == 0;
      if (json_path && scenario.sources.count("format") == 0) scenario.format = OutputFormat::kJson;
      const std::string text = export_schedule(scenario, export_lowered);
      if (export_path.empty()) {
        out << text;
      } else {
        write_file_atomically(export_path, text, "-o");
      }
    } else if (synth->parsed()) {
      write_synth(scenario_from(synth_flags, notes.text), synth_settings, out);
    } else if (plan_command->parsed()) {
      PlanRequest request = plan_request_from_file(plan_options);
      request.scenario = scenario_from(plan_flags, notes.text, std::move(request.scenario));
      apply_plan_flags(plan_options, request.settings);
      if (request.settings.gpus == 0) throw InputError("--gpus: plan needs the GPU count (or gpus in PLAN.json)");
      write_plan(request, plan_options.html, out);
    } else if (trace_command->parsed()) {
      trace_request.json = trace_format == "json";
      trace_request.read.schedule = trace_request.hints.schedule;
      trace_request.hints.step = trace_request.read.step;
      write_trace_study(trace_request, out);
    } else if (formulas->parsed()) {
      return write_formulas_study(scenario_from(formula_flags, notes.text), check, out) ? kExitOk : kExitFailure;
    } else if (compare->parsed()) {
      Scenario scenario = scenario_from(compare_flags, notes.text);
      scenario.sample_threads = sample_threads;
      default_compare_schedules(scenario);
      const auto expectations = parse_expectations(expect, "--expect");
      const auto reports = write_reports(scenario, true, compare_pictures, out, timeline_width_for(out));
      return report_expectations(expectation_failures(expectations, reports), err);
    } else {
      // The default study also leaves its pictures in the working directory; not being able to
      // write them there (a read-only directory) does not spoil the tables already printed.
      const Scenario study = default_study();
      const auto reports = write_reports(study, true, {}, out, timeline_width_for(out));
      try {
        write_file_atomically(kDefaultReportPath, html_report(study, reports), "ppsim");
        err << "ppsim: wrote the report to " << kDefaultReportPath << '\n';
      } catch (const InputError&) {
        err << "ppsim: note: cannot write " << kDefaultReportPath
            << " in this directory; `ppsim compare --html FILE` writes it elsewhere\n";
      }
    }
    return kExitOk;
  } catch (const CLI::ExtrasError& error) {
    notes.dropped = true;
    if (!plan.all()) return std::nullopt;
    err << "ppsim: error: " << one_line(unexpected_arguments(app, args, error.what())) << '\n';
    return kExitBadInput;
  } catch (const CLI::ParseError& error) {
    notes.dropped = true;
    if (error.get_exit_code() == 0) return app.exit(error, out, err);  // --help, --version
    if (!plan.all()) return std::nullopt;
    err << "ppsim: error: " << one_line(error.what()) << '\n';
    return kExitBadInput;
  } catch (const InputError& error) {
    notes.dropped = true;
    err << "ppsim: error: " << one_line(error.what()) << '\n';
    return kExitBadInput;
  } catch (const JsonInputError& error) {  // a model or hardware file, read in models/json
    notes.dropped = true;
    err << "ppsim: error: " << one_line(error.what()) << '\n';
    return kExitBadInput;
  } catch (const ScheduleError& error) {
    notes.dropped = true;
    err << "ppsim: error: " << one_line(error.what()) << '\n' << error.grid();
    return kExitBadSchedule;
  } catch (const std::bad_alloc&) {
    err << "ppsim: error: out of memory\n";
    return kExitFailure;
  } catch (const std::exception& error) {
    err << "ppsim: internal error: " << one_line(error.what()) << '\n';
    return kExitFailure;
  }
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (!FlagPlan::may_ask_for_help(args)) {
    if (const std::optional<int> status = run_cli_with(args, FlagPlan(args, false), out, err)) return *status;
  }
  return *run_cli_with(args, FlagPlan(args, true), out, err);
}

void visit_cli_definition(const std::function<void(const CLI::App&)>& visit) {
  const std::vector<std::string> no_args;
  std::ostringstream unused;
  run_cli_with(no_args, FlagPlan(no_args, true, /*every_command=*/true), unused, unused, &visit);
}

}  // namespace ppsim
