// SPDX-License-Identifier: Apache-2.0
#include "study/trace/trace_study.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "models/stage_table_cost_model.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "sim/report/format.hpp"
#include "sim/report/markup.hpp"
#include "study/common/errors.hpp"
#include "study/common/output_file.hpp"

namespace ppsim {
namespace {

// The calibration's costs on every stage of `program`: the measured stage where the counts match,
// resampled over the model's depth where they do not; W half of B where the run did not split B.
StageTable stage_table_for(const Calibration& c, const Program& program) {
  const PipelineShape shape = program.pipeline_shape();
  const int stages = shape.length();
  const std::vector<double> forward = resample_stages(c.forward(), stages);
  const std::vector<double> backward = resample_stages(c.backward(), stages);
  std::vector<double> weight = c.weight();
  weight = weight.empty() ? std::vector<double>() : resample_stages(weight, stages);
  StageTable table;
  for (int s = 0; s < program.num_stages(); ++s) {
    const auto k = static_cast<std::size_t>(shape.logical(s));
    StageCosts costs;
    costs.forward = Duration{forward[k], c.seconds};
    costs.backward = Duration{backward[k], c.seconds};
    costs.weight = Duration{weight.empty() ? backward[k] / 2 : weight[k], c.seconds};
    table.stages.push_back(costs);
  }
  for (int s = 0; s + 1 < program.num_stages(); ++s) {
    table.boundary_bytes.push_back(ByteCount{shape.last(s) ? 0 : c.message_bytes.value_or(0)});
  }
  table.static_bytes.assign(static_cast<std::size_t>(program.num_devices), ByteCount{0});
  table.latency = Duration{c.latency ? c.latency->median : 0, c.seconds};
  if (c.bandwidth) table.bandwidth = Bandwidth{*c.bandwidth};
  return table;
}

// The engine's timeline as a recorded run: for a timer log, the step modelled from its calibration.
TraceRun run_of_timeline(const Program& program, const Timeline& timeline, const Calibration& c) {
  TraceRun run;
  run.files = c.files;
  run.format = "the engine's model of " + c.format;
  run.unit_seconds = c.seconds ? 1 : 0;
  run.schedule = c.schedule;
  run.num_microbatches = program.num_microbatches;
  run.num_pipelines = program.num_pipelines;
  run.stage_device = program.stage_device;
  run.devices.resize(static_cast<std::size_t>(program.num_devices));
  for (const Span& span : timeline.spans) {
    TracedItem item;
    item.action = span.action;
    item.partner = span.partner;
    item.start = span.start;
    item.end = span.end;
    item.duration = span.end - span.start;
    run.devices[static_cast<std::size_t>(span.device)].push_back(item);
  }
  for (auto& items : run.devices) {
    std::stable_sort(items.begin(), items.end(),
                     [](const TracedItem& a, const TracedItem& b) { return a.start < b.start; });
  }
  for (const MessageSpan& message : timeline.messages) {
    run.messages.push_back({message.from, message.src, message.dst, message.depart_start, message.depart_end,
                            message.arrival, message.bytes});
  }
  return run;
}

struct Modelled {
  std::optional<double> step;
  std::optional<Timeline> timeline;
  std::string note;
};

Modelled model_program(const Program& program, const Calibration& c, bool timeline) {
  Modelled out;
  if (const auto problem = validate_program(program)) {
    out.note = "the recorded program is not one the engine runs: " + problem->message;
    return out;
  }
  const StageTableCostModel costs(stage_table_for(c, program));
  EngineOptions options;
  options.record_timeline = timeline;
  Engine engine;
  SimulationOutcome outcome = engine.run(program, costs, options);
  if (!outcome.result) {
    out.note = "the recorded program deadlocks in the engine: " + outcome.deadlock->summary();
    return out;
  }
  out.step = outcome.result->makespan;
  if (timeline) out.timeline = std::move(outcome.result->timeline);
  return out;
}

// The schedule a timer log's run used: as given, else Megatron's (1F1B, interleaved with v > 1).
Program timer_program(const Calibration& c) {
  std::string name = c.schedule;
  if (name.empty()) name = c.v > 1 ? "interleaved-1f1b" : "1f1b";
  const ScheduleInfo* info = resolve_schedule(name);
  if (info == nullptr || !info->generated())
    throw InputError("--schedule: '" + excerpt(name) + "' is not a schedule of ppsim schedules");
  const ScheduleParams params{c.p, c.m, c.v};
  if (const std::optional<std::string> why = info->check(params)) {
    throw InputError("--schedule: " + std::string(info->name) + " " + *why);
  }
  return info->build(params);
}

}  // namespace

Calibration calibrate_files(const std::vector<std::string>& files, const TraceReadOptions& read,
                            const TimerHints& hints) {
  TraceReading reading = read_trace_files(files, read);
  if (reading.timers) return calibrate_timers(*reading.timers, hints);
  if (!reading.run) {
    throw InputError(
        excerpt(files.front()) +
        ": no pipeline actions to calibrate from (torch.distributed.pipelining's "
        "PP:<stage><F|I|B|W><micro-batch> ranges, ScheduleGPipe's Forward/Backward i, or ppsim's --trace)");
  }
  return calibrate_trace(*reading.run);
}

TraceStudy study_trace(const TraceStudyRequest& request) {
  TraceStudy study;
  study.reading = read_trace_files(request.files, request.read);
  if (study.reading.run) {
    const TraceRun& run = *study.reading.run;
    study.run = run;
    study.replay = replay_trace(run);
    study.without_launch_gaps = replay_trace(run, {false, true}, false).step();
    study.without_message_delays = replay_trace(run, {true, false}, false).step();
    study.calibration = calibrate_trace(run);
    const Modelled modelled = model_program(run.program(), *study.calibration, false);
    study.modelled_step = modelled.step;
    study.modelled_note = modelled.note;
  } else if (study.reading.timers) {
    study.calibration = calibrate_timers(*study.reading.timers, request.hints);
    const Program program = timer_program(*study.calibration);
    Modelled modelled = model_program(program, *study.calibration, true);
    study.modelled_step = modelled.step;
    study.modelled_note = modelled.note;
    if (modelled.timeline) {
      study.run = run_of_timeline(program, *modelled.timeline, *study.calibration);
      study.modelled_run = true;
      study.replay = replay_trace(*study.run);
    }
  }
  return study;
}

namespace {

const char* const kCauseColours[kIdleCauses] = {"#e6a23c", "#d9534f", "#5b8def", "#8e6cc0", "#9aa5b1"};

double seconds_of(const TraceStudy& study, double value) {
  if (!study.run || study.modelled_run) return value;
  return study.run->unit_seconds > 0 ? value * study.run->unit_seconds : value;
}

bool in_seconds(const TraceStudy& study) {
  if (study.calibration) return study.calibration->seconds;
  return true;
}

// "12.345 ms" or, in abstract units, "12.5".
std::string show_time(const TraceStudy& study, double value) {
  char buffer[48];
  if (in_seconds(study)) {
    std::snprintf(buffer, sizeof buffer, "%.3f ms", value * 1e3);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.6g", value);
  }
  return buffer;
}

std::string percent(double part, double whole) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", whole > 0 ? 100 * part / whole : 0.0);
  return buffer;
}

// "+1.2%", "-3.4%", and "equal" for a difference that rounds to nothing.
std::string signed_percent(double part, double whole) {
  const double share = whole > 0 ? 100 * part / whole : 0.0;
  if (std::fabs(share) < 0.05) return part == 0 ? "equal" : "+0.0%";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.1f%%", share);
  return buffer;
}

}  // namespace

nlohmann::ordered_json trace_study_json(const TraceStudy& study) {
  nlohmann::ordered_json out;
  const TraceReading& reading = study.reading;
  out["trace"] = {{"files", study.run ? study.run->files : std::vector<std::string>{}},
                  {"format", reading.format},
                  {"time_unit", in_seconds(study) ? "s" : "abstract"},
                  {"notes", reading.notes}};
  if (reading.timers) out["trace"]["files"] = std::vector<std::string>{reading.timers->file};
  if (study.run) {
    const TraceRun& run = *study.run;
    std::int64_t ops = 0;
    std::int64_t collectives = 0;
    for (const auto& items : run.devices) {
      for (const TracedItem& item : items) (item.compute() ? ops : collectives) += 1;
    }
    out["read"] = {{"devices", run.num_devices()},         {"stages", run.num_stages()},
                   {"microbatches", run.num_microbatches}, {"ops", ops},
                   {"collectives", collectives},           {"messages", run.messages.size()},
                   {"modelled", study.modelled_run}};
  }
  nlohmann::ordered_json step = nlohmann::ordered_json::object();
  if (study.run && !study.modelled_run)
    step["recorded"] = seconds_of(study, study.run->step_end() - study.run->step_start());
  if (study.calibration && study.calibration->measured_step && study.modelled_run)
    step["recorded"] = *study.calibration->measured_step;
  if (study.replay && !study.modelled_run) {
    step["replayed"] = seconds_of(study, study.replay->step());
    step["without_launch_gaps"] = seconds_of(study, *study.without_launch_gaps);
    step["without_message_delays"] = seconds_of(study, *study.without_message_delays);
  }
  if (study.modelled_step) step["modelled"] = *study.modelled_step;
  if (!study.modelled_note.empty()) step["note"] = study.modelled_note;
  out["step"] = std::move(step);
  if (study.replay && !study.replay->idle.empty()) {
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (std::size_t d = 0; d < study.replay->idle.size(); ++d) {
      const DeviceIdle& idle = study.replay->idle[d];
      nlohmann::ordered_json row;
      row["device"] = d;
      row["busy"] = seconds_of(study, idle.busy);
      row["idle"] = seconds_of(study, idle.idle);
      for (int k = 0; k < kIdleCauses; ++k) {
        row[idle_cause_name(static_cast<IdleCause>(k))] = seconds_of(study, idle.cause[static_cast<std::size_t>(k)]);
      }
      devices.push_back(std::move(row));
    }
    out["idle"] = std::move(devices);
    if (study.replay->inconsistent > 0) {
      out["trace"]["inconsistent_ops"] = study.replay->inconsistent;
      out["trace"]["worst_clock_skew"] = seconds_of(study, study.replay->worst_skew);
    }
  }
  if (!reading.ranks.empty()) {
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (const RankKernels& r : reading.ranks) {
      ranks.push_back({{"rank", r.rank},
                       {"file", r.file},
                       {"kernels", r.kernels},
                       {"kernel_time", r.kernel_time * 1e-6},
                       {"busy", r.busy * 1e-6},
                       {"communication_kernels", r.communication_kernels},
                       {"communication_time", r.communication_time * 1e-6},
                       {"in_actions", r.in_actions * 1e-6},
                       {"span", (r.last - r.first) * 1e-6},
                       {"profiler_steps", r.steps}});
    }
    out["ranks"] = std::move(ranks);
  }
  if (study.calibration) out["calibration"] = calibration_json(*study.calibration);
  return out;
}

std::string trace_study_table(const TraceStudy& study) {
  std::ostringstream out;
  const TraceReading& reading = study.reading;
  out << "trace: " << reading.format;
  if (study.calibration) out << "; " << study.calibration->source();
  out << '\n';
  if (study.run) {
    const TraceRun& run = *study.run;
    std::int64_t ops = 0;
    for (const auto& items : run.devices) {
      for (const TracedItem& item : items) ops += item.compute() ? 1 : 0;
    }
    out << (study.modelled_run ? "modelled: " : "read: ") << run.num_devices() << " devices, " << run.num_stages()
        << " stages, " << run.num_microbatches << " micro-batches, " << ops << " ops, " << run.messages.size()
        << " messages\n";
  }
  if (study.run && !study.modelled_run) {
    const double recorded = seconds_of(study, study.run->step_end() - study.run->step_start());
    const double replayed = seconds_of(study, study.replay->step());
    out << "step: recorded " << show_time(study, recorded) << ", replayed " << show_time(study, replayed) << " ("
        << signed_percent(replayed - recorded, recorded) << ")\n";
    out << "      without launch gaps " << show_time(study, seconds_of(study, *study.without_launch_gaps))
        << ", without message delays " << show_time(study, seconds_of(study, *study.without_message_delays)) << '\n';
    if (study.modelled_step) {
      out << "      modelled from the calibration (the engine, ops back to back) "
          << show_time(study, *study.modelled_step) << " (" << signed_percent(*study.modelled_step - recorded, recorded)
          << ")\n";
    }
  } else if (study.modelled_step) {
    out << "step: modelled " << show_time(study, *study.modelled_step);
    if (study.calibration && study.calibration->measured_step) {
      const double measured = *study.calibration->measured_step;
      out << "; forward-backward measured " << show_time(study, measured) << " ("
          << signed_percent(*study.modelled_step - measured, measured) << ")";
    }
    out << '\n';
  }
  if (!study.modelled_note.empty()) out << "note: " << study.modelled_note << '\n';
  if (study.replay && !study.replay->idle.empty()) {
    const double step = seconds_of(study, study.replay->step());
    out << "\nidle time by cause" << (study.modelled_run ? " (of the modelled step)" : "") << ", share of the step:\n";
    out << "device        busy        idle      bubble   straggler     message  collective      launch\n";
    char line[256];
    for (std::size_t d = 0; d < study.replay->idle.size(); ++d) {
      const DeviceIdle& idle = study.replay->idle[d];
      std::snprintf(line, sizeof line, "d%-5zu %11s %11s", d, percent(seconds_of(study, idle.busy), step).c_str(),
                    percent(seconds_of(study, idle.idle), step).c_str());
      out << line;
      for (int k = 0; k < kIdleCauses; ++k) {
        std::snprintf(line, sizeof line, " %11s",
                      percent(seconds_of(study, idle.cause[static_cast<std::size_t>(k)]), step).c_str());
        out << line;
      }
      out << '\n';
    }
    if (study.replay->inconsistent > 0) {
      out << "note: " << study.replay->inconsistent << " op(s) started before their input was produced (ranks' clocks "
          << "disagree by up to " << show_time(study, seconds_of(study, study.replay->worst_skew)) << ")\n";
    }
  }
  if (study.calibration && !study.calibration->stages.empty()) {
    const Calibration& c = *study.calibration;
    out << "\ncalibrated costs per stage (median, spread):\n";
    out << "stage  ";
    for (const char* op : {"F", "B", "I", "W"}) out << "                 " << op << "  ";
    out << '\n';
    char cell[64];
    for (std::size_t s = 0; s < c.stages.size(); ++s) {
      std::snprintf(cell, sizeof cell, "%-6zu", s);
      out << cell;
      for (int op = 0; op < kNumOps; ++op) {
        const auto& m = c.stages[s][static_cast<std::size_t>(op)];
        if (m) {
          std::snprintf(cell, sizeof cell, " %13s %4.1f%%", show_time(study, m->median).c_str(), 100 * m->spread);
        } else {
          std::snprintf(cell, sizeof cell, " %19s", "-");
        }
        out << cell;
      }
      out << '\n';
    }
    if (c.latency) out << "link: latency " << show_time(study, c.latency->median);
    if (c.bandwidth) out << ", bandwidth " << format_exact(*c.bandwidth) << " bytes/" << (c.seconds ? "s" : "unit");
    if (c.latency || c.bandwidth) out << '\n';
    for (const std::string& note : c.notes) out << "note: " << note << '\n';
  }
  const bool kernels =
      std::any_of(reading.ranks.begin(), reading.ranks.end(), [](const RankKernels& r) { return r.kernels > 0; });
  if (!reading.ranks.empty() && !kernels) out << "\nno GPU kernels in the trace (a CPU-only run)\n";
  if (kernels) {
    out << "\nkernels per rank (reconciled: busy is their union, kernel time their sum):\n";
    out << "rank  kernels  kernel time         busy   nccl time   in actions  steps  file\n";
    char line[512];
    for (const RankKernels& r : reading.ranks) {
      std::snprintf(line, sizeof line, "%-5d %7lld %11.3f ms %9.3f ms %8.3f ms %9.3f ms %6lld  %s", r.rank,
                    static_cast<long long>(r.kernels), r.kernel_time * 1e-3, r.busy * 1e-3, r.communication_time * 1e-3,
                    r.in_actions * 1e-3, static_cast<long long>(r.steps), excerpt(r.file).c_str());
      out << line << '\n';
    }
  }
  for (const std::string& note : reading.notes) out << "note: " << note << '\n';
  if (!study.run && !reading.timers) {
    out << "note: no pipeline actions in the trace (torch.distributed.pipelining's PP:<stage><F|I|B|W><micro-batch> "
           "ranges, ScheduleGPipe's Forward/Backward i); Schedule1F1B records none: run it through "
           "_PipelineScheduleRuntime or name each op's range so\n";
  }
  return out.str();
}

std::string idle_picture_svg(const TraceStudy& study) {
  if (!study.run || !study.replay)
    throw InputError("--svg: no pipeline step to draw (the trace holds no pipeline actions)");
  const TraceRun& run = *study.run;
  const TraceReplay& replay = *study.replay;
  const double width = 1160;
  const double left = 60;
  const double lane = 24;
  const double top = 40;
  const int p = run.num_devices();
  const double height = top + lane * p + 50;
  const double span = std::max(replay.step(), 1e-300);
  auto x = [&](double t) { return left + (t - replay.step_start) / span * (width - left - 20); };
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << left << "\" y=\"18\" font-size=\"13\">" << xml_escape(run.format) << ": "
      << (study.modelled_run ? "the modelled" : "the recorded") << " step, "
      << xml_escape(show_time(study, seconds_of(study, replay.step()))) << "; idle time coloured by cause</text>\n";
  for (int d = 0; d < p; ++d) {
    const double y = top + lane * d;
    svg << "<text x=\"8\" y=\"" << y + 15 << "\">d" << d << "</text>\n";
    const auto& items = run.devices[static_cast<std::size_t>(d)];
    for (std::size_t i = 0; i < items.size(); ++i) {
      const double s = replay.start[static_cast<std::size_t>(d)][i];
      const double e = replay.end[static_cast<std::size_t>(d)][i];
      const TracedItem& item = items[i];
      const std::string name =
          item.compute() ? cell_text(item.action, item.action.fused_with_next ? &item.partner : nullptr) : item.name;
      svg << "<rect x=\"" << format_exact(x(s)) << "\" y=\"" << y + 2 << "\" width=\""
          << format_exact(std::max(0.5, x(e) - x(s))) << "\" height=\"" << lane - 4 << "\" fill=\""
          << (item.compute() ? (item.action.op == Op::kForward ? "#4a7bb7" : "#2f5f8a") : kCauseColours[3])
          << "\"><title>" << xml_escape(name) << "</title></rect>\n";
    }
    if (static_cast<std::size_t>(d) < replay.idle.size()) {
      for (const IdleSegment& segment : replay.idle[static_cast<std::size_t>(d)].segments) {
        if (segment.cause == IdleCause::kCollective) continue;  // drawn as its item
        svg << "<rect x=\"" << format_exact(x(segment.start)) << "\" y=\"" << y + 8 << "\" width=\""
            << format_exact(std::max(0.5, x(segment.end) - x(segment.start))) << "\" height=\"" << lane - 16
            << "\" fill=\"" << kCauseColours[static_cast<int>(segment.cause)] << "\"><title>"
            << idle_cause_name(segment.cause) << "</title></rect>\n";
      }
    }
  }
  double lx = left;
  const double ly = top + lane * p + 24;
  for (int k = 0; k < kIdleCauses; ++k) {
    svg << "<rect x=\"" << lx << "\" y=\"" << ly - 10 << "\" width=\"12\" height=\"12\" fill=\"" << kCauseColours[k]
        << "\"/>"
        << "<text x=\"" << lx + 16 << "\" y=\"" << ly << "\">" << idle_cause_name(static_cast<IdleCause>(k))
        << "</text>\n";
    lx += 110;
  }
  svg << "<rect x=\"" << lx << "\" y=\"" << ly - 10 << "\" width=\"12\" height=\"12\" fill=\"#4a7bb7\"/><text x=\""
      << lx + 16 << "\" y=\"" << ly << "\">compute</text>\n</svg>\n";
  return svg.str();
}

void write_trace_study(const TraceStudyRequest& request, std::ostream& out) {
  const TraceStudy study = study_trace(request);
  // Everything is made before anything is written: a failure leaves no file behind.
  std::string calibration;
  if (!request.calibrate_path.empty()) {
    if (!study.calibration) throw InputError("--calibrate: the trace holds no pipeline actions to calibrate from");
    calibration = calibration_json(*study.calibration).dump(2) + "\n";
  }
  const std::string svg = request.svg_path.empty() ? std::string() : idle_picture_svg(study);
  const std::string text = request.json ? trace_study_json(study).dump(2) + "\n" : trace_study_table(study);
  if (!request.calibrate_path.empty()) write_file_atomically(request.calibrate_path, calibration, "--calibrate");
  if (!request.svg_path.empty()) write_file_atomically(request.svg_path, svg, "--svg");
  out << text;
}

}  // namespace ppsim
