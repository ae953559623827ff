// SPDX-License-Identifier: Apache-2.0
// ppsim check, --expect and formulas --check's narrowing: what a CI job pins about a configuration.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/cli_run.hpp"

using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::read_whole;
using ppsim::test::TempDir;

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A baseline written by the CLI itself.
std::string baseline(const TempDir& dir, const std::vector<std::string>& args, const std::string& name = "base.json") {
  const CliRun run = cli(args);
  REQUIRE(run.status == 0);
  write(dir.file(name), run.out);
  return dir.file(name);
}

}  // namespace

TEST_CASE("check passes a baseline of every example config with one line", "[cli][check]") {
  // The stored scenario of each result (transformer studies and per-stage lists included) reads
  // back as a config and gives the same figures, to the last bit.
  TempDir dir("check-examples");
  for (const auto& entry : std::filesystem::directory_iterator(std::string(PPSIM_SOURCE_DIR) + "/configs/examples")) {
    INFO(entry.path());
    const std::string path = baseline(dir, {"compare", "-c", entry.path().string(), "--format", "json"});
    const CliRun check = cli({"check", path});
    CHECK(check.status == 0);
    CHECK(check.err.empty());
    CHECK(check.out.starts_with("ppsim check: "));
    CHECK(check.out.find(" within rtol 1e-09, atol 0 of " + path + "\n") != std::string::npos);
    CHECK(std::count(check.out.begin(), check.out.end(), '\n') == 1);
  }
}

TEST_CASE("check passes a run of every registry schedule, and a timeline's every span", "[cli][check]") {
  TempDir dir("check-schedules");
  const std::string schedule = GENERATE("gpipe", "1f1b", "interleaved-1f1b", "looped-bfs", "zb-h1", "zb-h2", "zbv",
                                        "dualpipev");
  INFO(schedule);
  const std::string path = baseline(dir, {"run", "-s", schedule, "-p", "4", "-m", "8", "--latency", "0.1",
                                          "--bandwidth", "100", "--message-bytes", "25", "--activation-bytes", "1 GiB",
                                          "--timeline", "--format", "json"});
  const CliRun check = cli({"check", path});
  CHECK(check.status == 0);
  CHECK(check.out.find("figures of 1 schedule within") != std::string::npos);
}

TEST_CASE("check names each figure that moved with its baseline, new value and change, and exits 1", "[cli][check]") {
  TempDir dir("check-moved");
  const std::string path = baseline(dir, {"compare", "-s", "gpipe,1f1b", "-p", "4", "-m", "8", "--format", "json"});
  nlohmann::ordered_json stored = nlohmann::ordered_json::parse(read_whole(path));
  stored[1]["makespan"] = 30.0;                // 1F1B's is 33: +10%
  stored[0]["per_device"][2]["busy"] = 24.0;   // GPipe's is 24: unchanged
  stored[0]["per_device"][3]["busy"] = 20.0;   // 24: +20%
  stored[1]["per_link"].erase(stored[1]["per_link"].size() - 1);  // a figure the baseline lacks
  write(path, stored.dump(2));
  const CliRun check = cli({"check", path});
  CHECK(check.status == 1);
  CHECK(check.err.empty());
  const std::string expected_first = "ppsim check: 3 of ";
  CHECK(check.out.starts_with(expected_first));
  CHECK(check.out.find("moved beyond rtol 1e-09, atol 0 from " + path) != std::string::npos);
  CHECK(check.out.find("[gpipe] per_device[3].busy") != std::string::npos);
  CHECK(check.out.find("+20%") != std::string::npos);
  CHECK(check.out.find("[1f1b] makespan") != std::string::npos);
  CHECK(check.out.find("+10%") != std::string::npos);
  CHECK(check.out.find("(none)") != std::string::npos);  // the link the baseline lost
  CHECK(check.out.find("per_device[2]") == std::string::npos);

  SECTION("a tolerance wide enough passes them, --only narrows to the figures named") {
    CHECK(cli({"check", path, "--rtol", "0.25", "--only", "makespan,busy"}).status == 0);
    const CliRun only = cli({"check", path, "--only", "makespan"});
    CHECK(only.status == 1);
    CHECK(only.out.starts_with("ppsim check: 1 of 2 figures of 2 schedules moved"));
    CHECK(cli({"check", path, "--atol", "3.5", "--only", "makespan"}).status == 0);
  }
}

TEST_CASE("check lists the training figures first and sums up the per-device ones with the largest", "[cli][check]") {
  TempDir dir("check-order");
  const std::string path = baseline(dir, {"run", "--model", "llama3.1-8b", "-p", "4", "-m", "8", "--format", "json"});
  nlohmann::ordered_json stored = nlohmann::ordered_json::parse(read_whole(path));
  stored["makespan"] = stored["makespan"].get<double>() * 1.05;
  stored["training"]["step_time"] = stored["training"]["step_time"].get<double>() * 1.035;
  for (std::size_t d = 0; d < stored["per_device"].size(); ++d) {
    stored["per_device"][d]["busy"] = stored["per_device"][d]["busy"].get<double>() * (1 + 0.01 * static_cast<double>(d + 1));
  }
  write(path, stored.dump(2));
  const CliRun check = cli({"check", path});
  CHECK(check.status == 1);
  const std::size_t step = check.out.find("[1f1b] training.step_time");
  const std::size_t makespan = check.out.find("[1f1b] makespan");
  const std::size_t summary = check.out.find("4 per-device, per-link and per-stage figures moved:");
  const std::size_t largest = check.out.find("[1f1b] per_device[3].busy");
  const std::size_t smallest = check.out.find("[1f1b] per_device[0].busy");
  REQUIRE(step != std::string::npos);
  CHECK(step < makespan);
  CHECK(makespan < summary);
  CHECK(summary < largest);
  CHECK(largest < smallest);
  CHECK(check.out.find("-3.85%") != std::string::npos);  // device 3's busy: 1/1.04 - 1
}

TEST_CASE("check names what changed under the figures first: ppsim, the model, the hardware profile", "[cli][check]") {
  TempDir dir("check-provenance");
  const std::string path = baseline(dir, {"run", "--model", "llama3.1-8b", "-p", "2", "-m", "4", "--format", "json"});
  nlohmann::ordered_json stored = nlohmann::ordered_json::parse(read_whole(path));
  const nlohmann::ordered_json provenance = stored["provenance"];
  REQUIRE(provenance["ppsim"].is_string());
  CHECK(provenance["model"]["name"] == "llama3.1-8b");
  CHECK(provenance["hardware"]["name"] == "H100-SXM5-80GB");
  CHECK(provenance["hardware"]["fingerprint"].get<std::string>().size() == 16);

  SECTION("a baseline from another ppsim and hardware says so before the figures") {
    stored["provenance"]["ppsim"] = "0.0.9";
    stored["provenance"]["revision"] = "abc123";
    stored["provenance"]["hardware"]["fingerprint"] = "0000000000000000";
    stored["training"]["step_time"] = 1.0;
    write(path, stored.dump(2));
    const CliRun check = cli({"check", path});
    CHECK(check.status == 1);
    const std::size_t ppsim_line = check.out.find("\n  ppsim changed 0.0.9 -> " + provenance["ppsim"].get<std::string>() +
                                                  " (git abc123 -> ");
    const std::size_t hardware_line = check.out.find("\n  the hardware profile changed (H100-SXM5-80GB)\n");
    REQUIRE(ppsim_line != std::string::npos);
    REQUIRE(hardware_line != std::string::npos);
    CHECK(ppsim_line < hardware_line);
    CHECK(hardware_line < check.out.find("training.step_time"));
    CHECK(check.out.find("the model changed") == std::string::npos);
  }
  SECTION("a baseline without provenance passes and says it cannot tell") {
    stored.erase("provenance");
    write(path, stored.dump(2));
    const CliRun check = cli({"check", path});
    CHECK(check.status == 0);
    CHECK(check.out.find("(although the baseline does not say which ppsim wrote it") != std::string::npos);
  }
  SECTION("the same model from a file has the preset's fingerprint, an edited one does not") {
    nlohmann::json model = nlohmann::json::parse(read_whole(std::string(PPSIM_SOURCE_DIR) + "/configs/models/llama3.1-8b.json"));
    write(dir.file("same.json"), model.dump());
    model["ffn_hidden"] = 14337;
    write(dir.file("edited.json"), model.dump());
    const auto fingerprint_of = [&](const std::string& file) {
      const CliRun run = cli({"run", "--model", file, "-p", "2", "-m", "4", "--format", "json"});
      return nlohmann::json::parse(run.out)["provenance"]["model"]["fingerprint"].get<std::string>();
    };
    CHECK(fingerprint_of(dir.file("same.json")) == provenance["model"]["fingerprint"].get<std::string>());
    CHECK(fingerprint_of(dir.file("edited.json")) != provenance["model"]["fingerprint"].get<std::string>());
  }
}

TEST_CASE("check refuses a bad baseline with exit 2 and one line naming it", "[cli][check]") {
  TempDir dir("check-bad");
  const std::string good = baseline(dir, {"run", "-s", "1f1b", "-p", "2", "-m", "2", "--format", "json"}, "good.json");
  const auto [text, message] = GENERATE(table<std::string, std::string>({
      {"not json", "malformed JSON"},
      {"[]", "$: has no result"},
      {"[1, 2]", "$[0]: must be an object"},
      {"42", "$: must be an object or an array of objects"},
      {R"({"schedule": "1f1b"})", "$: has no \"scenario\" object"},
      {R"({"scenario": {"p": 4}})", "$: has no \"schedule\""},
      {R"({"schedule": "1f1b", "scenario": {"p": 0}})", "$.scenario: $.p: must be a positive integer, got 0"},
  }));
  INFO(text);
  write(dir.file("bad.json"), text);
  const CliRun check = cli({"check", dir.file("bad.json")});
  CHECK(check.status == 2);
  CHECK(check.out.empty());
  CHECK(check.err.find(message) != std::string::npos);
  CHECK(std::count(check.err.begin(), check.err.end(), '\n') == 1);
  for (const auto& [flag, value, error] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--rtol", "-1", "--rtol: must be a finite number >= 0"},
           {"--atol", "nan", "--atol: must be a finite number >= 0"},
           {"--only", "makespn", "--only: " + good + " has no figure 'makespn' (did you mean \"makespan\"?)"}}) {
    const CliRun refused = cli({"check", good, flag, value});
    CHECK(refused.status == 2);
    CHECK(refused.err == "ppsim: error: " + error + "\n");
  }
  CHECK(cli({"check", dir.file("missing.json")}).status == 2);
}

TEST_CASE("An expectation passes quietly when every schedule meets it and names the one that does not", "[cli][check]") {
  CHECK(cli({"run", "-s", "1f1b", "-p", "4", "-m", "8", "--expect", "bubble_ratio < 0.3", "--expect", "fits"}).status ==
        0);
  const CliRun failed = cli({"compare", "-s", "1f1b,zb-h1", "-p", "4", "-m", "8", "--expect", "bubble_ratio <= 0.2"});
  CHECK(failed.status == 1);
  CHECK_FALSE(failed.out.empty());  // the figures are printed all the same
  CHECK(failed.err == "ppsim: --expect \"bubble_ratio <= 0.2\" failed: 1f1b has bubble_ratio 0.2727272727272727\n");
  const CliRun memory = cli({"run", "-s", "gpipe", "-p", "4", "-m", "8", "--activation-bytes", "1 GiB", "--expect",
                             "peak_memory_bytes < 7.5 GiB"});
  CHECK(memory.status == 1);
  CHECK(memory.err == "ppsim: --expect \"peak_memory_bytes < 7.5 GiB\" failed: gpipe has peak_memory_bytes 8 GiB "
                      "(8589934592 bytes)\n");
  CHECK(cli({"run", "-s", "1f1b", "-p", "4", "-m", "8", "--activation-bytes", "1 GiB", "--expect",
             "peak_memory_bytes <= 4 GiB"})
            .status == 0);
  CHECK(cli({"run", "-s", "1f1b", "-p", "4", "-m", "8", "--expect", "makespan == 33", "--expect", "makespan > 32.5",
             "--expect", "makespan >= 33 s", "--expect", "makespan != 1"})
            .status == 0);
}

TEST_CASE("An expectation takes the names check prints, percentages of ratios and k M G on counts", "[cli][check]") {
  // 1F1B p=4 m=8: bubble 3/11 = 27.3%, makespan 33, throughput 8/33 micro-batches per unit.
  const std::vector<std::string> run = {"run", "-s", "1f1b", "-p", "4", "-m", "8"};
  const auto with = [&](const std::string& expectation) {
    std::vector<std::string> args = run;
    args.insert(args.end(), {"--expect", expectation});
    return cli(args).status;
  };
  CHECK(with("bubble_ratio < 28%") == 0);
  CHECK(with("bubble_ratio < 27%") == 1);
  CHECK(with("[1f1b] bubble_ratio <= 27.3%") == 0);
  CHECK(with("throughput > 0.2") == 0);
  CHECK(with("throughput > 1k") == 1);
  const std::vector<std::string> model = {"run",  "--model", "llama3.1-8b", "-p", "2", "-m",
                                          "4",    "-s",      "1f1b"};
  const auto model_with = [&](const std::string& expectation) {
    std::vector<std::string> args = model;
    args.insert(args.end(), {"--expect", expectation});
    return cli(args);
  };
  // step 0.411 s, 19.9 k tokens per second, MFU 48.6% on the H100 preset.
  CHECK(model_with("training.step_time < 1 s").status == 0);
  CHECK(model_with("[1f1b] training.mfu >= 40%").status == 0);
  CHECK(model_with("tokens_per_second > 15k").status == 0);
  CHECK(model_with("tokens_per_second > 0.02M").status == 1);
  const CliRun failed = model_with("training.mfu >= 60%");
  CHECK(failed.status == 1);
  CHECK(failed.err.starts_with("ppsim: --expect \"training.mfu >= 60%\" failed: 1f1b has mfu 0.48"));
}

TEST_CASE("An expectation that cannot be read is refused with exit 2 before simulating", "[cli][check]") {
  const auto [expression, message] = GENERATE(table<std::string, std::string>({
      {"bubbel_ratio < 0.3", "--expect: unknown figure 'bubbel_ratio' in 'bubbel_ratio < 0.3' (did you mean \"bubble_ratio\"?); the figures: makespan, bubble_ratio, "},
      {"bubble_ratio", "--expect: bubble_ratio needs a comparison, e.g. <= 0.1 in 'bubble_ratio'"},
      {"bubble_ratio =< 0.1", "--expect: the comparison must be one of < <= > >= == != in 'bubble_ratio =< 0.1'"},
      {"bubble_ratio <", "--expect: a value must follow the comparison in 'bubble_ratio <'"},
      {"bubble_ratio < tiny",
       "--expect: the value must be a finite number (or a percentage, 40%), got 'tiny' in 'bubble_ratio < tiny'"},
      {"makespan < 3%", "--expect: makespan is a time"},
      {"stage_imbalance < 3%", "--expect: stage_imbalance is not a ratio: write it without % in 'stage_imbalance < 3%'"},
      {"mfu > 4k", "--expect: mfu is not a count: write it without k in 'mfu > 4k'"},
      {"training.bubbel_ratio < 1", "--expect: unknown figure 'training.bubbel_ratio'"},
      {"peak_memory_bytes < 80 GiBs", "--expect: peak_memory_bytes is bytes"},
      {"fits < 1", "--expect: fits is true or false: write it alone or as !fits in 'fits < 1'"},
      {"!makespan < 3", "--expect: '!' negates a switch such as fits, not a comparison in '!makespan < 3'"},
  }));
  INFO(expression);
  const CliRun run = cli({"run", "-s", "1f1b", "-p", "4", "-m", "8", "--expect", expression});
  CHECK(run.status == 2);
  CHECK(run.out.empty());
  CHECK(run.err.starts_with("ppsim: error: " + message));
}

TEST_CASE("sweep --expect holds for the top point, named when it does not", "[cli][check]") {
  TempDir dir("check-sweep");
  write(dir.file("study.json"),
        R"({"axes": {"schedule": ["gpipe", "1f1b", "zb-h1"], "p": [4], "m": [4, 8, 16]}, "objective": "bubble"})");
  CHECK(cli({"sweep", dir.file("study.json"), "-j", "1", "--expect", "bubble_ratio < 0.1", "--expect", "fits"}).status ==
        0);
  const CliRun failed = cli({"sweep", dir.file("study.json"), "-j", "1", "--expect", "bubble_ratio < 0.05"});
  CHECK(failed.status == 1);
  CHECK(failed.err.starts_with("ppsim: --expect \"bubble_ratio < 0.05\" failed: the top point, zb-h1 p=4 v=1 m=16"));
}

TEST_CASE("formulas --check narrows its grid to -s, -p, -v and -m", "[cli][check]") {
  const CliRun all = cli({"formulas", "--check"});
  REQUIRE(all.status == 0);
  const CliRun one = cli({"formulas", "--check", "-s", "1f1b", "-p", "4"});
  CHECK(one.status == 0);
  // 1F1B's closed forms at p = 4, v = 1, m = 1..16, four cost ratios and two latencies.
  CHECK(one.out.find("1f1b: ") == 0);
  CHECK(one.out.find("zbv") == std::string::npos);
  CHECK(one.out.find("ring attention") == std::string::npos);  // no schedule: only with the whole grid
  const CliRun sized = cli({"formulas", "--check", "-s", "1f1b,zbv", "-p", "4", "-m", "8"});
  CHECK(sized.status == 0);
  CHECK(sized.out.find("1f1b: ") != std::string::npos);
  CHECK(sized.out.find("zbv: ") != std::string::npos);
  CHECK(sized.out.find("gpipe") == std::string::npos);
  const CliRun nothing = cli({"formulas", "--check", "-s", "custom"});
  CHECK(nothing.status == 2);
  CHECK(nothing.err ==
        "ppsim: error: formulas --check: no closed form holds for the schedules and sizes given (-s, -p, -v, -m)\n");
}

TEST_CASE("A stored scenario writes what has no value as null, and reads it back as the same scenario", "[cli][check]") {
  // Unlimited bandwidth and the default overlap are null, not a word beside numbers, so that a JSON
  // reader sees one type per key; either way the scenario re-runs to the same figures.
  TempDir dir("check-null");
  const std::string free = baseline(dir, {"run", "-s", "1f1b", "-p", "4", "-m", "8", "--format", "json"}, "free.json");
  const auto free_scenario = nlohmann::json::parse(read_whole(free))["scenario"];
  CHECK(free_scenario["bandwidth"].is_null());
  CHECK(free_scenario["overlap"].is_null());
  CHECK(cli({"check", free}).status == 0);
  const std::string slow = baseline(
      dir, {"run", "-s", "1f1b", "-p", "4", "-m", "8", "--bandwidth", "100", "--overlap", "2", "--format", "json"},
      "slow.json");
  const auto slow_scenario = nlohmann::json::parse(read_whole(slow))["scenario"];
  CHECK(slow_scenario["bandwidth"] == 100.0);
  CHECK(slow_scenario["overlap"] == 2.0);
  CHECK(cli({"check", slow}).status == 0);
  // A config may say so too.
  write(dir.file("null.json"), R"({"schedule": "1f1b", "p": 4, "m": 8, "bandwidth": null, "overlap": null})");
  CHECK(cli({"run", "-c", dir.file("null.json"), "--format", "json"}).out == read_whole(free));
}
