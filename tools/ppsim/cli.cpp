#include "tools/ppsim/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>

#include "models/json/json_input_error.hpp"
#include "schedules/registry.hpp"
#include "sim/report/chrome_trace.hpp"
#include "sim/report/streamed_timeline.hpp"
#include "tools/ppsim/config.hpp"
#include "tools/ppsim/errors.hpp"
#include "tools/ppsim/formulas.hpp"
#include "tools/ppsim/preset_list.hpp"
#include "tools/ppsim/output_file.hpp"
#include "tools/ppsim/pictures.hpp"
#include "tools/ppsim/scenario.hpp"
#include "tools/ppsim/schedule_loader.hpp"
#include "tools/ppsim/streamed_pictures.hpp"
#include "tools/ppsim/study.hpp"
#include "tools/ppsim/sweep_cli.hpp"
#include "tools/ppsim/terminal.hpp"

namespace ppsim {
namespace {

constexpr const char* kVersion = "ppsim 0.1.0";

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

void add_scenario_flags(CLI::App& command, ScenarioFlags& flags) {
  command.add_option("-c,--config", flags.config_path, "JSON config; keys are the long option names")
      ->type_name("FILE");
  for (const SettingInfo& setting : scenario_settings()) {
    if (setting.value_name.empty()) {
      const std::string negated = "!--no-" + std::string(setting.key);
      flags.options[std::string(setting.key)] = command.add_flag(
          std::string(setting.flag) + "," + negated, flags.switches[std::string(setting.key)], std::string(setting.help));
      continue;
    }
    CLI::Option* option =
        command.add_option(std::string(setting.flag), flags.text[std::string(setting.key)], std::string(setting.help));
    option->type_name(std::string(setting.value_name));
    flags.options[std::string(setting.key)] = option;
  }
}

Scenario scenario_from(const ScenarioFlags& flags) {
  Scenario scenario;
  if (!flags.config_path.empty()) apply_config_file(flags.config_path, scenario);
  for (const SettingInfo& setting : scenario_settings()) {
    auto option = flags.options.find(setting.key);
    if (option == flags.options.end() || option->second->count() == 0) continue;
    if (setting.value_name.empty()) {
      const bool on = flags.switches.at(std::string(setting.key));
      apply_setting_text(setting.key, on ? "true" : "false", on ? display_flag(setting.flag) : "--no-" + std::string(setting.key),
                         scenario);
      continue;
    }
    apply_setting_text(setting.key, flags.text.at(std::string(setting.key)), display_flag(setting.flag), scenario);
  }
  // A schedule file names its schedule: -s custom is implied unless -s says otherwise.
  if (!scenario.schedule_file.empty() && scenario.sources.count("schedule") == 0) {
    scenario.schedules = {"custom"};
    scenario.sources["schedule"] = scenario.source_of("schedule-file");
  }
  return scenario;
}

void add_picture_flags(CLI::App& command, PictureFiles& files) {
  command.add_option("--svg", files.svg, "write the timelines and memory curves as an SVG picture")->type_name("FILE");
  command.add_option("--html", files.html, "write a self-contained HTML report: table, timelines, closed forms")
      ->type_name("FILE");
  command.add_option("--trace", files.trace, "write a Chrome trace-event JSON for Perfetto or chrome://tracing")
      ->type_name("FILE");
}

// Pictures are written before stdout, so a file that cannot be written leaves stdout empty too.
std::vector<Report> write_reports(const Scenario& scenario, bool side_by_side, const PictureFiles& pictures,
                                  std::ostream& out) {
  // A trace, and a JSON timeline, are written as the engine runs, so their memory does not grow with
  // the run. The pictures and the ASCII timeline keep every run's timeline up to kMaxTimelineOps;
  // above, they are drawn from digests filled as a second run of each schedule goes.
  const bool json_timeline = scenario.timeline && scenario.format == OutputFormat::kJson;
  const bool figures = !pictures.svg.empty() || !pictures.html.empty();
  const bool ascii = scenario.timeline && !json_timeline;
  const bool digested = (figures || ascii) && timeline_op_bound(scenario) > static_cast<double>(kMaxTimelineOps);
  const bool kept = (figures || ascii) && !digested;
  const bool stream_trace = !pictures.trace.empty() && !kept;
  const bool stream_json = json_timeline && !kept;
  const std::size_t timeline_width = timeline_width_for(out);
  std::optional<PictureDigestStreamer> digests;
  if (digested) {
    // The first run gives the figures' shared scale and each ASCII timeline's grid. The scale needs
    // only the summary, which the in-order sweep gives without recording a span; the grid needs
    // every op's times.
    check_timeline_size(scenario);
    GridFinderStreamer finder(timeline_width);
    const std::vector<Report> first = simulate_all(scenario, false, ascii ? &finder : nullptr);
    digests.emplace(figures ? std::optional<FigureScale>(figure_scale(first)) : std::nullopt,
                    ascii ? finder.grids() : std::vector<GridFinderStreamer::Found>{});
  }
  std::optional<SpooledFile> trace;
  std::optional<ChromeTraceWriter> writer;
  if (stream_trace) {
    trace.emplace(pictures.trace, "--trace");
    writer.emplace(trace->stream());
  }
  // In compare's array a report object sits one level deeper.
  JsonTimelineStreamer json((scenario.schedules.size() == 1 && !side_by_side) ? 0 : 1);
  std::vector<TimelineStreamer*> streamers;
  if (stream_trace) streamers.push_back(&*writer);
  if (stream_json) streamers.push_back(&json);
  if (digests) streamers.push_back(&*digests);
  TeeStreamer tee(streamers);
  TimelineStreamer* streamer = streamers.empty() ? nullptr : streamers.size() == 1 ? streamers.front() : &tee;
  auto reports = simulate_all(scenario, kept, streamer);
  ReportOptions options;
  options.timeline = scenario.timeline;
  options.side_by_side = side_by_side;
  options.timeline_width = timeline_width;
  // Nothing reaches `out` unless every schedule simulated and every file was written; a streamed
  // timeline's report waits on disk.
  std::ostringstream buffer;
  std::optional<ScratchFile> scratch;
  std::ostream& report_out = stream_json ? scratch.emplace().stream() : buffer;
  make_reporter(scenario.format)->write(report_out, reports, options);
  if (scratch) scratch->finish();
  PictureFiles rendered = pictures;
  if (stream_trace) rendered.trace.clear();
  std::vector<OutputFile> files = render_pictures(scenario, reports, rendered);
  if (stream_trace) {
    writer->finish();
    files.push_back({pictures.trace, "", "--trace", &*trace});
  }
  write_files_atomically(files);
  if (scratch) {
    scratch->copy_to(out);
  } else {
    out << buffer.str();
  }
  return reports;
}

void write_schedule_list(std::ostream& out) {
  std::size_t name_width = 4;
  for (const auto& info : schedule_registry()) name_width = std::max(name_width, info.name.size());
  auto pad = [&](std::string_view text) {
    std::string padded(text);
    padded.resize(std::max(padded.size(), name_width), ' ');
    return padded;
  };
  out << pad("name") << "  summary\n";
  for (const auto& info : schedule_registry()) {
    out << pad(info.name) << "  " << info.summary << '\n'
        << pad("") << "  constraints: " << info.constraints << '\n'
        << pad("") << "  source: " << info.source << '\n';
  }
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{
      "ppsim: a discrete-event simulator of pipeline-parallel training schedules.\n"
      "Without a command it compares GPipe and 1F1B at p=4, m=8, F=1, B=2.",
      "ppsim"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(0, 1);
  app.footer("Exit status: 0 success, 2 bad input, 3 invalid or deadlocking schedule, 1 anything else.");

  // Only the chosen subcommand gets its ~40 scenario options: registering them is most of a short
  // run's instructions (CLI11 checks every new option's names against the ones before it), and a
  // command line names one subcommand, first.
  const std::string chosen = !args.empty() && !args[0].starts_with("-") ? args[0] : std::string();
  auto scenario_flags_for = [&](const char* name, CLI::App& command, ScenarioFlags& flags) {
    if (chosen == name) add_scenario_flags(command, flags);
  };
  ScenarioFlags run_flags;
  ScenarioFlags compare_flags;
  PictureFiles run_pictures;
  PictureFiles compare_pictures;
  CLI::App* run = app.add_subcommand("run", "simulate one schedule and print its figures");
  scenario_flags_for("run", *run, run_flags);
  add_picture_flags(*run, run_pictures);
  CLI::App* compare = app.add_subcommand("compare", "simulate several schedules (-s a,b,...) side by side");
  scenario_flags_for("compare", *compare, compare_flags);
  add_picture_flags(*compare, compare_pictures);
  CLI::App* schedules = app.add_subcommand("schedules", "list the schedules: name, summary, constraints, source");
  CLI::App* models = app.add_subcommand("models", "list the model and hardware presets of --model and --hardware");
  ScenarioFlags export_flags;
  std::string export_path;
  CLI::App* export_command = app.add_subcommand(
      "export", "write a schedule's per-device actions as torch.distributed.pipelining's CSV (or JSON)");
  scenario_flags_for("export", *export_command, export_flags);
  export_command->add_option("-o,--output", export_path, "file to write (JSON when it ends in .json); default stdout")
      ->type_name("FILE");
  ScenarioFlags formula_flags;
  bool check = false;
  CLI::App* formulas =
      app.add_subcommand("formulas", "closed forms beside the simulated figures (all schedules unless -s)");
  scenario_flags_for("formulas", *formulas, formula_flags);
  formulas->add_flag("--check", check,
                     "compare every closed form with simulation over a grid inside its regime; exit 1 on a deviation");
  SweepCommands sweep_commands;  // ppsim sweep and ppsim merge (sweep_cli.cpp)
  add_sweep_commands(app, sweep_commands);

  try {
    std::vector<const char*> argv{"ppsim"};
    for (const auto& arg : args) argv.push_back(arg.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());

    if (schedules->parsed()) {
      write_schedule_list(out);
    } else if (sweep_commands.sweep->parsed() || sweep_commands.merge->parsed()) {
      run_sweep_commands(sweep_commands, out, err);
    } else if (models->parsed()) {
      write_preset_list(out);
    } else if (run->parsed()) {
      Scenario scenario = scenario_from(run_flags);
      if (scenario.schedules.size() != 1) {
        throw InputError(scenario.source_of("schedule") + ": run simulates one schedule; use `ppsim compare -s " +
                         run_flags.text["schedule"] + "` for several");
      }
      write_reports(scenario, false, run_pictures, out);
    } else if (export_command->parsed()) {
      Scenario scenario = scenario_from(export_flags);
      const bool json_path = export_path.size() >= 5 && export_path.compare(export_path.size() - 5, 5, ".json") == 0;
      if (json_path && scenario.sources.count("format") == 0) scenario.format = OutputFormat::kJson;
      const std::string text = export_schedule(scenario);
      if (export_path.empty()) {
        out << text;
      } else {
        write_file_atomically(export_path, text, "-o");
      }
    } else if (formulas->parsed()) {
      std::ostringstream buffer;
      if (check) {
        const bool agreed = check_formulas(buffer);
        out << buffer.str();
        return agreed ? kExitOk : kExitFailure;
      }
      Scenario scenario = scenario_from(formula_flags);
      if (!scenario.model.empty()) {
        throw InputError(scenario.source_of("model") +
                         ": formulas take uniform costs (--forward, --backward); a model's stages differ");
      }
      if (formula_flags.options["schedule"]->count() == 0 && scenario.sources.count("schedule") == 0) {
        scenario.schedules.clear();
        for (const auto& info : schedule_registry()) {
          if (!info.check(scenario_for_schedule(scenario, info).params)) scenario.schedules.emplace_back(info.name);
        }
      }
      write_formulas(scenario, buffer);
      out << buffer.str();
    } else if (compare->parsed()) {
      Scenario scenario = scenario_from(compare_flags);
      if (compare_flags.options["schedule"]->count() == 0 && scenario.sources.count("schedule") == 0) {
        scenario.schedules = {"gpipe", "1f1b"};
      }
      write_reports(scenario, true, compare_pictures, out);
    } else {
      // The default study also leaves its pictures in the working directory; not being able to
      // write them there (a read-only directory) does not spoil the tables already printed.
      const Scenario study = default_study();
      const auto reports = write_reports(study, true, {}, out);
      try {
        write_file_atomically(kDefaultReportPath, html_report(study, reports), "ppsim");
        err << "ppsim: wrote the report to " << kDefaultReportPath << '\n';
      } catch (const InputError&) {
        err << "ppsim: note: cannot write " << kDefaultReportPath
            << " in this directory; `ppsim compare --html FILE` writes it elsewhere\n";
      }
    }
    return kExitOk;
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error, out, err);  // --help, --version
    err << "ppsim: error: " << one_line(error.what()) << '\n';
    return kExitBadInput;
  } catch (const InputError& error) {
    err << "ppsim: error: " << one_line(error.what()) << '\n';
    return kExitBadInput;
  } catch (const JsonInputError& error) {  // a model or hardware file, read in models/json
    err << "ppsim: error: " << one_line(error.what()) << '\n';
    return kExitBadInput;
  } catch (const ScheduleError& error) {
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

}  // namespace ppsim
