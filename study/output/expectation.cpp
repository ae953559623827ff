// SPDX-License-Identifier: Apache-2.0
#include "study/output/expectation.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "models/units.hpp"
#include "schedules/excerpt.hpp"
#include "sim/report/format.hpp"
#include "study/common/errors.hpp"
#include "study/input/config.hpp"
#include "study/sweep/sweep_summary.hpp"

namespace ppsim {
namespace {

// kRatio: a fraction, also written as a percentage ("mfu >= 40%"); kCount: a rate or count, also
// with a decimal k, M or G ("tokens_per_second > 1.2M").
enum class Kind { kNumber, kRatio, kCount, kBytes, kTime, kBool };

// What a figure needs to exist at all: --samples for the sampled step times, --mtbf for goodput.
enum class Needs { kNothing, kSamples, kFailures };

struct FigureInfo {
  std::string_view name;
  Kind kind;
  double (*get)(const PointFigures&);
  Needs needs = Needs::kNothing;
};

// The sweep output's figures (study/sweep/sweep_output.cpp), with how their values are written.
constexpr std::array kFigures = {
    FigureInfo{"makespan", Kind::kTime, [](const PointFigures& f) { return f.makespan; }},
    FigureInfo{"bubble_ratio", Kind::kRatio, [](const PointFigures& f) { return f.bubble_ratio; }},
    FigureInfo{"bubble_overhead", Kind::kRatio, [](const PointFigures& f) { return f.bubble_overhead; }},
    FigureInfo{"comm_ratio", Kind::kRatio, [](const PointFigures& f) { return f.comm_ratio; }},
    FigureInfo{"total_busy", Kind::kTime, [](const PointFigures& f) { return f.total_busy; }},
    FigureInfo{"throughput", Kind::kCount, [](const PointFigures& f) { return f.throughput; }},
    FigureInfo{"peak_memory_bytes", Kind::kBytes,
               [](const PointFigures& f) { return static_cast<double>(f.peak_memory_bytes); }},
    FigureInfo{"peak_activation_bytes", Kind::kBytes,
               [](const PointFigures& f) { return static_cast<double>(f.peak_activation_bytes); }},
    FigureInfo{"peak_stashed", Kind::kCount, [](const PointFigures& f) { return f.peak_stashed; }},
    FigureInfo{"stage_imbalance", Kind::kNumber, [](const PointFigures& f) { return f.stage_imbalance; }},
    FigureInfo{"fits", Kind::kBool, [](const PointFigures& f) { return f.fits ? 1.0 : 0.0; }},
    FigureInfo{"step_time", Kind::kTime, [](const PointFigures& f) { return f.step_time; }},
    FigureInfo{"tokens_per_second", Kind::kCount, [](const PointFigures& f) { return f.tokens_per_second; }},
    FigureInfo{"samples_per_second", Kind::kCount, [](const PointFigures& f) { return f.samples_per_second; }},
    FigureInfo{"mfu", Kind::kRatio, [](const PointFigures& f) { return f.mfu; }},
    FigureInfo{"hfu", Kind::kRatio, [](const PointFigures& f) { return f.hfu; }},
    FigureInfo{"dp_reduce_time", Kind::kTime, [](const PointFigures& f) { return f.dp_reduce_time; }},
    FigureInfo{"dp_reduce_exposed", Kind::kTime, [](const PointFigures& f) { return f.dp_reduce_exposed; }},
    FigureInfo{"optimizer_time", Kind::kTime, [](const PointFigures& f) { return f.optimizer_time; }},
    FigureInfo{"memory_capacity", Kind::kBytes,
               [](const PointFigures& f) { return static_cast<double>(f.memory_capacity); }},
    FigureInfo{"mean_step_time", Kind::kTime, [](const PointFigures& f) { return f.mean_step_time; }, Needs::kSamples},
    FigureInfo{"p99_step_time", Kind::kTime, [](const PointFigures& f) { return f.p99_step_time; }, Needs::kSamples},
    FigureInfo{"goodput", Kind::kRatio, [](const PointFigures& f) { return f.goodput; }, Needs::kFailures},
};

// Why `figure` is not there to compare, or "" when it is.
std::string missing(const FigureInfo& figure, bool sampled, bool failures) {
  if (figure.needs == Needs::kSamples && !sampled) return std::string(figure.name) + " needs --samples N";
  if (figure.needs == Needs::kFailures && !failures) return std::string(figure.name) + " needs --mtbf T";
  return "";
}

std::string quote(std::string_view text) { return quoted_excerpt(text); }

const FigureInfo* find_figure(std::string_view name) {
  for (const FigureInfo& info : kFigures) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

// A figure as `ppsim check` and the JSON name it: "[1f1b] training.step_time", "samples.p99_step_time"
// and "reliability.goodput" are step_time, p99_step_time and goodput here.
const FigureInfo* find_figure_as_named(std::string_view name) {
  if (name.starts_with('[')) {
    const std::size_t close = name.find(']');
    if (close != std::string_view::npos) name = name.substr(close + 1);
    while (name.starts_with(' ')) name.remove_prefix(1);
  }
  for (const std::string_view prefix : {"training.", "samples.", "reliability."}) {
    if (name.starts_with(prefix)) {
      if (const FigureInfo* figure = find_figure(name.substr(prefix.size()))) return figure;
    }
  }
  return find_figure(name);
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

[[noreturn]] void fail(std::string_view flag, std::string_view text, const std::string& why) {
  throw InputError(std::string(flag) + ": " + why + " in " + quote(text));
}

double parse_value(const FigureInfo& figure, std::string_view text, std::string_view flag, std::string_view whole) {
  if (figure.kind == Kind::kBytes) {
    const auto parsed = parse_bytes(text);
    if (!parsed.ok) fail(flag, whole, std::string(figure.name) + " is bytes: " + parsed.error);
    return static_cast<double>(parsed.value.value);
  }
  if (figure.kind == Kind::kTime) {
    const auto parsed = parse_duration(text);
    if (!parsed.ok) fail(flag, whole, std::string(figure.name) + " is a time: " + parsed.error);
    return parsed.value.value;
  }
  // A percentage of a ratio, or a count's decimal multiple: the suffix goes before the number is read.
  double scale = 1;
  std::string_view number = text;
  const char last = number.empty() ? '\0' : number.back();
  if (last == '%') {
    if (figure.kind != Kind::kRatio) fail(flag, whole, std::string(figure.name) + " is not a ratio: write it without %");
    scale = 0.01;
  } else if (last == 'k' || last == 'K' || last == 'M' || last == 'G') {
    if (figure.kind != Kind::kCount) {
      fail(flag, whole, std::string(figure.name) + " is not a count: write it without " + std::string(1, last));
    }
    scale = last == 'G' ? 1e9 : last == 'M' ? 1e6 : 1e3;
  }
  if (scale != 1) number = trim(number.substr(0, number.size() - 1));
  double value = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (error != std::errc() || end != number.data() + number.size() || !std::isfinite(value)) {
    const char* forms = figure.kind == Kind::kRatio ? " (or a percentage, 40%)"
                        : figure.kind == Kind::kCount ? " (or with k, M or G)"
                                                       : "";
    fail(flag, whole, "the value must be a finite number" + std::string(forms) + ", got " + quote(text));
  }
  return value * scale;
}

}  // namespace

std::vector<Expectation> parse_expectations(const std::vector<std::string>& texts, std::string_view flag) {
  std::vector<Expectation> expectations;
  for (const std::string& text : texts) expectations.push_back(parse_expectation(text, flag));
  return expectations;
}

std::vector<std::string_view> expectation_figures() {
  std::vector<std::string_view> names;
  for (const FigureInfo& info : kFigures) names.push_back(info.name);
  return names;
}

Expectation parse_expectation(std::string_view given, std::string_view flag) {
  const std::string_view text = trim(given);
  Expectation expectation;
  expectation.text = std::string(text);
  // The operator: the first of < > = ! after the name (a leading ! negates a switch).
  const bool negated = text.starts_with('!');
  const std::string_view body = negated ? trim(text.substr(1)) : text;
  const std::size_t at = body.find_first_of("<>=!");
  const std::string_view name = trim(body.substr(0, at));
  const FigureInfo* figure = find_figure_as_named(name);
  if (figure == nullptr) {
    const auto names = expectation_figures();
    const std::string near = nearest_name(name, names);
    std::string known;
    for (const std::string_view known_name : names) known += (known.empty() ? "" : ", ") + std::string(known_name);
    throw InputError(std::string(flag) + ": unknown figure " + quote(name) + " in " + quote(text) +
                     (near.empty() ? "" : " (did you mean \"" + near + "\"?)") + "; the figures: " + known);
  }
  expectation.figure = std::string(figure->name);
  if (at == std::string_view::npos) {
    if (figure->kind != Kind::kBool) fail(flag, text, std::string(figure->name) + " needs a comparison, e.g. <= 0.1");
    expectation.compare = negated ? Expectation::Compare::kFalse : Expectation::Compare::kTrue;
    return expectation;
  }
  if (negated) fail(flag, text, "'!' negates a switch such as fits, not a comparison");
  if (figure->kind == Kind::kBool) fail(flag, text, std::string(figure->name) + " is true or false: write it alone or as !" + std::string(figure->name));
  std::string_view rest = body.substr(at);
  using C = Expectation::Compare;
  constexpr std::pair<std::string_view, C> kOperators[] = {{"<=", C::kLessEqual}, {">=", C::kGreaterEqual},
                                                          {"==", C::kEqual},     {"!=", C::kNotEqual},
                                                          {"<", C::kLess},       {">", C::kGreater}};
  bool found = false;
  for (const auto& [spelling, compare] : kOperators) {
    if (rest.starts_with(spelling)) {
      expectation.compare = compare;
      rest.remove_prefix(spelling.size());
      found = true;
      break;
    }
  }
  if (!found) fail(flag, text, "the comparison must be one of < <= > >= == !=");
  rest = trim(rest);
  if (rest.empty()) fail(flag, text, "a value must follow the comparison");
  expectation.value = parse_value(*figure, rest, flag, text);
  return expectation;
}

bool holds(const Expectation& expectation, const PointFigures& figures) {
  const double value = find_figure(expectation.figure)->get(figures);
  using C = Expectation::Compare;
  switch (expectation.compare) {
    case C::kLess: return value < expectation.value;
    case C::kLessEqual: return value <= expectation.value;
    case C::kGreater: return value > expectation.value;
    case C::kGreaterEqual: return value >= expectation.value;
    case C::kEqual: return value == expectation.value;
    case C::kNotEqual: return value != expectation.value;
    case C::kTrue: return value != 0;
    case C::kFalse: return value == 0;
  }
  return false;
}

std::string shown_value(const Expectation& expectation, const PointFigures& figures) {
  const FigureInfo& figure = *find_figure(expectation.figure);
  const double value = figure.get(figures);
  switch (figure.kind) {
    case Kind::kBool: return value != 0 ? "true" : "false";
    case Kind::kBytes: return format_bytes(static_cast<std::int64_t>(value)) + " (" + format_exact(value) + " bytes)";
    case Kind::kTime:
    case Kind::kRatio:
    case Kind::kCount:
    case Kind::kNumber: return format_exact(value);
  }
  return format_exact(value);
}

std::vector<std::string> expectation_failures(const std::vector<Expectation>& expectations,
                                              std::span<const Report> reports) {
  std::vector<std::string> failures;
  for (const Report& report : reports) {
    const PointFigures figures = report_figures(report);
    for (const Expectation& expectation : expectations) {
      const std::string why =
          missing(*find_figure(expectation.figure), report.samples.has_value(), report.reliability.has_value());
      if (!why.empty()) {
        failures.push_back("--expect \"" + expectation.text + "\" failed: " + report.schedule + " has no such figure: " + why);
        continue;
      }
      if (holds(expectation, figures)) continue;
      failures.push_back("--expect \"" + expectation.text + "\" failed: " + report.schedule + " has " +
                         expectation.figure + " " + shown_value(expectation, figures));
    }
  }
  return failures;
}

std::vector<std::string> expectation_failures(const std::vector<Expectation>& expectations, const Study& study,
                                              const std::vector<PointResult>& points) {
  std::vector<std::string> failures;
  const std::vector<std::size_t> top = top_points(study, points);
  for (const Expectation& expectation : expectations) {
    if (top.empty()) {
      failures.push_back("--expect \"" + expectation.text + "\" failed: no point ran");
      continue;
    }
    const std::string why = missing(*find_figure(expectation.figure), study.sampled, study.failures);
    if (!why.empty()) {
      failures.push_back("--expect \"" + expectation.text + "\" failed: the study has no such figure: " + why);
      continue;
    }
    const PointResult& best = points[top.front()];
    if (holds(expectation, best.figures)) continue;
    failures.push_back("--expect \"" + expectation.text + "\" failed: the top point, " + describe_point(study, best) +
                       ", has " + expectation.figure + " " + shown_value(expectation, best.figures));
  }
  return failures;
}

}  // namespace ppsim
