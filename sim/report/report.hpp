// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a reporter prints: one simulated schedule with the inputs that produced it.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <string>

#include "models/reliability/checkpointing.hpp"
#include "models/transformer/training_step.hpp"
#include "schedules/program.hpp"
#include "sim/result.hpp"
#include "sim/sample_statistics.hpp"

namespace ppsim {

class StreamedTimeline;
class FigureDigest;
class AsciiTimelineDigest;

struct Report {
  std::string schedule;             // registry name, e.g. "1f1b"
  ScheduleParams params;            // p, m, v
  Program program;                  // the replayed program (the ASCII timeline labels come from it)
  Result result;                    // result.timeline is set when a timeline was asked for
  // Or, for `--format json --timeline` streamed as the engine ran, its rendered JSON on disk.
  std::shared_ptr<StreamedTimeline> streamed_timeline;
  // Or, for pictures of a run too large to keep (above 2,000,000 ops), what they draw, taken as the
  // engine ran: the SVG figure's (for --svg and --html) and the ASCII timeline's (a table's --timeline).
  std::shared_ptr<const FigureDigest> figure_digest;
  std::shared_ptr<const AsciiTimelineDigest> ascii_timeline;
  nlohmann::ordered_json scenario;  // the resolved scenario, as written under "scenario" in JSON output
  // Which ppsim wrote the result and hashes of the resolved model and hardware, written under
  // "provenance" beside the scenario: what `ppsim check` names first when a baseline moves.
  nlohmann::ordered_json provenance;
  // Device memory in bytes when the cost model knows the hardware (transformer model); pictures draw
  // it as a capacity line and tables say whether each device fits.
  std::optional<std::int64_t> memory_capacity;
  // A transformer study's whole training step: step time, throughput, MFU, memory per device.
  std::optional<TrainingFigures> training;
  // b, the samples (sequences) one micro-batch holds, as -b gives it (default 1): without a model,
  // throughput is m * b / makespan, so micro-batches of different sizes compare fairly.
  std::int64_t samples_per_microbatch = 1;
  // --samples: the Monte-Carlo steps' distributions; --mtbf: failures, checkpoints and goodput.
  std::optional<SampleFigures> samples;
  std::optional<ReliabilityReport> reliability;
};

}  // namespace ppsim
