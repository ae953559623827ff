// SPDX-License-Identifier: Apache-2.0
#include "sim/report/variability_report.hpp"

#include <algorithm>
#include <numeric>
#include <ostream>
#include <string>
#include <vector>

#include "sim/report/format.hpp"

namespace ppsim {
namespace {

void add_distribution(TextTable& table, const std::string& name, const Distribution& d) {
  table.add_row({name, format_figure(d.mean), format_figure(d.stdev), format_figure(d.min), format_figure(d.p50),
                 format_figure(d.p90), format_figure(d.p99), format_figure(d.max)});
}

nlohmann::ordered_json distribution_json(const Distribution& d) {
  nlohmann::ordered_json out;
  out["mean"] = d.mean;
  out["stdev"] = d.stdev;
  out["min"] = d.min;
  out["p50"] = d.p50;
  out["p90"] = d.p90;
  out["p99"] = d.p99;
  out["max"] = d.max;
  return out;
}

// The figure schedules are ranked by: step time with a model, makespan otherwise.
const Distribution& ranked(const SampleFigures& samples) {
  return samples.has_training ? samples.step_time : samples.makespan;
}

}  // namespace

void write_samples_table(std::ostream& out, const SampleFigures& samples) {
  out << "samples: " << samples.n << " steps, seed " << samples.seed << '\n';
  TextTable table(numbers_after_name(8));
  table.add_row({"", "mean", "stdev", "min", "p50", "p90", "p99", "max"});
  add_distribution(table, "makespan", samples.makespan);
  add_distribution(table, "bubble_ratio", samples.bubble_ratio);
  if (samples.has_training) {
    add_distribution(table, "step_time", samples.step_time);
    add_distribution(table, "tokens_per_second", samples.tokens_per_second);
  }
  out << table.render();
  out << "critical path (share of the steps spent in each device's ops):";
  for (std::size_t d = 0; d < samples.critical_share.size(); ++d) {
    out << (d == 0 ? " " : ", ") << 'd' << d << ' ' << format_percent(samples.critical_share[d]);
  }
  out << '\n';
  // A histogram of 20 bins, its bars scaled to the fullest.
  const Histogram& h = samples.histogram;
  if (h.counts.empty()) return;
  out << samples.histogram_of << " histogram\n";
  const std::int64_t fullest = *std::max_element(h.counts.begin(), h.counts.end());
  TextTable bars({Align::kRight, Align::kLeft, Align::kRight, Align::kLeft});
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    const auto width = fullest > 0 ? static_cast<std::size_t>(40 * h.counts[i] / fullest) : 0;
    bars.add_row({format_figure(h.edges[i]), "to " + format_figure(h.edges[i + 1]), std::to_string(h.counts[i]),
                  std::string(width, '#')});
  }
  out << bars.render();
}

void write_reliability_table(std::ostream& out, const ReliabilityReport& reliability) {
  const ReliabilityFigures& f = reliability.figures;
  out << "reliability: " << format_figure(reliability.plan.gpus) << " GPUs, MTBF " << format_figure(reliability.plan.mtbf / 3600)
      << " h each\n";
  TextTable table({Align::kLeft, Align::kLeft});
  table.add_row({"system_mtbf", format_figure(f.system_mtbf) + " s"});
  table.add_row({"failures_expected", format_figure(f.failures_expected)});
  table.add_row({"checkpoint_time", format_figure(reliability.plan.checkpoint_time) + " s blocking" +
                                        (reliability.plan.write_time > 0
                                             ? ", " + format_figure(reliability.plan.write_time) + " s written behind"
                                             : std::string())});
  table.add_row({"checkpoint_every", std::to_string(f.checkpoint_every) + " steps (" +
                                         format_figure(f.checkpoint_period) + " s; Daly's optimum " +
                                         format_figure(f.optimum_period) + " s, rounded to whole steps)"});
  table.add_row({"checkpoint_overhead", format_percent(f.checkpoint_overhead)});
  table.add_row({"lost_work", format_percent(f.lost_work)});
  table.add_row({"restart_overhead", format_percent(f.restart_overhead)});
  table.add_row({"goodput", format_percent(f.goodput)});
  table.add_row({"wall_time", format_figure(f.wall_time / 86400) + " d for " + std::to_string(f.steps) + " steps"});
  if (reliability.samples > 0) {
    table.add_row({"sampled_wall_time", format_figure(reliability.sampled_wall_time.mean / 86400) + " d mean, p99 " +
                                            format_figure(reliability.sampled_wall_time.p99 / 86400) + " d (" +
                                            std::to_string(reliability.samples) + " runs)"});
    table.add_row({"sampled_goodput", format_percent(reliability.sampled_goodput)});
  }
  out << table.render();
  if (!reliability.assumed.empty()) {
    out << "assumed (give your own):";
    for (const std::string& key : reliability.assumed) out << " --" << key;
    out << '\n';
  }
}

std::string sample_order_note(std::span<const Report> reports) {
  std::vector<std::size_t> order(reports.size());
  std::iota(order.begin(), order.end(), 0);
  const auto by = [&](auto figure) {
    std::vector<std::size_t> sorted = order;
    std::stable_sort(sorted.begin(), sorted.end(), [&](std::size_t a, std::size_t b) {
      return figure(ranked(*reports[a].samples)) < figure(ranked(*reports[b].samples));
    });
    return sorted;
  };
  const auto names = [&](const std::vector<std::size_t>& sorted) {
    std::string text;
    for (std::size_t i = 0; i < sorted.size(); ++i) text += (i == 0 ? "" : " < ") + reports[sorted[i]].schedule;
    return text;
  };
  const auto by_mean = by([](const Distribution& d) { return d.mean; });
  const auto by_p99 = by([](const Distribution& d) { return d.p99; });
  const std::string what = reports.front().samples->has_training ? "step_time" : "makespan";
  if (by_mean == by_p99) return "order by mean " + what + ": " + names(by_mean) + "; the same at p99";
  return "order by mean " + what + ": " + names(by_mean) + "; at p99 it changes: " + names(by_p99);
}

void write_samples_side_by_side(std::ostream& out, std::span<const Report> reports) {
  if (!std::all_of(reports.begin(), reports.end(), [](const Report& r) { return r.samples.has_value(); })) return;
  const SampleFigures& first = *reports.front().samples;
  out << "samples: " << first.n << " steps each, seed " << first.seed << '\n';
  TextTable table(numbers_after_name(reports.size() + 1));
  std::vector<std::string> heading{""};
  for (const Report& report : reports) heading.push_back(report.schedule);
  table.add_row(std::move(heading));
  const auto add = [&](const std::string& name, auto figure) {
    std::vector<std::string> row{name};
    for (const Report& report : reports) row.push_back(format_figure(figure(*report.samples)));
    table.add_row(std::move(row));
  };
  const std::string what = first.has_training ? "step_time" : "makespan";
  add(what + " mean", [](const SampleFigures& s) { return ranked(s).mean; });
  add(what + " p50", [](const SampleFigures& s) { return ranked(s).p50; });
  add(what + " p99", [](const SampleFigures& s) { return ranked(s).p99; });
  add("bubble_ratio mean", [](const SampleFigures& s) { return s.bubble_ratio.mean; });
  out << table.render();
  out << sample_order_note(reports) << '\n';
}

nlohmann::ordered_json samples_to_json(const SampleFigures& samples) {
  nlohmann::ordered_json out;
  out["n"] = samples.n;
  out["seed"] = samples.seed;
  out["makespan"] = distribution_json(samples.makespan);
  out["bubble_ratio"] = distribution_json(samples.bubble_ratio);
  if (samples.has_training) {
    out["step_time"] = distribution_json(samples.step_time);
    out["tokens_per_second"] = distribution_json(samples.tokens_per_second);
  }
  out["critical_share"] = samples.critical_share;
  out["histogram"] = {{"of", samples.histogram_of}, {"edges", samples.histogram.edges}, {"counts", samples.histogram.counts}};
  return out;
}

nlohmann::ordered_json reliability_to_json(const ReliabilityReport& reliability) {
  const ReliabilityFigures& f = reliability.figures;
  nlohmann::ordered_json out;
  out["gpus"] = reliability.plan.gpus;
  out["mtbf"] = reliability.plan.mtbf;
  out["system_mtbf"] = f.system_mtbf;
  out["failures_expected"] = f.failures_expected;
  out["step_time"] = reliability.plan.step_time;
  out["checkpoint_bytes"] = reliability.checkpoint_bytes;
  out["checkpoint_time"] = reliability.plan.checkpoint_time;
  out["checkpoint_write_time"] = reliability.plan.write_time;
  out["restart_time"] = reliability.plan.restart_time;
  out["checkpoint_every"] = f.checkpoint_every;
  out["checkpoint_period"] = f.checkpoint_period;
  out["optimum_period"] = f.optimum_period;
  out["checkpoint_overhead"] = f.checkpoint_overhead;
  out["lost_work"] = f.lost_work;
  out["restart_overhead"] = f.restart_overhead;
  out["goodput"] = f.goodput;
  out["wall_time"] = f.wall_time;
  out["work_time"] = f.work_time;
  out["steps"] = f.steps;
  if (reliability.samples > 0) {
    out["samples"] = {{"n", reliability.samples},
                      {"wall_time", distribution_json(reliability.sampled_wall_time)},
                      {"goodput", reliability.sampled_goodput},
                      {"failures", reliability.sampled_failures}};
  }
  out["assumed"] = reliability.assumed;
  return out;
}

}  // namespace ppsim
