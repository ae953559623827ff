// SPDX-License-Identifier: Apache-2.0
#pragma once
// A sweep's every point as CSV or JSON Lines: its index, inputs and figures, in point order. The
// bytes depend only on the study and the points written, never on threads or shards, so merged
// shards equal one machine's file.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/sweep/sweep_runner.hpp"

namespace ppsim {

enum class SweepFormat { kCsv, kJsonl };

// `-o -`: the points (or the merged file) on stdout, as CSV, instead of in a file.
inline constexpr std::string_view kStdoutPath = "-";

// .csv or .jsonl from the file name, CSV for kStdoutPath; otherwise InputError naming `flag`.
SweepFormat sweep_format_for(const std::string& path, std::string_view flag);

// The inputs that identify a point: schedule, p, v, m (t, d, micro-batch, global-batch, recompute
// with a model), then every other axis by its key. Cells are as people read them.
std::vector<std::string> input_columns(const Study& study);
std::vector<std::string> input_cells(const Study& study, const PointResult& point);

// A setting's key as the CSV and JSONL columns name it: snake_case like the figures ("micro-batch"
// is "micro_batch"), so that every column reads as one style; inputs stay kebab-case.
std::string output_column(std::string_view key);

// One point as an ordered object, a line of the .jsonl file: the same keys, in the same order, for
// every point of a study.
nlohmann::ordered_json point_row(const Study& study, const PointResult& point);

std::string sweep_csv(const Study& study, const std::vector<PointResult>& points);
std::string sweep_jsonl(const Study& study, const std::vector<PointResult>& points);
std::string sweep_output(const Study& study, const std::vector<PointResult>& points, SweepFormat format);

}  // namespace ppsim
