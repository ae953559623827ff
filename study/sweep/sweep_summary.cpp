// SPDX-License-Identifier: Apache-2.0
#include "study/sweep/sweep_summary.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "sim/report/format.hpp"
#include "study/sweep/sweep_output.hpp"

namespace ppsim {
namespace {

constexpr double kCommRatioAdvice = 0.10;
constexpr double kImbalanceAdvice = 1.20;
constexpr std::size_t kFrontRows = 20;

// Whether a is better than b for the objective; ties go to the lower point index.
bool better(const Study& study, const PointResult& a, const PointResult& b) {
  const PointFigures& x = a.figures;
  const PointFigures& y = b.figures;
  switch (study.objective) {
    case Objective::kThroughput:
      if (x.throughput != y.throughput) return x.throughput > y.throughput;
      break;
    case Objective::kBubble:
      if (x.bubble_ratio != y.bubble_ratio) return x.bubble_ratio < y.bubble_ratio;
      if (x.throughput != y.throughput) return x.throughput > y.throughput;
      break;
    case Objective::kMemory:
      if (x.peak_memory_bytes != y.peak_memory_bytes) return x.peak_memory_bytes < y.peak_memory_bytes;
      if (x.throughput != y.throughput) return x.throughput > y.throughput;
      break;
    case Objective::kTime:
      if (x.step_time != y.step_time) return x.step_time < y.step_time;
      break;
    case Objective::kP99Time:
      if (x.p99_step_time != y.p99_step_time) return x.p99_step_time < y.p99_step_time;
      break;
  }
  return a.index < b.index;
}

std::string heading_of(const Study& study) {
  switch (study.objective) {
    case Objective::kThroughput:
      return study.model ? "throughput (tokens per second)" : "throughput (samples per time unit, m * b / makespan)";
    case Objective::kBubble:
      return "bubble ratio (lowest first)";
    case Objective::kMemory:
      return "peak memory per device (lowest first)";
    case Objective::kTime:
      return study.model ? "step time (lowest first)" : "makespan, the time of one step (lowest first)";
    case Objective::kP99Time:
      return study.model ? "p99 of the sampled step time (lowest first)"
                         : "p99 of the sampled makespan (lowest first)";
  }
  return "";
}

// The figure columns of the summary's tables.
std::vector<std::string> figure_columns(const Study& study) {
  std::vector<std::string> columns = study.model
                                         ? std::vector<std::string>{"tokens/s", "mfu", "step_time", "bubble", "memory"}
                                         : std::vector<std::string>{"throughput", "makespan", "bubble", "comm", "memory"};
  if (study.sampled) columns.insert(columns.end(), {"mean", "p99"});
  if (study.failures) columns.push_back("goodput");
  columns.push_back("fits");
  return columns;
}

std::vector<std::string> figure_cells(const Study& study, const PointResult& point) {
  const PointFigures& f = point.figures;
  const std::string fits = f.fits ? "yes" : "no";
  std::vector<std::string> cells =
      study.model ? std::vector<std::string>{format_figure(f.tokens_per_second), format_figure(f.mfu),
                                             format_figure(f.step_time), format_figure(f.bubble_ratio),
                                             format_bytes(f.peak_memory_bytes)}
                  : std::vector<std::string>{format_figure(f.throughput), format_figure(f.makespan),
                                             format_figure(f.bubble_ratio), format_figure(f.comm_ratio),
                                             format_bytes(f.peak_memory_bytes)};
  if (study.sampled) cells.insert(cells.end(), {format_figure(f.mean_step_time), format_figure(f.p99_step_time)});
  if (study.failures) cells.push_back(format_figure(f.goodput));
  cells.push_back(fits);
  return cells;
}

SummaryTable point_cells(const Study& study, const std::vector<PointResult>& points,
                         const std::vector<std::size_t>& rows, bool ranked) {
  SummaryTable table;
  if (ranked) table.header.push_back("rank");
  table.header.push_back("point");
  for (const std::string& column : input_columns(study)) table.header.push_back(column);
  for (const std::string& column : figure_columns(study)) table.header.push_back(column);
  table.align.assign(table.header.size(), Align::kRight);
  table.align[ranked ? 2 : 1] = Align::kLeft;  // schedule
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const PointResult& point = points[rows[r]];
    std::vector<std::string> cells;
    if (ranked) cells.push_back(std::to_string(r + 1));
    cells.push_back(std::to_string(point.index));
    for (std::string& cell : input_cells(study, point)) cells.push_back(std::move(cell));
    for (std::string& cell : figure_cells(study, point)) cells.push_back(std::move(cell));
    table.rows.push_back(std::move(cells));
  }
  return table;
}

std::string render_text(const SummaryTable& cells) {
  TextTable table(cells.align);
  table.add_row(cells.header);
  for (const std::vector<std::string>& row : cells.rows) table.add_row(row);
  return table.render();
}

std::string point_table(const Study& study, const std::vector<PointResult>& points,
                        const std::vector<std::size_t>& rows, bool ranked) {
  return render_text(point_cells(study, points, rows, ranked));
}

std::string indent(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out += "  " + line + "\n";
  return out;
}

std::string choose_m_table(const Study& study, const std::vector<PointResult>& points) {
  return render_text(choose_m_cells(study, points));
}

std::vector<std::string> advice_lines(const Study& study, const std::vector<PointResult>& points) {
  std::vector<std::string> lines;
  std::size_t ran = 0;
  std::size_t comm = 0, few = 0, imbalanced = 0, unfit = 0;
  const PointResult* worst_comm = nullptr;
  const PointResult* worst_few = nullptr;
  const PointResult* worst_imbalance = nullptr;
  for (const PointResult& point : points) {
    if (!point.run) continue;
    ++ran;
    const PointFigures& f = point.figures;
    if (!f.fits) ++unfit;
    if (f.comm_ratio > kCommRatioAdvice) {
      ++comm;
      if (worst_comm == nullptr || f.comm_ratio > worst_comm->figures.comm_ratio) worst_comm = &point;
    }
    if (point.m < 2 * point.p) {
      ++few;
      if (worst_few == nullptr || f.bubble_ratio > worst_few->figures.bubble_ratio) worst_few = &point;
    }
    if (f.stage_imbalance > kImbalanceAdvice) {
      ++imbalanced;
      if (worst_imbalance == nullptr || f.stage_imbalance > worst_imbalance->figures.stage_imbalance) {
        worst_imbalance = &point;
      }
    }
  }
  const std::string of = " of " + std::to_string(ran) + " points ";
  if (comm > 0) {
    lines.push_back(std::to_string(comm) + of + "spend over 10% of their compute time on links (worst: point " +
                    std::to_string(worst_comm->index) + ", " + describe_point(study, *worst_comm) + ", comm_ratio " +
                    format_figure(worst_comm->figures.comm_ratio) +
                    "): a faster link or fewer pipeline hops (smaller p); fewer, larger micro-batches help only where the "
                    "latency of each message, not the bandwidth, dominates");
  }
  if (few > 0) {
    lines.push_back(std::to_string(few) + of + "run m < 2p, where a 1F1B bubble is above a third (worst: point " +
                    std::to_string(worst_few->index) + ", " + describe_point(study, *worst_few) + ", bubble " +
                    format_figure(worst_few->figures.bubble_ratio) +
                    "): raise m with a larger global batch or smaller micro-batches");
  }
  if (imbalanced > 0) {
    lines.push_back(std::to_string(imbalanced) + of + "have one stage over 20% slower than the mean (worst: point " +
                    std::to_string(worst_imbalance->index) + ", " + describe_point(study, *worst_imbalance) + ", " +
                    format_figure(worst_imbalance->figures.stage_imbalance) +
                    "x): the slowest stage sets the pace; move layers off it (layers-per-stage)");
  }
  if (ran > 0 && unfit == ran) {
    lines.push_back("no point fits in memory: more t or p, recomputation, a distributed optimizer or smaller "
                    "micro-batches");
  }
  return lines;
}

}  // namespace

std::string describe_point(const Study& study, const PointResult& point) {
  const std::vector<std::string> columns = input_columns(study);
  const std::vector<std::string> cells = input_cells(study, point);
  std::string text = cells[0];
  for (std::size_t i = 1; i < columns.size(); ++i) text += " " + columns[i] + "=" + cells[i];
  return text;
}

std::vector<std::size_t> ranked_points(const Study& study, const std::vector<PointResult>& points) {
  std::vector<std::size_t> ranked;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].run && points[i].figures.fits) ranked.push_back(i);
  }
  if (ranked.empty()) {
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (points[i].run) ranked.push_back(i);
    }
  }
  std::sort(ranked.begin(), ranked.end(),
            [&](std::size_t a, std::size_t b) { return better(study, points[a], points[b]); });
  return ranked;
}

double pareto_speed(const Study& study, const PointResult& point) {
  if (study.objective != Objective::kTime) return point.figures.throughput;
  return point.figures.step_time > 0 ? 1 / point.figures.step_time : 0;
}

std::vector<std::size_t> pareto_front(const Study& study, const std::vector<PointResult>& points) {
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].run && points[i].figures.fits) candidates.push_back(i);
  }
  std::sort(candidates.begin(), candidates.end(), [&](std::size_t a, std::size_t b) {
    const PointFigures& x = points[a].figures;
    const PointFigures& y = points[b].figures;
    if (x.peak_memory_bytes != y.peak_memory_bytes) return x.peak_memory_bytes < y.peak_memory_bytes;
    if (pareto_speed(study, points[a]) != pareto_speed(study, points[b])) return pareto_speed(study, points[a]) > pareto_speed(study, points[b]);
    return points[a].index < points[b].index;
  });
  std::vector<std::size_t> front;
  for (std::size_t i : candidates) {
    if (front.empty() || pareto_speed(study, points[i]) > pareto_speed(study, points[front.back()])) front.push_back(i);
  }
  return front;
}

std::vector<ChooseMRow> choose_m(const Study& study, const std::vector<PointResult>& points) {
  std::vector<ChooseMRow> rows;
  std::map<std::tuple<std::string, int, int>, std::size_t> row_of;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const PointResult& point = points[i];
    if (!point.run) continue;
    const auto key = std::make_tuple(point.schedule, point.p, point.v);
    auto [it, inserted] = row_of.emplace(key, rows.size());
    if (inserted) rows.push_back({point.schedule, point.p, point.v, i, false, i, point.m});
    ChooseMRow& row = rows[it->second];
    row.largest_m = std::max(row.largest_m, point.m);
    if (point.figures.bubble_ratio < points[row.best].figures.bubble_ratio) row.best = i;
    if (point.m == 2 * point.p && !row.at_2p) row.at_2p = i;
    if (point.m == 4 * point.p && !row.at_4p) row.at_4p = i;
    if (point.figures.bubble_ratio <= study.bubble_target && (!row.reached || point.m < points[row.found].m)) {
      row.found = i;
      row.reached = true;
    }
  }
  return rows;
}

SummaryTable choose_m_cells(const Study& study, const std::vector<PointResult>& points) {
  SummaryTable table;
  table.align = {Align::kLeft,  Align::kRight, Align::kRight, Align::kRight,
                 Align::kRight, Align::kRight, Align::kRight, Align::kRight};
  table.header = {"schedule", "p", "v", "smallest m", "bubble", "m/p", "bubble at m=2p", "at m=4p"};
  auto bubble_at = [&](const std::optional<std::size_t>& position) {
    return position ? format_figure(points[*position].figures.bubble_ratio) : std::string("-");
  };
  for (const ChooseMRow& row : choose_m(study, points)) {
    std::vector<std::string> cells = {row.schedule, std::to_string(row.p), std::to_string(row.v)};
    if (row.reached) {
      const PointResult& found = points[row.found];
      cells.insert(cells.end(), {std::to_string(found.m), format_figure(found.figures.bubble_ratio),
                                 format_figure(static_cast<double>(found.m) / row.p)});
    } else {
      const PointResult& best = points[row.best];
      cells.insert(cells.end(), {"> " + std::to_string(row.largest_m),
                                 format_figure(best.figures.bubble_ratio) + " at m=" + std::to_string(best.m), "-"});
    }
    cells.push_back(bubble_at(row.at_2p));
    cells.push_back(bubble_at(row.at_4p));
    table.rows.push_back(std::move(cells));
  }
  return table;
}


std::string objective_heading(const Study& study) { return heading_of(study); }

std::vector<std::string> sweep_advice(const Study& study, const std::vector<PointResult>& points) {
  return advice_lines(study, points);
}

std::vector<std::string> run_advice(std::span<const Report> reports) {
  std::vector<std::string> lines;
  for (const Report& report : reports) {
    const int p = report.params.p;
    const int m = report.params.m;
    // The sweep's rule (m below 2p), where the bubble it warns of is there: above a third.
    if (m >= 2 * p || !(report.result.bubble_ratio > 1.0 / 3)) continue;
    lines.push_back(report.schedule + " runs m=" + std::to_string(m) + " < 2p=" + std::to_string(2 * p) +
                    ", where a 1F1B bubble is above a third (bubble " + format_figure(report.result.bubble_ratio) +
                    "): raise m with a larger global batch or smaller micro-batches");
  }
  return lines;
}

SummaryTable point_table_cells(const Study& study, const std::vector<PointResult>& points,
                               const std::vector<std::size_t>& rows, bool ranked) {
  return point_cells(study, points, rows, ranked);
}

std::vector<std::size_t> top_points(const Study& study, const std::vector<PointResult>& points) {
  std::vector<std::size_t> ranked = ranked_points(study, points);
  ranked.resize(std::min<std::size_t>(ranked.size(), static_cast<std::size_t>(std::max(study.top, 0))));
  return ranked;
}

SweepCounts sweep_counts(const std::vector<PointResult>& points) {
  SweepCounts counts;
  std::map<std::string, std::size_t> skipped;
  for (const PointResult& point : points) {
    if (point.run) {
      ++counts.ran;
      if (!point.figures.fits) ++counts.unfit;
    } else {
      ++skipped[point.skipped];
    }
  }
  counts.skipped = points.size() - counts.ran;
  counts.reasons.assign(skipped.begin(), skipped.end());
  std::stable_sort(counts.reasons.begin(), counts.reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return counts;
}

std::string sweep_summary(const Study& study, const std::vector<PointResult>& points, std::size_t shard_index,
                          std::size_t shard_count) {
  std::ostringstream out;
  const SweepCounts counts = sweep_counts(points);
  const std::size_t ran = counts.ran;
  const std::size_t unfit = counts.unfit;
  out << "study " << study.origin << ": " << study.points << " points";
  if (shard_count > 1) out << "; shard " << shard_index << "/" << shard_count << " has " << points.size();
  out << "\n";
  out << "run " << ran << ", skipped " << counts.skipped << ", not fitting " << unfit << "\n";
  if (!counts.reasons.empty()) {
    out << "\nskipped, by reason:\n";
    TextTable table({Align::kRight, Align::kLeft});
    for (const auto& [reason, count] : counts.reasons) table.add_row({std::to_string(count), reason});
    out << indent(table.render());
  }
  if (ran == 0) return out.str();

  const bool any_fits = ran > unfit;
  const std::vector<std::size_t> top = top_points(study, points);
  out << "\ntop " << top.size() << " by " << heading_of(study)
      << (any_fits ? "" : "; no point fits, so all are ranked") << ":\n"
      << indent(point_table(study, points, top, true));

  const std::vector<std::size_t> front = pareto_front(study, points);
  if (!front.empty()) {
    out << "\nPareto front, " << (study.objective == Objective::kTime ? "step time" : "throughput")
        << " against peak memory (" << front.size()
        << (front.size() == 1 ? " point" : " points") << "; each beats every cheaper one):\n";
    std::vector<std::size_t> shown(front.begin(), front.begin() + std::min(front.size(), kFrontRows));
    out << indent(point_table(study, points, shown, false));
    if (front.size() > shown.size()) out << "  ... " << front.size() - shown.size() << " more in the output file\n";
  }

  out << "\nchoose m: the smallest m with bubble_ratio <= " << format_figure(study.bubble_target)
      << " for each schedule and p (over the other axes), beside the rule of thumb m >= 2p..4p\n"
      << "(\"> M\": no m up to M reaches it):\n"
      << indent(choose_m_table(study, points));

  const std::vector<std::string> lines = advice_lines(study, points);
  out << "\nadvice:\n";
  if (lines.empty()) out << "  none: links, m and stage balance look fine\n";
  for (const std::string& line : lines) out << "  - " << line << "\n";
  return out.str();
}

}  // namespace ppsim
