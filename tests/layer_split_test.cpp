// SPDX-License-Identifier: Apache-2.0
// --layers-per-stage auto (study/run/layer_split.hpp): the balanced start, the neighbour-move search,
// Megatron's layout string, and, on pipelines small enough to try every split, the split it picks
// against the best there is.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "study/run/layer_split.hpp"
#include "support/cli_run.hpp"
#include "support/documented_figures.hpp"

using ppsim::test::cli;
using ppsim::test::source_path;

TEST_CASE("The balanced start evens the stages' loads, the head's stage taking fewer layers") {
  CHECK(ppsim::min_max_split(10, 4, 1, 0, 0) == std::vector<int>{3, 3, 2, 2});
  // A head worth two layers on the last stage: loads 3, 3, 3, 1 + 2.
  CHECK(ppsim::min_max_split(10, 4, 1, 0, 2) == std::vector<int>{3, 3, 3, 1});
  // An embedding worth one layer on the first: 2 + 1, 3, 3, 2.
  CHECK(ppsim::min_max_split(10, 4, 1, 1, 0) == std::vector<int>{2, 3, 3, 2});
  CHECK(ppsim::min_max_split(3, 4, 1, 0, 0).empty());  // a layer for every stage is not there
}

TEST_CASE("The search moves a layer at a time between neighbours while the step shortens") {
  // A judge whose step is the heaviest stage, stage 3 costing double: the best is 4, 4, 4, 2.
  int calls = 0;
  const ppsim::SplitJudge heaviest = [&](const std::vector<int>& split) {
    ++calls;
    double worst = 0;
    double spread = 0;
    for (std::size_t s = 0; s < split.size(); ++s) {
      const double load = split[s] * (s == 3 ? 2.0 : 1.0);
      worst = std::max(worst, load);
      spread += load * load;
    }
    return ppsim::SplitScore{worst, true, spread};
  };
  const ppsim::SplitSearch found = ppsim::search_layer_split({2, 3, 4, 5}, heaviest);
  CHECK(found.score.step_time == 4);
  CHECK(found.layers_per_stage[3] == 2);
  CHECK(found.evaluated == calls);
  // Fitting comes first: a split that does not fit never replaces one that does, however fast.
  const ppsim::SplitJudge fits_even = [](const std::vector<int>& split) {
    return ppsim::SplitScore{static_cast<double>(split[0]), split[0] == split[1], 0};
  };
  CHECK(ppsim::search_layer_split({3, 3}, fits_even).layers_per_stage == std::vector<int>{3, 3});
}

TEST_CASE("Megatron's pipeline layout names the embedding, each layer, the MTP layers and the loss by stage") {
  CHECK(ppsim::megatron_layout({2, 3}, 0) == "Ett|tttL");
  CHECK(ppsim::megatron_layout({1, 1, 2}, 1) == "Et|t|ttmL");
}

namespace {

double step_time(const std::vector<std::string>& args) {
  const ppsim::test::CliRun run = cli(args);
  REQUIRE(run.status == 0);
  return nlohmann::json::parse(run.out)["training"]["step_time"].get<double>();
}

// Every split of `layers` into `stages` parts of at least one.
void compositions(int layers, int stages, std::vector<int>& prefix, std::vector<std::vector<int>>& out) {
  if (stages == 1) {
    prefix.push_back(layers);
    out.push_back(prefix);
    prefix.pop_back();
    return;
  }
  for (int first = 1; first <= layers - (stages - 1); ++first) {
    prefix.push_back(first);
    compositions(layers - first, stages - 1, prefix, out);
    prefix.pop_back();
  }
}

}  // namespace

TEST_CASE("On pipelines small enough to try every split, auto is within 0.1% of the best and never behind the even one",
          "[slow]") {
  const auto [schedule, p, v] = GENERATE(std::tuple<std::string, int, int>{"1f1b", 4, 1},
                                         std::tuple<std::string, int, int>{"interleaved-1f1b", 2, 2},
                                         std::tuple<std::string, int, int>{"zbv", 2, 2},
                                         std::tuple<std::string, int, int>{"interleaved-1f1b", 4, 2});
  INFO(schedule << " p=" << p << " v=" << v);
  const std::vector<std::string> base = {"run", "--model", source_path("tests/data/models/llama-12-layers.json"), "-s",
                                         schedule, "-p", std::to_string(p), "-v", std::to_string(v), "-m", "8",
                                         "--seq", "4096", "--format", "json"};
  auto with = [&](const std::string& split) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--layers-per-stage", split});
    return args;
  };
  const double chosen = step_time(with("auto"));
  std::vector<std::vector<int>> splits;
  std::vector<int> prefix;
  compositions(12, p * v, prefix, splits);
  double best = 1e300;
  for (const std::vector<int>& split : splits) {
    std::string text;
    for (const int layers : split) text += (text.empty() ? "" : ",") + std::to_string(layers);
    best = std::min(best, step_time(with(text)));
  }
  CHECK(chosen <= best * 1.001);
  CHECK(chosen <= step_time(base));
}

TEST_CASE("auto's split is the report's: the scenario reruns it, and the layout string says it in Megatron's terms") {
  const ppsim::test::CliRun run =
      cli({"run", "--model", "llama3.1-8b", "-p", "4", "-m", "8", "--layers-per-stage", "auto", "--format", "json"});
  REQUIRE(run.status == 0);
  const nlohmann::json result = nlohmann::json::parse(run.out);
  const std::vector<int> split = result["scenario"]["layers-per-stage"].get<std::vector<int>>();
  REQUIRE(split.size() == 4);
  std::string layout = "E";
  for (std::size_t s = 0; s < split.size(); ++s) {
    if (s > 0) layout += "|";
    layout += std::string(static_cast<std::size_t>(split[s]), 't');
  }
  CHECK(result["training"]["layer_split"]["pipeline_model_parallel_layout"] == layout + "L");
  // torchtitan's module lists say the same split: each layer once, in order, the embedding first and
  // the norm and head last.
  const auto modules = result["training"]["layer_split"]["module_fqns_per_model_part"];
  REQUIRE(modules.size() == split.size());
  int layer = 0;
  for (std::size_t s = 0; s < split.size(); ++s) {
    std::vector<std::string> expected;
    if (s == 0) expected.push_back("tok_embeddings");
    for (int k = 0; k < split[s]; ++k) expected.push_back("layers." + std::to_string(layer++));
    if (s + 1 == split.size()) expected.insert(expected.end(), {"norm", "output"});
    CHECK(modules[s].get<std::vector<std::string>>() == expected);
  }
  CHECK(layer == 32);
  // The head's stage carries fewer layers than the even 8.
  CHECK(split.back() < 8);
  std::string text;
  for (const int layers : split) text += (text.empty() ? "" : ",") + std::to_string(layers);
  const ppsim::test::CliRun again =
      cli({"run", "--model", "llama3.1-8b", "-p", "4", "-m", "8", "--layers-per-stage", text, "--format", "json"});
  REQUIRE(again.status == 0);
  CHECK(nlohmann::json::parse(again.out)["training"]["step_time"] == result["training"]["step_time"]);
  // Refused where it cannot give every stage a layer, naming the flag.
  CHECK(cli({"run", "--model", source_path("tests/data/models/llama-12-layers.json"), "-p", "8", "-v", "2", "-s",
             "interleaved-1f1b", "--layers-per-stage", "auto"})
            .err == "ppsim: error: --layers-per-stage: auto gives every stage a layer, and 12 layers do not fill 16 "
                    "stages\n");
}
