// SPDX-License-Identifier: Apache-2.0
// JSON configs: every key by its long option name, units, lists, and an error naming the JSON path
// for each way a file can be wrong.
#include "study/input/config.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "study/common/errors.hpp"
#include "study/input/scenario.hpp"

namespace {

ppsim::Scenario from_json(const std::string& text) {
  ppsim::Scenario scenario;
  ppsim::apply_config_json(nlohmann::json::parse(text), "cfg.json", scenario);
  return scenario;
}

std::string error_of(const std::string& text) {
  try {
    from_json(text);
  } catch (const ppsim::InputError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a config sets every setting by its long option name, with units", "[config]") {
  const auto scenario = from_json(R"({
    "schedule": ["gpipe", "1f1b"], "p": 8, "m": 32, "v": 1,
    "forward": "1.5 ms", "backward": [0.003, "3 ms", "3000 us", 0.003, 0.003, 0.003, 0.003, 0.003],
    "weight": "1 ms", "latency": "10 us", "bandwidth": "400 Gb/s",
    "message-bytes": "64 MiB", "activation-bytes": "2 GiB", "static-bytes": ["1 GB", 2, 3, 4, 5, 6, 7, 8],
    "weight-stash-fraction": 0.25, "comm": "blocking", "format": "csv", "timeline": true})");
  CHECK(scenario.schedules == std::vector<std::string>{"gpipe", "1f1b"});
  CHECK(scenario.params.p == 8);
  CHECK(scenario.params.m == 32);
  CHECK(scenario.forward.at(0).value == Approx(1.5e-3));
  REQUIRE(scenario.backward.size() == 8);
  CHECK(scenario.backward[2].value == Approx(3e-3));
  CHECK(scenario.weight.at(0).value == Approx(1e-3));
  CHECK(scenario.latency.value == Approx(10e-6));
  CHECK(scenario.bandwidth.value == Approx(50e9));
  CHECK(scenario.message_bytes.at(0).value == 64LL << 20);
  CHECK(scenario.activation_bytes.at(0).value == 2LL << 30);
  CHECK(scenario.static_bytes.at(0).value == 1'000'000'000);
  CHECK(scenario.static_bytes.at(7).value == 8);
  CHECK(scenario.weight_stash_fraction == 0.25);
  CHECK(scenario.comm == ppsim::CommMode::kBlocking);
  CHECK(scenario.format == ppsim::OutputFormat::kCsv);
  CHECK(scenario.timeline);
  CHECK(scenario.source_of("forward") == "cfg.json: $.forward");
  CHECK(scenario.source_of("m") == "cfg.json: $.m");
}

TEST_CASE("a config error names the file and the JSON path", "[config][errors]") {
  const auto [text, expected] = GENERATE(table<std::string, std::string>({
      {R"([1, 2])", "cfg.json: $: must be a JSON object of settings, got array"},
      {R"({"forwrd": 1})", "cfg.json: $.forwrd: unknown key (did you mean \"forward\"?)"},
      {R"({"microbatches": 1})", "cfg.json: $.microbatches: unknown key (did you mean \"micro-batch\"?)"},
      {R"({"zzzz": 1})", "cfg.json: $.zzzz: unknown key (see ppsim run --help for the keys)"},
      {R"({"p": "four"})", "cfg.json: $.p: must be a positive integer, got string \"four\""},
      {R"({"p": 4.5})", "cfg.json: $.p: must be a positive integer, got number 4.5"},
      {R"({"m": 0})", "cfg.json: $.m: must be a positive integer, got 0"},
      {R"({"m": -3})", "cfg.json: $.m: must be a positive integer, got -3"},
      {R"({"m": 1e30})", "cfg.json: $.m: must be a positive integer, got number 1e+30"},
      {R"({"forward": true})", "cfg.json: $.forward: must be a time or a list of times, got boolean true"},
      {R"({"forward": [1, -1]})", "cfg.json: $.forward[1]: must not be negative, got -1"},
      {R"({"forward": []})", "cfg.json: $.forward: must not be an empty list"},
      {R"({"latency": "1 parsec"})", "cfg.json: $.latency: '1 parsec' has unknown unit 'parsec'"},
      {R"({"latency": [1]})", "cfg.json: $.latency: must be a time, got array [1]"},
      {R"({"bandwidth": -5})", "cfg.json: $.bandwidth: must be positive, got -5"},
      {R"({"activation-bytes": 1e300})", "cfg.json: $.activation-bytes: is absurdly large"},
      {R"({"schedule": 3})", "cfg.json: $.schedule: must be a schedule name or a non-empty list of names, got number 3"},
      {R"({"schedule": ["gpipe", 3]})", "cfg.json: $.schedule[1]: must be a schedule name (a string)"},
      {R"({"timeline": 1})", "cfg.json: $.timeline: must be true or false, got number 1"},
      {R"({"comm": "eventually"})", "cfg.json: $.comm: must be overlap, blocking or paired, got 'eventually'"},
      {R"({"weight-stash-fraction": "half"})",
       "cfg.json: $.weight-stash-fraction: must be a number between 0 and 1, got string \"half\""},
  }));
  INFO(text);
  CHECK(error_of(text).rfind(expected, 0) == 0);
}

TEST_CASE("malformed JSON is refused with the line and column", "[config][errors]") {
  const auto path = std::filesystem::temp_directory_path() / "ppsim_malformed.json";
  {
    std::ofstream file(path);
    file << "{\n  \"p\": 4,\n  \"m\": \n}\n";
  }
  ppsim::Scenario scenario;
  try {
    ppsim::apply_config_file(path.string(), scenario);
    FAIL("expected an InputError");
  } catch (const ppsim::InputError& error) {
    const std::string what = error.what();
    CHECK(what.rfind(path.string() + ": malformed JSON: parse error at line 4, column 1", 0) == 0);
    CHECK(what.find("[json.exception") == std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST_CASE("the nearest key is suggested only when it is close", "[config]") {
  CHECK(ppsim::nearest_key("backwards") == "backward");
  CHECK(ppsim::nearest_key("message_bytes") == "message-bytes");
  CHECK(ppsim::nearest_key("schedul") == "schedule");
  CHECK(ppsim::nearest_key("zzzzzzzzzzzz").empty());
}

TEST_CASE("the resolved scenario written as JSON reads back to the same scenario", "[config]") {
  const auto original = from_json(R"({"p": 6, "m": 10, "forward": [1, 1, 1, 1, 1, 1.5], "latency": 0.25,
                                      "bandwidth": 1000, "message-bytes": 4096, "comm": "blocking"})");
  auto written = ppsim::scenario_to_json(original, "1f1b");
  ppsim::Scenario reread;
  ppsim::apply_config_json(nlohmann::json::parse(written.dump()), "written.json", reread);
  CHECK(ppsim::scenario_to_json(reread, "1f1b") == written);
  CHECK(written["weight"] == 1.0);  // resolved: half of the default B = 2
  CHECK(written["bandwidth"] == 1000.0);
}
