// SPDX-License-Identifier: Apache-2.0
#include "study/sweep/sweep_output.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <nlohmann/json.hpp>

#include "sim/report/format.hpp"
#include "study/common/errors.hpp"

namespace ppsim {
namespace {

bool is_layout_column(std::string_view key, bool model) {
  for (std::string_view column : {"schedule", "p", "v", "m"}) {
    if (key == column) return true;
  }
  if (!model) return false;
  for (std::string_view column : {"t", "d", "micro-batch", "global-batch", "recompute"}) {
    if (key == column) return true;
  }
  return false;
}

// Figures of every study, then those of a training step.
constexpr const char* kFigures[] = {"makespan",          "bubble_ratio",          "bubble_overhead", "comm_ratio",
                                    "total_busy",        "throughput",            "peak_memory_bytes",
                                    "peak_activation_bytes", "peak_stashed",      "stage_imbalance", "fits"};
constexpr const char* kTrainingFigures[] = {"step_time",         "tokens_per_second", "samples_per_second",
                                            "mfu",               "hfu",               "dp_reduce_time",
                                            "dp_reduce_exposed", "optimizer_time",    "memory_capacity"};

void add_figures(nlohmann::ordered_json& row, const Study& study, const PointResult& point) {
  const PointFigures& f = point.figures;
  auto put = [&](const char* name, auto value) {
    if (point.run)
      row[name] = value;
    else
      row[name] = nullptr;
  };
  put("makespan", f.makespan);
  put("bubble_ratio", f.bubble_ratio);
  put("bubble_overhead", f.bubble_overhead);
  put("comm_ratio", f.comm_ratio);
  put("total_busy", f.total_busy);
  put("throughput", f.throughput);
  put("peak_memory_bytes", f.peak_memory_bytes);
  put("peak_activation_bytes", f.peak_activation_bytes);
  put("peak_stashed", f.peak_stashed);
  put("stage_imbalance", f.stage_imbalance);
  put("fits", f.fits);
  if (!study.model) return;
  put("step_time", f.step_time);
  put("tokens_per_second", f.tokens_per_second);
  put("samples_per_second", f.samples_per_second);
  put("mfu", f.mfu);
  put("hfu", f.hfu);
  put("dp_reduce_time", f.dp_reduce_time);
  put("dp_reduce_exposed", f.dp_reduce_exposed);
  put("optimizer_time", f.optimizer_time);
  put("memory_capacity", f.memory_capacity);
}

// The figures of studies that sample or plan failures, after the others.
void add_variability_figures(nlohmann::ordered_json& row, const Study& study, const PointResult& point) {
  const PointFigures& f = point.figures;
  auto put = [&](const char* name, double value) {
    if (point.run)
      row[name] = value;
    else
      row[name] = nullptr;
  };
  if (study.sampled) {
    put("mean_step_time", f.mean_step_time);
    put("p99_step_time", f.p99_step_time);
  }
  if (study.failures) put("goodput", f.goodput);
}

std::string csv_cell(const nlohmann::ordered_json& value) {
  std::string text;
  if (value.is_null())
    return "";
  else if (value.is_string())
    text = value.get<std::string>();
  else if (value.is_number_float())
    text = format_exact(value.get<double>());
  else
    text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

std::string output_column(std::string_view key) {
  std::string column(key);
  std::replace(column.begin(), column.end(), '-', '_');
  return column;
}

nlohmann::ordered_json point_row(const Study& study, const PointResult& point) {
  nlohmann::ordered_json row;
  row["point"] = point.index;
  row["status"] = point.run ? "run" : "skipped";
  row["schedule"] = point.schedule;
  row["p"] = point.p;
  row["v"] = point.v;
  row["m"] = point.m;
  if (study.model) {
    row["t"] = point.t;
    row["d"] = point.d;
    row["micro_batch"] = point.micro_batch;
    row["global_batch"] = point.global_batch;
    row["recompute"] = point.recompute;
  }
  for (std::size_t a = 0; a < study.axes.size(); ++a) {
    const StudyAxis& axis = study.axes[a];
    if (is_layout_column(axis.key, study.model)) continue;
    // A setting keeps its JSON type (numbers stay numbers); a group shows its name.
    row[output_column(axis.key)] = axis.group ? nlohmann::ordered_json(point.labels[a])
                               : nlohmann::ordered_json::parse(axis.values[point.choice[a]][axis.key].dump());
  }
  add_figures(row, study, point);
  add_variability_figures(row, study, point);
  row["reason"] = point.run ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(point.skipped);
  return row;
}


SweepFormat sweep_format_for(const std::string& path, std::string_view flag) {
  if (path.ends_with(".csv") || path == kStdoutPath) return SweepFormat::kCsv;
  if (path.ends_with(".jsonl")) return SweepFormat::kJsonl;
  throw InputError(std::string(flag) + ": " + path + ": the name must end in .csv or .jsonl (JSON Lines), or be - (CSV on stdout)");
}

std::vector<std::string> input_columns(const Study& study) {
  std::vector<std::string> columns = {"schedule", "p", "v", "m"};
  if (study.model) columns.insert(columns.end(), {"t", "d", "micro-batch", "global-batch", "recompute"});
  for (const StudyAxis& axis : study.axes) {
    if (!is_layout_column(axis.key, study.model)) columns.push_back(axis.key);
  }
  return columns;
}

std::vector<std::string> input_cells(const Study& study, const PointResult& point) {
  std::vector<std::string> cells = {point.schedule, std::to_string(point.p), std::to_string(point.v),
                                    std::to_string(point.m)};
  if (study.model) {
    cells.insert(cells.end(), {std::to_string(point.t), std::to_string(point.d), std::to_string(point.micro_batch),
                               std::to_string(point.global_batch), point.recompute});
  }
  for (std::size_t a = 0; a < study.axes.size(); ++a) {
    if (!is_layout_column(study.axes[a].key, study.model)) cells.push_back(point.labels[a]);
  }
  return cells;
}

namespace {

// A CSV cell as csv_cell writes it, appended in place: quoted when it holds a comma, a quote or a
// line break.
void append_cell(std::string& text, std::string_view cell) {
  if (cell.find_first_of(",\"\n") == std::string_view::npos) {
    text += cell;
    return;
  }
  text += '"';
  for (const char c : cell) {
    if (c == '"') text += '"';
    text += c;
  }
  text += '"';
}

void append_integer(std::string& text, long long value) {
  std::array<char, 24> buffer;
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  text.append(buffer.data(), end);
}

// One point's row, written straight from its figures: the cells point_row's JSON would give, in
// its order, without building the JSON (a sweep point's row was most of its cost).
void append_row(std::string& text, const Study& study, const PointResult& point,
                const std::vector<std::vector<std::string>>& axis_cells) {
  append_integer(text, static_cast<long long>(point.index));
  text += point.run ? ",run," : ",skipped,";
  append_cell(text, point.schedule);
  for (const int value : {point.p, point.v, point.m}) {
    text += ',';
    append_integer(text, value);
  }
  if (study.model) {
    for (const long long value : {static_cast<long long>(point.t), static_cast<long long>(point.d),
                                  static_cast<long long>(point.micro_batch), static_cast<long long>(point.global_batch)}) {
      text += ',';
      append_integer(text, value);
    }
    text += ',';
    append_cell(text, point.recompute);
  }
  for (std::size_t a = 0; a < study.axes.size(); ++a) {
    const StudyAxis& axis = study.axes[a];
    if (is_layout_column(axis.key, study.model)) continue;
    text += ',';
    text += axis.group ? csv_cell(nlohmann::ordered_json(point.labels[a])) : axis_cells[a][point.choice[a]];
  }
  const PointFigures& f = point.figures;
  const auto real = [&](double value) {
    text += ',';
    if (point.run) append_exact(text, value);
  };
  const auto count = [&](std::int64_t value) {
    text += ',';
    if (point.run) append_integer(text, value);
  };
  real(f.makespan);
  real(f.bubble_ratio);
  real(f.bubble_overhead);
  real(f.comm_ratio);
  real(f.total_busy);
  real(f.throughput);
  count(f.peak_memory_bytes);
  count(f.peak_activation_bytes);
  real(f.peak_stashed);
  real(f.stage_imbalance);
  text += ',';
  if (point.run) text += f.fits ? "true" : "false";
  if (study.model) {
    real(f.step_time);
    real(f.tokens_per_second);
    real(f.samples_per_second);
    real(f.mfu);
    real(f.hfu);
    real(f.dp_reduce_time);
    real(f.dp_reduce_exposed);
    real(f.optimizer_time);
    count(f.memory_capacity);
  }
  if (study.sampled) {
    real(f.mean_step_time);
    real(f.p99_step_time);
  }
  if (study.failures) real(f.goodput);
  text += ',';
  if (!point.run) append_cell(text, point.skipped);
  text += '\n';
}

}  // namespace

std::string sweep_csv(const Study& study, const std::vector<PointResult>& points) {
  std::string text = "point,status";
  for (const std::string& column : input_columns(study)) text += "," + csv_cell(output_column(column));
  for (const char* figure : kFigures) text += std::string(",") + figure;
  if (study.model) {
    for (const char* figure : kTrainingFigures) text += std::string(",") + figure;
  }
  if (study.sampled) text += ",mean_step_time,p99_step_time";
  if (study.failures) text += ",goodput";
  text += ",reason\n";
  // Each axis value's cell once: a setting keeps its JSON type (numbers stay numbers).
  std::vector<std::vector<std::string>> axis_cells(study.axes.size());
  for (std::size_t a = 0; a < study.axes.size(); ++a) {
    const StudyAxis& axis = study.axes[a];
    if (axis.group) continue;
    for (const nlohmann::json& value : axis.values) {
      axis_cells[a].push_back(csv_cell(nlohmann::ordered_json::parse(value[axis.key].dump())));
    }
  }
  text.reserve(text.size() + points.size() * 160);
  for (const PointResult& point : points) append_row(text, study, point, axis_cells);
  return text;
}

std::string sweep_jsonl(const Study& study, const std::vector<PointResult>& points) {
  std::string text;
  for (const PointResult& point : points) text += point_row(study, point).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + '\n';
  return text;
}

std::string sweep_output(const Study& study, const std::vector<PointResult>& points, SweepFormat format) {
  return format == SweepFormat::kCsv ? sweep_csv(study, points) : sweep_jsonl(study, points);
}

}  // namespace ppsim
