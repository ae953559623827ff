// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a sweep says on the terminal: how many points ran, were skipped (by reason) or do not fit;
// the best points by the study's objective; the Pareto front of throughput against peak memory;
// the "choose m" table; and advice where the numbers call for it. Computed after all points ran,
// from the results in point order, so it is the same for any number of threads.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/report/format.hpp"
#include "study/sweep/sweep_runner.hpp"

namespace ppsim {

// Points run, skipped (by reason, most frequent first) and run but not fitting.
struct SweepCounts {
  std::size_t ran = 0;
  std::size_t skipped = 0;
  std::size_t unfit = 0;
  std::vector<std::pair<std::string, std::size_t>> reasons;
};
SweepCounts sweep_counts(const std::vector<PointResult>& points);

// One of the summary's tables as cells, so the terminal and the HTML page show the same text.
struct SummaryTable {
  std::vector<std::string> header;
  std::vector<Align> align;  // per column
  std::vector<std::vector<std::string>> rows;
};

// Positions in `points` of the points that ran and fit, best first by the objective (ties: lower
// index first). When none fits, the points that ran.
std::vector<std::size_t> ranked_points(const Study& study, const std::vector<PointResult>& points);

// The first `study.top` of ranked_points: the top table's rows.
std::vector<std::size_t> top_points(const Study& study, const std::vector<PointResult>& points);

// What the top table ranks by, as its heading says it: "throughput (tokens per second)".
std::string objective_heading(const Study& study);

// The speed the Pareto front maximises: throughput, or 1 / step time with the time objective.
double pareto_speed(const Study& study, const PointResult& point);

// Positions of the points that ran and fit and that no other such point beats on both throughput
// (higher; with the time objective, step time lower) and peak memory (lower), by rising memory.
std::vector<std::size_t> pareto_front(const Study& study, const std::vector<PointResult>& points);

// For one schedule, p and v: the smallest m whose bubble ratio is at most the target.
struct ChooseMRow {
  std::string schedule;
  int p = 0;
  int v = 1;
  std::size_t found = 0;  // position in `points`; valid when `reached`
  bool reached = false;
  std::size_t best = 0;  // the point with the lowest bubble, when not reached
  int largest_m = 0;     // the largest m that ran
  // The points at the rule of thumb's ends, m = 2p and m = 4p, when the study has them.
  std::optional<std::size_t> at_2p;
  std::optional<std::size_t> at_4p;
};
std::vector<ChooseMRow> choose_m(const Study& study, const std::vector<PointResult>& points);

// The choose-m table's cells, as the summary prints them.
SummaryTable choose_m_cells(const Study& study, const std::vector<PointResult>& points);

// A table of points (the top table with `ranked`, the Pareto front without): inputs and figures.
SummaryTable point_table_cells(const Study& study, const std::vector<PointResult>& points,
                               const std::vector<std::size_t>& rows, bool ranked);

// The advice lines (comm ratio, m < 2p, stage imbalance, nothing fits); empty when none applies.
std::vector<std::string> sweep_advice(const Study& study, const std::vector<PointResult>& points);
// The same advice for the schedules of one run or compare, where it applies to them: m below 2p.
std::vector<std::string> run_advice(std::span<const Report> reports);

// "1f1b p=8 v=1 m=32 link=nvlink": a point's inputs in one phrase.
std::string describe_point(const Study& study, const PointResult& point);

// The whole terminal summary.
std::string sweep_summary(const Study& study, const std::vector<PointResult>& points, std::size_t shard_index,
                          std::size_t shard_count);

}  // namespace ppsim
