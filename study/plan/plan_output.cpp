// SPDX-License-Identifier: Apache-2.0
#include "study/plan/plan_output.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "models/transformer/training_step.hpp"
#include "sim/report/markup.hpp"
#include "study/common/version.hpp"
#include "study/plan/plan_explain.hpp"
#include "study/plan/plan_launch.hpp"

namespace ppsim {
namespace {

std::string decimals(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// "52,311": counts as people read them.
std::string count(std::int64_t value) {
  std::string digits = std::to_string(value);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(static_cast<std::size_t>(at), ",");
  return digits;
}

double gib(double bytes) { return bytes / static_cast<double>(std::int64_t{1} << 30); }

double tokens_per_gpu(const PlanResult& result, const PlanEntry& entry) {
  return entry.report.training->tokens_per_second / static_cast<double>(result.settings.gpus);
}

// The objective in its own unit, as the table's last column shows it.
std::string objective_text(const PlanResult& result, const PlanEntry& entry) {
  switch (result.settings.objective) {
    case PlanObjective::kStepTime:
      return decimals(entry.objective, 3) + " s";
    case PlanObjective::kP99StepTime:
      return decimals(entry.objective, 3) + " s";
    case PlanObjective::kGoodput:
      return decimals(-entry.objective, 0) + " tokens/s";
    case PlanObjective::kTokensPerSecondPerGpu:
      return decimals(-entry.objective, 1);
  }
  return "";
}

std::string header_line(const PlanResult& result) {
  const Scenario& base = result.base;
  return "plan: " + base.resolved_model->name + " on " + std::to_string(result.settings.gpus) + " x " +
         base.resolved_hardware->name + ", global batch " + std::to_string(base.layout.global_batch) + " x " +
         std::to_string(base.layout.seq) + " tokens, objective " + objective_name(result.settings.objective);
}

std::string counts_line(const PlanResult& result) {
  return "layouts: " + count(result.enumerated) + " enumerated; " + count(result.refused) +
         " refused by a framework's rule; " + count(result.over_memory) + " over memory by their lower bound; " +
         count(result.pruned) + " pruned by the bound on their step; " + count(result.simulated) + " simulated in " +
         count(result.pipelines) + " pipelines";
}

std::string padded(std::string text, std::size_t width, bool right) {
  if (text.size() >= width) return text;
  return right ? std::string(width - text.size(), ' ') + text : text + std::string(width - text.size(), ' ');
}

// The table's columns: rank, layout, then the figures right-aligned under their headers.
constexpr const char* kColumns[] = {"step (s)", "tokens/s/GPU", "MFU", "memory (GiB)"};
constexpr std::size_t kWidths[] = {8, 12, 6, 12};

void write_row(std::ostream& out, const std::string& rank, const PlanResult& result, const PlanEntry& entry,
               std::size_t width) {
  const std::string figures[] = {decimals(entry.report.training->step_time, 3),
                                 decimals(tokens_per_gpu(result, entry), 1),
                                 decimals(100 * entry.report.training->mfu, 1) + "%",
                                 decimals(gib(entry.peak_memory), 1)};
  out << padded(rank, 6, false) << padded(entry.layout.label(), width, false);
  for (std::size_t i = 0; i < 4; ++i) out << "  " << padded(figures[i], kWidths[i], true);
  out << "  " << objective_text(result, entry) << '\n';
}

nlohmann::ordered_json layout_json(const PlanLayout& layout) {
  nlohmann::ordered_json json;
  json["t"] = layout.t;
  json["context_parallel"] = layout.c;
  json["expert_parallel"] = layout.e;
  json["expert_tensor_parallel"] = layout.etp;
  json["p"] = layout.p;
  json["v"] = layout.v;
  json["d"] = layout.d;
  json["micro_batch"] = layout.b;
  json["recompute"] = recompute_name(layout.recompute);
  json["distributed_optimizer"] = layout.distributed_optimizer;
  json["fsdp"] = layout.fsdp;
  json["data_parallel_replicate"] = layout.replicate;
  json["schedule"] = layout.schedule;
  json["layers_per_stage"] = layout.layers_per_stage;
  json["label"] = layout.label();
  return json;
}

nlohmann::ordered_json entry_json(const PlanResult& result, const PlanEntry& entry) {
  const TrainingFigures& training = *entry.report.training;
  nlohmann::ordered_json json;
  json["layout"] = layout_json(entry.layout);
  json["step_time"] = training.step_time;
  json["tokens_per_second_per_gpu"] = tokens_per_gpu(result, entry);
  json["mfu"] = training.mfu;
  json["bubble_ratio"] = entry.report.result.bubble_ratio;
  json["peak_memory_bytes"] = entry.peak_memory;
  json["fits"] = entry.fits;
  json["memory_verdict"] = training.memory_verdict;
  json["objective"] = entry.objective;
  json["step_time_bound"] = entry.bound;
  const StepBreakdown parts = step_breakdown(entry.report);
  nlohmann::ordered_json breakdown;
  const auto terms = parts.terms();
  for (std::size_t i = 0; i < terms.size(); ++i) breakdown[StepBreakdown::kNames[i]] = terms[i];
  json["breakdown"] = breakdown;
  if (entry.report.samples) json["p99_step_time"] = entry.report.samples->step_time.p99;
  if (entry.report.reliability) json["goodput"] = entry.report.reliability->figures.goodput;
  json["why"] = entry.why;
  const LaunchFlags flags = launch_flags(result.base, entry.layout);
  nlohmann::ordered_json launch;
  launch["megatron"] = flags.megatron.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(flags.megatron);
  if (!flags.megatron_not.empty()) launch["megatron_not"] = flags.megatron_not;
  launch["torchtitan"] =
      flags.torchtitan.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(flags.torchtitan);
  if (!flags.torchtitan_not.empty()) launch["torchtitan_not"] = flags.torchtitan_not;
  launch["ppsim"] = flags.ppsim_command;
  launch["ppsim_config"] = flags.ppsim_config;
  json["launch"] = launch;
  return json;
}

// The layouts no other fitting layout beats on both step time and memory, by memory.
std::vector<const PlanResult::Point*> pareto_front(const PlanResult& result) {
  std::vector<const PlanResult::Point*> fitting;
  for (const auto& point : result.points) {
    if (point.fits) fitting.push_back(&point);
  }
  std::stable_sort(fitting.begin(), fitting.end(), [](const auto* a, const auto* b) {
    return a->peak_memory < b->peak_memory || (a->peak_memory == b->peak_memory && a->step_time < b->step_time);
  });
  std::vector<const PlanResult::Point*> front;
  for (const auto* point : fitting) {
    if (front.empty() || point->step_time < front.back()->step_time) front.push_back(point);
  }
  return front;
}

}  // namespace

void write_plan_text(const PlanResult& result, std::ostream& out) {
  out << header_line(result) << '\n';
  out << "hardware numbers: " << result.base.resolved_hardware->provenance() << '\n';
  out << counts_line(result) << "\n\n";
  if (result.top.empty()) {
    out << "no layout fits";
    if (!result.memory_runners_up.empty()) out << "; the nearest:";
    out << '\n';
  }
  std::size_t width = 6;
  for (const PlanEntry& entry : result.top) width = std::max(width, entry.layout.label().size());
  for (const PlanEntry& entry : result.memory_runners_up) width = std::max(width, entry.layout.label().size());
  if (!result.top.empty()) {
    out << padded("rank", 6, false) << padded("layout", width, false);
    for (std::size_t i = 0; i < 4; ++i) out << "  " << padded(kColumns[i], kWidths[i], true);
    out << "  " << objective_name(result.settings.objective) << '\n';
    for (std::size_t i = 0; i < result.top.size(); ++i) write_row(out, std::to_string(i + 1), result, result.top[i], width);
  }
  for (std::size_t i = 0; i < result.top.size(); ++i) {
    const PlanEntry& entry = result.top[i];
    const LaunchFlags flags = launch_flags(result.base, entry.layout);
    out << "\n#" << i + 1 << "  " << entry.layout.label() << '\n';
    out << "    why: " << entry.why << '\n';
    if (!entry.report.training->pipeline_layout.empty()) {
      out << "    layers per stage: " << entry.report.training->pipeline_layout << '\n';
    }
    out << "    Megatron-LM: " << (flags.megatron.empty() ? "(" + flags.megatron_not + ")" : flags.megatron) << '\n';
    if (flags.torchtitan.empty()) {
      out << "    torchtitan: (" << flags.torchtitan_not << ")\n";
    } else {
      out << "    torchtitan:\n";
      std::istringstream lines(flags.torchtitan);
      for (std::string line; std::getline(lines, line);) out << (line.empty() ? "" : "      " + line) << '\n';
    }
    out << "    ppsim: " << flags.ppsim_command << '\n';
  }
  if (!result.memory_runners_up.empty()) {
    out << "\nfaster, but over memory:\n";
    for (const PlanEntry& entry : result.memory_runners_up) {
      out << "  " << entry.layout.label() << "  " << decimals(entry.report.training->step_time, 3) << " s: " << entry.why
          << '\n';
    }
  }
  if (!result.refusals.empty()) {
    std::vector<std::pair<std::int64_t, std::string>> rules;
    for (const auto& [rule, times] : result.refusals) rules.emplace_back(-times, rule);
    std::sort(rules.begin(), rules.end());
    out << "\nmost frequent refusals:\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(5, rules.size()); ++i) {
      out << "  " << count(-rules[i].first) << "  " << rules[i].second << '\n';
    }
  }
}

nlohmann::ordered_json plan_json(const PlanResult& result) {
  const Scenario& base = result.base;
  nlohmann::ordered_json json;
  json["ppsim"] = version_line("ppsim");
  nlohmann::ordered_json plan;
  plan["model"] = base.resolved_model->name;
  plan["hardware"] = base.resolved_hardware->name;
  plan["hardware_provenance"] = base.resolved_hardware->provenance();
  plan["gpus"] = result.settings.gpus;
  plan["global_batch"] = base.layout.global_batch;
  plan["seq"] = base.layout.seq;
  plan["objective"] = objective_name(result.settings.objective);
  plan["memory_headroom"] = base.layout.memory_headroom;
  plan["top"] = result.settings.top;
  json["plan"] = plan;
  nlohmann::ordered_json counts;
  counts["enumerated"] = result.enumerated;
  counts["refused"] = result.refused;
  counts["over_memory"] = result.over_memory;
  counts["pruned"] = result.pruned;
  counts["simulated"] = result.simulated;
  counts["pipelines"] = result.pipelines;
  json["counts"] = counts;
  json["refusals"] = result.refusals;
  json["layouts"] = nlohmann::ordered_json::array();
  for (const PlanEntry& entry : result.top) json["layouts"].push_back(entry_json(result, entry));
  json["memory_runners_up"] = nlohmann::ordered_json::array();
  for (const PlanEntry& entry : result.memory_runners_up) json["memory_runners_up"].push_back(entry_json(result, entry));
  json["points"] = nlohmann::ordered_json::array();
  for (const auto& point : result.points) {
    json["points"].push_back({{"layout", point.layout.label()},
                              {"step_time", point.step_time},
                              {"peak_memory_bytes", point.peak_memory},
                              {"fits", point.fits},
                              {"step_time_bound", point.bound}});
  }
  return json;
}

std::string plan_html(const PlanResult& result) {
  std::ostringstream page;
  const double capacity = gib(static_cast<double>(result.base.resolved_hardware->memory_capacity));
  const double limit = capacity * (1 - result.base.layout.memory_headroom);
  double most_memory = capacity;
  double shortest = 0;
  double longest = 0;
  for (const auto& point : result.points) {
    most_memory = std::max(most_memory, gib(point.peak_memory));
    longest = std::max(longest, point.step_time);
    shortest = shortest == 0 ? point.step_time : std::min(shortest, point.step_time);
  }
  if (longest <= shortest) longest = shortest + 1;
  constexpr double kWidth = 760;
  constexpr double kHeight = 420;
  constexpr double kLeft = 70;
  constexpr double kBottom = 40;
  auto x_of = [&](double memory) { return kLeft + (kWidth - kLeft - 20) * gib(memory) / (most_memory * 1.05); };
  auto y_of = [&](double step) {
    return 20 + (kHeight - kBottom - 20) * (1 - (step - shortest * 0.98) / (longest * 1.02 - shortest * 0.98));
  };
  page << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
       << xml_escape(header_line(result)) << "</title>\n<style>body{font:14px sans-serif;margin:24px;max-width:1100px}"
       << "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;border-bottom:1px solid #ddd}"
       << "code{font-size:12px;word-break:break-all}</style></head><body>\n";
  page << "<h1>" << xml_escape(header_line(result)) << "</h1>\n<p>" << xml_escape(counts_line(result)) << "</p>\n";
  page << "<p>hardware numbers: " << xml_escape(result.base.resolved_hardware->provenance()) << "</p>\n";
  page << "<h2>Step time against memory</h2>\n<p>Every simulated layout: grey fits, red does not; the line is the "
          "Pareto front of those that fit; numbers are the ranks below.</p>\n";
  page << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
       << "\" role=\"img\" aria-label=\"step time against peak memory\">\n";
  page << "<line x1=\"" << kLeft << "\" y1=\"" << kHeight - kBottom << "\" x2=\"" << kWidth - 10 << "\" y2=\""
       << kHeight - kBottom << "\" stroke=\"#000\"/><line x1=\"" << kLeft << "\" y1=\"10\" x2=\"" << kLeft
       << "\" y2=\"" << kHeight - kBottom << "\" stroke=\"#000\"/>\n";
  page << "<text x=\"" << kWidth / 2 << "\" y=\"" << kHeight - 8 << "\" text-anchor=\"middle\">peak memory per GPU (GiB)</text>\n";
  page << "<text x=\"14\" y=\"" << kHeight / 2 << "\" transform=\"rotate(-90 14 " << kHeight / 2
       << ")\" text-anchor=\"middle\">step time (s)</text>\n";
  for (int tick = 0; tick <= 4; ++tick) {
    const double memory = most_memory * 1.05 * tick / 4;
    const double x = x_of(memory * static_cast<double>(std::int64_t{1} << 30));
    page << "<text x=\"" << decimals(x, 1) << "\" y=\"" << kHeight - kBottom + 16 << "\" text-anchor=\"middle\">"
         << decimals(memory, 0) << "</text>\n";
    const double step = shortest * 0.98 + (longest * 1.02 - shortest * 0.98) * tick / 4;
    page << "<text x=\"" << kLeft - 6 << "\" y=\"" << decimals(y_of(step) + 4, 1) << "\" text-anchor=\"end\">"
         << decimals(step, 2) << "</text>\n";
  }
  const double limit_x = x_of(limit * static_cast<double>(std::int64_t{1} << 30));
  page << "<line x1=\"" << decimals(limit_x, 1) << "\" y1=\"10\" x2=\"" << decimals(limit_x, 1) << "\" y2=\""
       << kHeight - kBottom << "\" stroke=\"#c00\" stroke-dasharray=\"4 3\"/><text x=\"" << decimals(limit_x - 4, 1)
       << "\" y=\"22\" text-anchor=\"end\" fill=\"#c00\">memory limit</text>\n";
  for (const auto& point : result.points) {
    page << "<circle cx=\"" << decimals(x_of(point.peak_memory), 1) << "\" cy=\"" << decimals(y_of(point.step_time), 1)
         << "\" r=\"3\" fill=\"" << (point.fits ? "#888" : "#d33") << "\" fill-opacity=\"0.6\"><title>"
         << xml_escape(point.layout.label() + ": " + decimals(point.step_time, 3) + " s, " +
                       decimals(gib(point.peak_memory), 1) + " GiB")
         << "</title></circle>\n";
  }
  std::string path;
  for (const auto* point : pareto_front(result)) {
    path += (path.empty() ? "M" : " L") + decimals(x_of(point->peak_memory), 1) + " " + decimals(y_of(point->step_time), 1);
  }
  if (!path.empty()) page << "<path d=\"" << path << "\" fill=\"none\" stroke=\"#06c\" stroke-width=\"2\"/>\n";
  for (std::size_t i = 0; i < result.top.size(); ++i) {
    const PlanEntry& entry = result.top[i];
    page << "<text x=\"" << decimals(x_of(entry.peak_memory) + 5, 1) << "\" y=\""
         << decimals(y_of(entry.report.training->step_time) - 5, 1) << "\" fill=\"#06c\">" << i + 1 << "</text>\n";
  }
  page << "</svg>\n<h2>Best layouts</h2>\n<table><tr><th>rank</th><th>layout</th><th>step (s)</th>"
          "<th>tokens/s/GPU</th><th>MFU</th><th>memory (GiB)</th><th>why</th></tr>\n";
  for (std::size_t i = 0; i < result.top.size(); ++i) {
    const PlanEntry& entry = result.top[i];
    page << "<tr><td>" << i + 1 << "</td><td>" << xml_escape(entry.layout.label()) << "</td><td>"
         << decimals(entry.report.training->step_time, 3) << "</td><td>" << decimals(tokens_per_gpu(result, entry), 1)
         << "</td><td>" << decimals(100 * entry.report.training->mfu, 1) << "%</td><td>"
         << decimals(gib(entry.peak_memory), 1) << "</td><td>" << xml_escape(entry.why) << "</td></tr>\n";
  }
  page << "</table>\n";
  for (std::size_t i = 0; i < result.top.size(); ++i) {
    const LaunchFlags flags = launch_flags(result.base, result.top[i].layout);
    page << "<h3>#" << i + 1 << " " << xml_escape(result.top[i].layout.label()) << "</h3>\n";
    if (!flags.megatron.empty()) page << "<p>Megatron-LM:</p><pre><code>" << xml_escape(flags.megatron) << "</code></pre>\n";
    if (!flags.torchtitan.empty()) page << "<p>torchtitan:</p><pre><code>" << xml_escape(flags.torchtitan) << "</code></pre>\n";
    page << "<p>ppsim:</p><pre><code>" << xml_escape(flags.ppsim_command) << "</code></pre>\n";
  }
  page << "</body></html>\n";
  return page.str();
}

}  // namespace ppsim
