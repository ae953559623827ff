// SPDX-License-Identifier: Apache-2.0
#pragma once
// ppsim trace: what a recorded run says. Reads the files, replays the step as recorded, attributes
// each device's idle time, calibrates the costs and runs the recorded program on them through the
// engine (the modelled step), and writes the figures as a table or JSON, the calibration as a file
// --calibrated-from reads, and a picture of the idle time by cause.

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "study/trace/calibration.hpp"
#include "study/trace/trace_import.hpp"
#include "study/trace/trace_replay.hpp"

namespace ppsim {

struct TraceStudyRequest {
  std::vector<std::string> files;
  TraceReadOptions read;
  TimerHints hints;            // a timer log's p, m, v and schedule
  bool json = false;           // --format json
  std::string calibrate_path;  // --calibrate FILE
  std::string svg_path;        // --svg FILE
};

struct TraceStudy {
  TraceReading reading;
  std::optional<TraceRun> run;  // the recorded step, or for a timer log the modelled one
  bool modelled_run = false;    // run is the engine's model of a timer log, not a recording
  std::optional<TraceReplay> replay;
  std::optional<double> without_launch_gaps;
  std::optional<double> without_message_delays;
  std::optional<double> modelled_step;  // the recorded program on the calibrated costs, through the engine
  std::string modelled_note;
  std::optional<Calibration> calibration;
};

// Reads and analyses; InputError for files it cannot read.
TraceStudy study_trace(const TraceStudyRequest& request);

// Calibration of files without the rest (what --calibrated-from needs).
Calibration calibrate_files(const std::vector<std::string>& files, const TraceReadOptions& read,
                            const TimerHints& hints);

nlohmann::ordered_json trace_study_json(const TraceStudy& study);
std::string trace_study_table(const TraceStudy& study);
std::string idle_picture_svg(const TraceStudy& study);

// The command: figures to `out`, the calibration and the picture to their files (all written or none).
void write_trace_study(const TraceStudyRequest& request, std::ostream& out);

}  // namespace ppsim
