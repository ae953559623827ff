// SPDX-License-Identifier: Apache-2.0
#include "study/api.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>

#include "schedules/registry.hpp"
#include "sim/report/chrome_trace.hpp"
#include "sim/report/json_reporter.hpp"
#include "sim/report/reporter.hpp"
#include "sim/report/streamed_timeline.hpp"
#include "study/common/output_file.hpp"
#include "study/input/config.hpp"
#include "study/plan/plan_output.hpp"
#include "study/output/streamed_pictures.hpp"
#include "study/run/formulas.hpp"
#include "study/run/study.hpp"
#include "study/sweep/sweep_html.hpp"
#include "study/sweep/sweep_merge.hpp"
#include "study/sweep/sweep_output.hpp"
#include "study/sweep/sweep_shard_record.hpp"
#include "study/sweep/sweep_summary.hpp"

namespace ppsim {

void imply_custom_schedule(Scenario& scenario) {
  if (scenario.schedule_file.empty()) return;
  if (scenario.sources.count("schedule") == 0) {
    scenario.schedules = {"custom"};
    scenario.sources["schedule"] = scenario.source_of("schedule-file");
    return;
  }
  // Both given: the file's actions run only as schedule custom, so a list without it would run a
  // registry schedule and silently ignore the file.
  const auto& names = scenario.schedules;
  if (std::find(names.begin(), names.end(), "custom") == names.end()) {
    std::string listed;
    for (const std::string& name : names) listed += (listed.empty() ? "" : ",") + name;
    throw InputError(scenario.source_of("schedule-file") + ": " + excerpt(scenario.schedule_file) +
                     " runs as schedule custom, but " + scenario.source_of("schedule") + " names " + excerpt(listed) +
                     "; give -s custom, or only one of the two");
  }
}

Scenario scenario_from_settings(const nlohmann::json& settings, const std::string& origin,
                                const std::string& config_path) {
  Scenario scenario;
  if (!config_path.empty()) apply_config_file(config_path, scenario);
  apply_config_json(settings, origin, scenario);
  imply_custom_schedule(scenario);
  return scenario;
}

void check_run_schedules(const Scenario& scenario) {
  if (scenario.schedules.size() == 1) return;
  std::string names;
  for (const std::string& name : scenario.schedules) names += (names.empty() ? "" : ",") + name;
  throw InputError(scenario.source_of("schedule") + ": run simulates one schedule; use `ppsim compare -s " + names +
                   "` for several");
}

void default_compare_schedules(Scenario& scenario) {
  if (scenario.sources.count("schedule") == 0) scenario.schedules = {"gpipe", "1f1b"};
}

namespace {

// write_reports, and reports_as_data with no `out` (no timeline in the JSON then: nothing streamed).
std::vector<Report> simulate_and_write(const Scenario& scenario, bool side_by_side, const PictureFiles& pictures,
                                       std::ostream* out, std::size_t timeline_width) {
  // Two pictures to one file are refused before anything runs (write_files_atomically checks again).
  const OutputFile targets[] = {{pictures.svg, "", "--svg"}, {pictures.html, "", "--html"}, {pictures.trace, "", "--trace"}};
  refuse_shared_targets(targets);
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
  if (out != nullptr) {
    std::ostream& report_out = stream_json ? scratch.emplace().stream() : buffer;
    make_reporter(scenario.format)->write(report_out, reports, options);
    if (scratch) scratch->finish();
  }
  PictureFiles rendered = pictures;
  if (stream_trace) rendered.trace.clear();
  std::vector<OutputFile> files = render_pictures(scenario, reports, rendered);
  if (stream_trace) {
    writer->finish();
    files.push_back({pictures.trace, "", "--trace", &*trace});
  }
  write_files_atomically(files);
  if (scratch) {
    scratch->copy_to(*out);
  } else if (out != nullptr) {
    *out << buffer.str();
  }
  return reports;
}

}  // namespace

// Pictures are written before `out`, so a file that cannot be written leaves `out` empty too.
std::vector<Report> write_reports(const Scenario& scenario, bool side_by_side, const PictureFiles& pictures,
                                  std::ostream& out, std::size_t timeline_width) {
  return simulate_and_write(scenario, side_by_side, pictures, &out, timeline_width);
}

std::optional<ReportsAsData> reports_as_data(const Scenario& scenario, bool side_by_side, const PictureFiles& pictures) {
  if (scenario.timeline) return std::nullopt;
  ReportsAsData data;
  data.reports = simulate_and_write(scenario, side_by_side, pictures, nullptr, kDefaultTimelineWidth);
  ReportOptions options;
  options.side_by_side = side_by_side;
  data.value = reports_to_json(data.reports, options);
  return data;
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

bool write_formulas_study(Scenario scenario, bool check, std::ostream& out) {
  std::ostringstream buffer;
  if (check) {
    // The scenario's schedules and sizes narrow the grid; its costs do not apply (it sweeps its own).
    check_scenario(scenario);
    FormulaGrid grid;
    if (scenario.sources.count("schedule") != 0) grid.schedules = scenario.schedules;
    if (scenario.sources.count("p") != 0) grid.p = scenario.params.p;
    if (scenario.sources.count("v") != 0) grid.v = scenario.params.v;
    if (scenario.sources.count("m") != 0) grid.m = scenario.params.m;
    const bool agreed = check_formulas(buffer, grid);
    out << buffer.str();
    return agreed;
  }
  if (!scenario.model.empty()) {
    throw InputError(scenario.source_of("model") +
                     ": formulas take uniform costs (--forward, --backward); a model's stages differ");
  }
  if (scenario.sources.count("schedule") == 0) {
    scenario.schedules.clear();
    for (const auto& info : schedule_registry()) {
      if (!info.check(scenario_for_schedule(scenario, info).params)) scenario.schedules.emplace_back(info.name);
    }
  }
  write_formulas(scenario, buffer);
  out << buffer.str();
  return true;
}

std::vector<PointResult> sweep_to_files(const Study& study, const SweepOptions& options, const SweepFiles& files,
                                        std::ostream* points_out) {
  const bool to_stdout = files.output == kStdoutPath;
  if (to_stdout && points_out == nullptr) throw InputError("-o -: no stdout here; give a file name");
  std::optional<SweepFormat> format;
  if (!files.output.empty()) format = sweep_format_for(files.output, "-o");
  const OutputFile targets[] = {
      {to_stdout ? std::string() : files.output, "", "-o"}, {files.html, "", "--html"}, {files.summary, "", "--summary"}};
  refuse_shared_targets(targets);  // before the points run, not after
  const std::vector<PointResult> results = run_sweep(study, options);
  // A shard's file starts with what it is, which ppsim merge checks; a whole study's does not.
  auto points_text = [&] {
    return options.sharded ? shard_output(study, results, *format, options.shard_index, options.shard_count)
                           : sweep_output(study, results, *format);
  };
  // All or none: when one cannot be written, the others are not left either. A shard's page and
  // summary are the shard's points, as its printed summary counts them.
  std::vector<OutputFile> written;
  if (format && !to_stdout) written.push_back({files.output, points_text(), "-o"});
  if (!files.html.empty()) {
    written.push_back(
        {files.html, render_sweep_html(study, results, options.shard_index, options.shard_count), "--html"});
  }
  if (!files.summary.empty()) {
    const nlohmann::ordered_json tables =
        sweep_result_json(study, results, options.shard_index, options.shard_count, false);
    written.push_back({files.summary, tables.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + '\n',
                       "--summary"});
  }
  write_files_atomically(written);
  if (to_stdout) *points_out << points_text();
  return results;
}

void parse_shard(const std::string& text, std::size_t& index, std::size_t& count) {
  const auto slash = text.find('/');
  auto number = [&](std::string_view part, std::size_t& value) {
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    return !part.empty() && error == std::errc() && end == part.data() + part.size();
  };
  if (slash == std::string::npos || !number(std::string_view(text).substr(0, slash), index) ||
      !number(std::string_view(text).substr(slash + 1), count) || count == 0 || index >= count) {
    throw InputError("--shard: must be I/N with 0 <= I < N (e.g. 0/4), got " + quoted_excerpt(text));
  }
  if (count > kMaxStudyPoints) {
    throw InputError("--shard: at most " + std::to_string(kMaxStudyPoints) + " shards (a study's most points), got " +
                     quoted_excerpt(text));
  }
}

void merge_to_file(const std::string& output, const std::vector<std::string>& inputs, std::ostream* merged_out) {
  const std::string text = merge_sweep_files(output, inputs);
  if (output != kStdoutPath) {
    write_file_atomically(output, text, "-o");
  } else if (merged_out != nullptr) {
    *merged_out << text;
  } else {
    throw InputError("-o -: no stdout here; give a file name");
  }
}

nlohmann::ordered_json schedule_list_json() {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& info : schedule_registry()) {
    nlohmann::ordered_json row;
    row["name"] = info.name;
    row["summary"] = info.summary;
    row["constraints"] = info.constraints;
    row["source"] = info.source;
    row["default_v"] = info.default_v;
    list.push_back(row);
  }
  return list;
}

nlohmann::ordered_json sweep_result_json(const Study& study, const std::vector<PointResult>& points,
                                         std::size_t shard_index, std::size_t shard_count, bool with_points) {
  // Built apart and moved in last: a reference into an ordered_json object dangles when a key is
  // added (its keys live in a vector).
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const PointResult& point : points) rows.push_back(point_row(study, point));
  nlohmann::ordered_json result;
  result["points"] = nullptr;  // first, as the files list the points before the summary
  const auto rows_at = [&](const std::vector<std::size_t>& list) {
    nlohmann::ordered_json array = nlohmann::ordered_json::array();
    for (std::size_t position : list) array.push_back(rows[position]);
    return array;
  };
  result["objective"] = objective_name(study.objective);
  result["top"] = rows_at(top_points(study, points));
  result["pareto_front"] = rows_at(pareto_front(study, points));
  nlohmann::ordered_json choose = nlohmann::ordered_json::array();
  for (const ChooseMRow& row : choose_m(study, points)) {
    nlohmann::ordered_json entry;
    entry["schedule"] = row.schedule;
    entry["p"] = row.p;
    entry["v"] = row.v;
    entry["bubble_target"] = study.bubble_target;
    // The point with the smallest m at the target, or null with the best one that ran instead.
    entry["point"] = row.reached ? rows[row.found] : nlohmann::ordered_json(nullptr);
    entry["best"] = row.reached ? nlohmann::ordered_json(nullptr) : rows[row.best];
    entry["largest_m"] = row.largest_m;
    choose.push_back(entry);
  }
  result["choose_m"] = std::move(choose);
  if (with_points) {
    result["points"] = std::move(rows);
  } else {
    result.erase("points");
  }
  result["summary"] = sweep_summary(study, points, shard_index, shard_count);
  return result;
}

namespace {

std::int64_t plan_integer(const nlohmann::json& value, const std::string& source, std::int64_t least,
                          std::int64_t most) {
  std::int64_t number = 0;
  if (value.is_number_integer()) {
    number = value.get<std::int64_t>();
  } else if (value.is_string()) {
    const std::string text = value.get<std::string>();
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error != std::errc() || end != text.data() + text.size()) {
      throw InputError(source + ": needs a whole number, got '" + text + "'");
    }
  } else {
    throw InputError(source + ": needs a whole number, got " + value.dump());
  }
  if (number < least || number > most) {
    throw InputError(source + ": needs " + std::to_string(least) + " to " + std::to_string(most) + ", got " +
                     std::to_string(number));
  }
  return number;
}

}  // namespace

void apply_plan_option(std::string_view key, const nlohmann::json& value, const std::string& source,
                       PlanSettings& settings) {
  if (key == "gpus") {
    settings.gpus = plan_integer(value, source, 1, std::int64_t{1} << 20);
  } else if (key == "top") {
    settings.top = static_cast<int>(plan_integer(value, source, 1, 100));
  } else if (key == "jobs") {
    settings.threads = static_cast<unsigned>(plan_integer(value, source, 0, 4096));
    if (settings.threads == 0) settings.threads = sweep_threads(0);
  } else if (key == "split-budget") {
    settings.split_budget = static_cast<int>(plan_integer(value, source, 0, 1'000'000));
  } else if (key == "objective" || key == "framework") {
    if (!value.is_string()) throw InputError(source + ": needs a name, got " + value.dump());
    const std::string text = value.get<std::string>();
    if (key == "objective") {
      settings.objective = parse_objective(text, source);
    } else if (text == "megatron" || text == "torchtitan" || text == "both") {
      settings.megatron = text != "torchtitan";
      settings.torchtitan = text != "megatron";
    } else {
      throw InputError(source + ": '" + text + "' is not megatron, torchtitan or both");
    }
  }
}

void apply_plan_settings(nlohmann::json settings, const std::string& origin, const std::string& path,
                         PlanRequest& request) {
  if (!settings.is_object()) throw InputError(origin + ": a plan's settings are a JSON object");
  for (const std::string_view key : kPlanKeys) {
    const auto found = settings.find(std::string(key));
    if (found == settings.end()) continue;
    apply_plan_option(key, *found, origin + ": $." + std::string(key), request.settings);
    settings.erase(found);
  }
  if (path.empty()) {
    apply_config_json(settings, origin, request.scenario);
  } else {
    apply_config_read(settings, path, request.scenario);
  }
}

PlanResult write_plan(const PlanRequest& request, const std::string& html, std::ostream& out) {
  if (request.scenario.format == OutputFormat::kCsv) {
    throw InputError(request.scenario.source_of("format") + ": plan writes table or json");
  }
  if (!html.empty()) check_output_target(html, "--html");
  PlanResult result = plan_layouts(request.scenario, request.settings);
  if (!html.empty()) write_file_atomically(html, plan_html(result), "--html");
  if (request.scenario.format == OutputFormat::kJson) {
    out << plan_json(result).dump(2) << '\n';
  } else {
    write_plan_text(result, out);
  }
  return result;
}

}  // namespace ppsim
