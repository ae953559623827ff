// SPDX-License-Identifier: Apache-2.0
#include "tools/ppsim/sweep_cli.hpp"

#include <charconv>

#include "study/api.hpp"
#include "study/common/errors.hpp"
#include "study/common/output_file.hpp"
#include "study/sweep/sweep_html.hpp"
#include "study/sweep/sweep_merge.hpp"
#include "study/sweep/sweep_output.hpp"
#include "study/sweep/sweep_runner.hpp"
#include "study/sweep/sweep_summary.hpp"
#include "tools/ppsim/expect_flag.hpp"
#include "tools/ppsim/sweep_progress.hpp"

namespace ppsim {
namespace {

int run_sweep_command(const SweepCommands& commands, std::ostream& out, std::ostream& err) {
  const Study study = load_study(commands.study);
  const std::vector<Expectation> expectations = parse_expectations(commands.expect, "--expect");
  SweepOptions options;
  if (!commands.shard.empty()) {
    parse_shard(commands.shard, options.shard_index, options.shard_count);
    options.sharded = true;
  }
  options.threads = sweep_threads(commands.threads);
  options.simulate_all = commands.simulate_all;
  const bool terminal = is_terminal(err);
  const bool bar = terminal || commands.progress;
  ProgressBar progress(err, !terminal);
  if (bar) options.progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
  // The files first: when one cannot be written, stdout stays empty, as for the other commands.
  const std::vector<PointResult> results =
      sweep_to_files(study, options, {commands.output, commands.html, commands.summary}, &out);
  if (bar) progress.finish(results.size(), options.threads);
  // With -o -, stdout holds the points alone, so that it pipes into other tools; the tables go to stderr.
  (commands.output == kStdoutPath ? err : out) << sweep_summary(study, results, options.shard_index,
                                                                options.shard_count);
  return report_expectations(expectation_failures(expectations, study, results), err);
}

// The sweep's own options: registered only when the command line chooses sweep (or asks for help).
void add_sweep_options(CLI::App& sweep, SweepCommands& commands) {
  sweep.add_option("study", commands.study, "the study: fixed settings, axes, constraints (see README)")
      ->required()
      ->type_name("STUDY.json");
  sweep.add_option("-j,--jobs", commands.threads, "threads; 0, the default, is every core")
      ->type_name("N")
      ->check(CLI::Range(0u, kMaxJobs));
  sweep.add_flag("--simulate-all", commands.simulate_all,
                 "simulate every point, also those whose closed forms are exact (same output)");
  sweep.add_flag("--progress", commands.progress,
                 "print a progress line at every tenth of the points when stderr is not a terminal");
  sweep.add_option("-o,--output", commands.output, "write every point: FILE.csv, FILE.jsonl, or - for CSV on stdout (the tables then go to stderr)")->type_name("FILE");
  sweep.add_option("--shard", commands.shard, "run the points with index % N == I (join with ppsim merge)")
      ->type_name("I/N");
  sweep
      .add_option("--html", commands.html,
                  "write one self-contained page: bubble against m, throughput against memory, the tables")
      ->type_name("FILE");
  sweep
      .add_option("--summary", commands.summary,
                  "write the summary's tables as JSON: top points, Pareto front, choose m (each point's row)")
      ->type_name("FILE.json");
  add_expect_flag(sweep, commands.expect);
}

}  // namespace

void add_sweep_commands(CLI::App& app, SweepCommands& commands, bool sweep_options, bool merge_options) {
  commands.sweep = app.add_subcommand(
      "sweep", "simulate every point of a JSON study on all cores: output file, best points, Pareto front, choose m");
  commands.merge = app.add_subcommand(
      "merge", "join the output files of a sharded sweep into the file one machine would have written");
  if (sweep_options) add_sweep_options(*commands.sweep, commands);
  if (merge_options) {
    commands.merge->add_option("-o,--output", commands.merge_output, "the merged file (.csv or .jsonl), or - for CSV on stdout")
        ->required()
        ->type_name("FILE");
    commands.merge->add_option("files", commands.merge_inputs, "the shards' files, in any order")
        ->required()
        ->type_name("FILE...");
  }
}

int run_sweep_commands(const SweepCommands& commands, std::ostream& out, std::ostream& err) {
  if (commands.sweep->parsed()) return run_sweep_command(commands, out, err);
  merge_to_file(commands.merge_output, commands.merge_inputs, &out);
  return kExitOk;
}

}  // namespace ppsim
