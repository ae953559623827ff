// SPDX-License-Identifier: Apache-2.0
#include "study/input/variability_settings.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "models/input_limits.hpp"
#include "models/json/json_document.hpp"
#include "models/units.hpp"
#include "schedules/excerpt.hpp"
#include "study/common/errors.hpp"

namespace ppsim {
namespace {

[[noreturn]] void fail(const std::string& source, const std::string& what) { throw InputError(source + ": " + what); }

std::string quote(std::string_view text) { return quoted_excerpt(text); }

// A finite number, the whole text.
double number_from_text(std::string_view text, const std::string& source, std::string_view what) {
  std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(value)) {
    fail(source, "must be " + std::string(what) + ", got " + quote(text));
  }
  return value;
}

double variation_from_text(std::string_view text, const std::string& source) {
  const double cv = number_from_text(text, source, "a coefficient of variation (a number >= 0)");
  if (cv < 0) fail(source, "a coefficient of variation must not be negative, got " + quote(text));
  if (cv > kMaxVariation) fail(source, "a coefficient of variation above 10 is not noise, got " + quote(text));
  return cv;
}

double factor_from_text(std::string_view text, const std::string& source) {
  const double factor = number_from_text(text, source, "a slowdown factor (a number > 0)");
  if (factor <= 0) fail(source, "a slowdown factor must be > 0, got " + quote(text));
  if (factor > 1e6) fail(source, "a slowdown factor above 1e6 is absurd, got " + quote(text));
  return factor;
}

std::int64_t integer_from_text(std::string_view text, const std::string& source, std::int64_t min, std::int64_t max) {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != text.data() + text.size()) {
    fail(source, "must be an integer, got " + quote(text));
  }
  if (ec == std::errc::result_out_of_range || value > max) {
    fail(source, "is absurdly large (" + excerpt(text) + "; at most " + std::to_string(max) + ")");
  }
  if (value < min) fail(source, "must be at least " + std::to_string(min) + ", got " + excerpt(text));
  return value;
}

// A duration of a training run: finite, >= 0 (> 0 unless `allow_zero`), at most kMaxDurationSeconds.
double duration_from_text(std::string_view text, const std::string& source, bool allow_zero) {
  const Parsed<Duration> parsed = parse_duration(text);
  if (!parsed.ok) fail(source, parsed.error);
  const double seconds = parsed.value.value;
  if (!(seconds > 0) && !(allow_zero && seconds == 0)) {
    fail(source, std::string("must be ") + (allow_zero ? ">= 0" : "> 0") + ", got " + quote(text));
  }
  if (seconds > kMaxDurationSeconds) fail(source, "is absurdly long (" + excerpt(text) + "; at most 1e12 s)");
  return seconds;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

// "0.05" for every op kind, or "F:0.03,B:0.05,W:0.05" (B covers I unless I is given), or "measured".
void apply_jitter(std::string_view text, const std::string& source, Scenario& scenario) {
  scenario.jitter_measured = false;
  if (text == "measured") {
    scenario.jitter_measured = true;
    return;
  }
  auto& cv = scenario.noise.op_cv;
  if (text.find(':') == std::string_view::npos) {
    cv.fill(variation_from_text(text, source));
    return;
  }
  cv.fill(0);
  bool input_given = false;
  for (const std::string_view part : split(text, ',')) {
    const std::size_t colon = part.find(':');
    if (colon == std::string_view::npos) fail(source, "each part must be KIND:CV, got " + quote(part));
    const std::string_view kind = part.substr(0, colon);
    const double value = variation_from_text(part.substr(colon + 1), source);
    if (kind == "F") {
      cv[static_cast<std::size_t>(Op::kForward)] = value;
    } else if (kind == "B") {
      cv[static_cast<std::size_t>(Op::kBackward)] = value;
      if (!input_given) cv[static_cast<std::size_t>(Op::kBackwardInput)] = value;
    } else if (kind == "I") {
      cv[static_cast<std::size_t>(Op::kBackwardInput)] = value;
      input_given = true;
    } else if (kind == "W") {
      cv[static_cast<std::size_t>(Op::kBackwardWeight)] = value;
    } else {
      fail(source, "op kind " + quote(kind) + " is not F, B, I or W");
    }
  }
}

void apply_stragglers(std::string_view text, const std::string& source, Scenario& scenario) {
  scenario.stragglers.clear();
  for (const std::string_view part : split(text, ',')) {
    const std::size_t colon = part.find(':');
    if (colon == std::string_view::npos) fail(source, "must be DEVICE:FACTOR, got " + quote(part));
    const auto device = static_cast<int>(integer_from_text(part.substr(0, colon), source, 0, 1'000'000'000));
    scenario.stragglers.emplace_back(device, factor_from_text(part.substr(colon + 1), source));
  }
}

void apply_straggler_probability(std::string_view text, const std::string& source, Scenario& scenario) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) fail(source, "must be PROBABILITY:FACTOR, got " + quote(text));
  const double probability = number_from_text(text.substr(0, colon), source, "a probability");
  if (probability < 0 || probability > 1) {
    fail(source, "a probability must be between 0 and 1, got " + quote(text.substr(0, colon)));
  }
  scenario.straggler_probability = probability;
  scenario.straggler_factor = factor_from_text(text.substr(colon + 1), source);
}

bool bool_from_text(std::string_view text, const std::string& source) {
  if (text == "true") return true;
  if (text == "false") return false;
  fail(source, "must be true or false, got " + quote(text));
}

// The keys whose JSON value may be a number (read as its text) or a string.
bool takes_number(std::string_view key) {
  for (std::string_view k : {"jitter", "link-jitter", "samples", "seed", "mtbf", "train-time", "train-steps",
                             "checkpoint-time", "storage-bandwidth", "restart-time", "checkpoint-every"}) {
    if (key == k) return true;
  }
  return false;
}

std::string number_text(const nlohmann::json& value) {
  if (value.is_number_integer()) return std::to_string(value.get<long long>());
  if (value.is_number_unsigned()) return std::to_string(value.get<unsigned long long>());
  std::ostringstream out;
  out.precision(17);
  out << value.get<double>();
  return out.str();
}

}  // namespace

bool apply_variability_text(std::string_view key, std::string_view text, const std::string& source, Scenario& scenario) {
  auto& failures = scenario.failures;
  if (key == "jitter") {
    apply_jitter(text, source, scenario);
  } else if (key == "jitter-dist") {
    const auto distribution = parse_noise_distribution(text);
    if (!distribution) fail(source, "must be lognormal, gamma or normal, got " + quote(text));
    scenario.noise.distribution = *distribution;
  } else if (key == "link-jitter") {
    scenario.noise.link_cv = variation_from_text(text, source);
  } else if (key == "straggler") {
    apply_stragglers(text, source, scenario);
  } else if (key == "straggler-prob") {
    apply_straggler_probability(text, source, scenario);
  } else if (key == "samples") {
    scenario.samples = integer_from_text(text, source, 1, 1'000'000);
  } else if (key == "seed") {
    scenario.seed = static_cast<std::uint64_t>(integer_from_text(text, source, 0, INT64_MAX));
  } else if (key == "mtbf") {
    failures.mtbf = duration_from_text(text, source, false);
  } else if (key == "train-time") {
    failures.train_time = duration_from_text(text, source, false);
  } else if (key == "train-steps") {
    failures.train_steps = integer_from_text(text, source, 1, 1'000'000'000'000);
  } else if (key == "checkpoint-time") {
    failures.checkpoint_time = duration_from_text(text, source, true);
  } else if (key == "storage-bandwidth") {
    const Parsed<Bandwidth> parsed = parse_bandwidth(text);
    if (!parsed.ok) fail(source, parsed.error);
    if (!(parsed.value.value >= kMinRateBytesPerSecond && parsed.value.value <= kMaxRateBytesPerSecond)) {
      fail(source, "must be from 1 kB/s to 1 PB/s, got " + quote(text));
    }
    failures.storage_bandwidth = parsed.value.value;
  } else if (key == "async-checkpoint") {
    failures.async_checkpoint = bool_from_text(text, source);
  } else if (key == "checksum") {
    if (text != "none" && text != "crc32") fail(source, "must be none or crc32, got " + quote(text));
    failures.checksum_crc32 = text == "crc32";
  } else if (key == "restart-time") {
    failures.restart_time = duration_from_text(text, source, true);
  } else if (key == "checkpoint-every") {
    if (text == "auto") {
      failures.checkpoint_every.reset();
    } else {
      failures.checkpoint_every = integer_from_text(text, source, 1, 1'000'000'000'000);
    }
  } else {
    return false;
  }
  return true;
}

bool apply_variability_json(std::string_view key, const nlohmann::json& value, const std::string& source,
                            Scenario& scenario) {
  if (key == "async-checkpoint") {
    if (!value.is_boolean()) fail(source, "must be true or false, got " + json_excerpt(value));
    return apply_variability_text(key, value.get<bool>() ? "true" : "false", source, scenario);
  }
  if (key == "straggler" && value.is_array()) {
    std::string joined;
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string()) fail(source + "[" + std::to_string(i) + "]", "must be \"DEVICE:FACTOR\"");
      joined += (i == 0 ? "" : ",") + value[i].get<std::string>();
    }
    if (joined.empty()) {
      scenario.stragglers.clear();
      return true;
    }
    return apply_variability_text(key, joined, source, scenario);
  }
  if (value.is_number() && takes_number(key)) return apply_variability_text(key, number_text(value), source, scenario);
  if (!is_failure_setting(key) && key != "jitter" && key != "jitter-dist" && key != "link-jitter" &&
      key != "straggler" && key != "straggler-prob" && key != "samples" && key != "seed") {
    return false;
  }
  if (!value.is_string()) fail(source, "must be a string or a number, got " + json_excerpt(value));
  return apply_variability_text(key, value.get<std::string>(), source, scenario);
}

bool is_failure_setting(std::string_view key) {
  for (std::string_view k : {"mtbf", "train-time", "train-steps", "checkpoint-time", "storage-bandwidth",
                             "async-checkpoint", "checksum", "restart-time", "checkpoint-every"}) {
    if (key == k) return true;
  }
  return false;
}

void check_variability(const Scenario& scenario) {
  if (!has_samples(scenario)) {
    // The deterministic step has no noise: draws need steps to be drawn for. A zero, or a seed alone,
    // asks for nothing and is harmless.
    const auto& cv = scenario.noise.op_cv;
    const bool jitter = scenario.jitter_measured || std::any_of(cv.begin(), cv.end(), [](double x) { return x > 0; });
    const std::pair<const char*, bool> asked[] = {{"jitter", jitter},
                                                  {"link-jitter", scenario.noise.link_cv > 0},
                                                  {"straggler-prob", scenario.straggler_probability > 0}};
    for (const auto& [key, given] : asked) {
      if (given) throw InputError(scenario.source_of(key) + ": needs --samples N (the deterministic step has no noise)");
    }
  }
  const Scenario::Failures& f = scenario.failures;
  const bool run_given = f.train_time.has_value() || f.train_steps.has_value();
  if (has_failures(scenario) && !run_given) {
    throw InputError(scenario.source_of("mtbf") + ": needs the run's length, --train-time T or --train-steps N");
  }
  if (f.train_time && f.train_steps) {
    throw InputError(scenario.source_of("train-steps") + ": give --train-time or --train-steps, not both");
  }
  if (!has_failures(scenario)) {
    for (const char* key : {"train-time", "train-steps", "checkpoint-time", "storage-bandwidth", "async-checkpoint",
                            "checksum", "restart-time", "checkpoint-every"}) {
      if (scenario.sources.count(key) > 0) {
        throw InputError(scenario.source_of(key) + ": needs --mtbf T, the mean time between failures of one GPU");
      }
    }
  }
}

bool has_samples(const Scenario& scenario) { return scenario.samples > 0; }

bool has_failures(const Scenario& scenario) { return scenario.failures.mtbf.has_value(); }

void variability_to_json(const Scenario& scenario, nlohmann::ordered_json& out) {
  const auto& cv = scenario.noise.op_cv;
  const bool noisy = scenario.noise.any() || scenario.jitter_measured;
  if (noisy || !scenario.stragglers.empty() || scenario.straggler_probability > 0 || has_samples(scenario)) {
    if (scenario.jitter_measured) {
      out["jitter"] = "measured";
    } else {
      const auto at = [&](Op op) { return cv[static_cast<std::size_t>(op)]; };
      std::ostringstream text;
      text.precision(17);
      text << "F:" << at(Op::kForward) << ",B:" << at(Op::kBackward) << ",I:" << at(Op::kBackwardInput)
           << ",W:" << at(Op::kBackwardWeight);
      out["jitter"] = text.str();
    }
    out["jitter-dist"] = std::string(noise_distribution_name(scenario.noise.distribution));
    out["link-jitter"] = scenario.noise.link_cv;
    nlohmann::ordered_json stragglers = nlohmann::ordered_json::array();
    for (const auto& [device, factor] : scenario.stragglers) {
      std::ostringstream text;
      text.precision(17);
      text << device << ':' << factor;
      stragglers.push_back(text.str());
    }
    out["straggler"] = stragglers;
    std::ostringstream probability;
    probability.precision(17);
    probability << scenario.straggler_probability << ':' << scenario.straggler_factor;
    out["straggler-prob"] = probability.str();
    if (has_samples(scenario)) out["samples"] = scenario.samples;
    out["seed"] = scenario.seed;
  }
  if (has_failures(scenario)) {
    const auto& f = scenario.failures;
    out["mtbf"] = *f.mtbf;
    if (f.train_time) out["train-time"] = *f.train_time;
    if (f.train_steps) out["train-steps"] = *f.train_steps;
    if (f.checkpoint_time) out["checkpoint-time"] = *f.checkpoint_time;
    // The two assumed defaults only when given, so that a report read back (ppsim check) still says
    // they were assumed; the reliability section gives the values used.
    if (scenario.sources.count("storage-bandwidth") > 0) out["storage-bandwidth"] = f.storage_bandwidth;
    out["async-checkpoint"] = f.async_checkpoint;
    out["checksum"] = f.checksum_crc32 ? "crc32" : "none";
    if (scenario.sources.count("restart-time") > 0) out["restart-time"] = f.restart_time;
    if (f.checkpoint_every) {
      out["checkpoint-every"] = *f.checkpoint_every;
    } else {
      out["checkpoint-every"] = "auto";
    }
  }
}

}  // namespace ppsim
