// SPDX-License-Identifier: Apache-2.0
// ppsim plan (study/plan/): the bounds never cut a layout that could have won, the result does not
// depend on the threads, every proposed layout runs as proposed and obeys the frameworks' rules, its
// launch settings say the same split, and bad input gets one line naming what is wrong.
#include <catch2/catch.hpp>
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "study/input/config.hpp"
#include "study/plan/plan_launch.hpp"
#include "study/plan/plan_space.hpp"
#include "study/run/transformer_study.hpp"
#include "support/cli_run.hpp"
#include "support/documented_figures.hpp"

using ppsim::test::cli;
using ppsim::test::source_path;

namespace {

std::string twelve_layers() { return source_path("tests/data/models/llama-12-layers.json"); }

// A plan of the 12-layer test model on 16 GPUs, with `extra` flags.
nlohmann::json plan_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"plan", "--model", twelve_layers(), "--gpus", "16", "--global-batch", "64",
                                "--seq", "4096", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto run = cli(args);
  REQUIRE(run.status == 0);
  REQUIRE(run.err.empty());
  return nlohmann::json::parse(run.out);
}

}  // namespace

TEST_CASE("No simulated layout's step is shorter than the lower bound that ordered the search") {
  const auto extra = GENERATE(std::vector<std::string>{}, std::vector<std::string>{"--framework", "megatron", "-p", "4"},
                              std::vector<std::string>{"-p", "2", "--recompute", "full"});
  const nlohmann::json plan = plan_json(extra);
  REQUIRE(plan["points"].size() > 10);
  for (const auto& point : plan["points"]) {
    INFO(point.dump());
    CHECK(point["step_time"].get<double>() >= point["step_time_bound"].get<double>() * (1 - 1e-12));
  }
  // The counts add up: every simulated layout is a point, and no layout is counted twice before.
  const auto& counts = plan["counts"];
  CHECK(counts["simulated"].get<std::size_t>() == plan["points"].size());
  CHECK(counts["enumerated"].get<std::int64_t>() >= counts["refused"].get<std::int64_t>() +
                                                         counts["over_memory"].get<std::int64_t>() +
                                                         counts["pruned"].get<std::int64_t>());
  CHECK(counts["pipelines"].get<std::int64_t>() <= counts["simulated"].get<std::int64_t>());
}

TEST_CASE("A plan is the same bytes for any number of threads") {
  for (const std::string format : {"table", "json"}) {
    const std::vector<std::string> base{"plan", "--model", twelve_layers(), "--gpus", "16", "--global-batch", "64",
                                        "--seq", "4096", "--format", format};
    auto with_jobs = [&](const char* jobs) {
      std::vector<std::string> args = base;
      args.insert(args.end(), {"-j", jobs});
      return cli(args);
    };
    const auto one = with_jobs("1");
    const auto three = with_jobs("3");
    REQUIRE(one.status == 0);
    CHECK(one.out == three.out);
  }
}

TEST_CASE("Every proposed layout reruns as proposed from its ppsim config and keeps the frameworks' rules") {
  const nlohmann::json plan = plan_json({"--framework", "megatron", "-p", "2", "--top", "3"});
  REQUIRE(plan["layouts"].size() == 3);
  ppsim::test::TempDir dir("plan-rerun");
  for (const auto& entry : plan["layouts"]) {
    const auto& layout = entry["layout"];
    INFO(layout["label"].get<std::string>());
    const int t = layout["t"];
    const std::int64_t b = layout["micro_batch"];
    const int d = layout["d"];
    CHECK(32 % t == 0);  // the heads
    CHECK(8 % t == 0);   // within one node of eight
    CHECK(64 % (b * d) == 0);
    CHECK(t * layout["context_parallel"].get<int>() * layout["p"].get<int>() * d == 16);
    const std::string config = dir.file("layout.json");
    nlohmann::json settings = entry["launch"]["ppsim_config"];
    settings["format"] = "json";
    { std::ofstream(config) << settings.dump(); }
    const auto rerun = cli({"run", "-c", config});
    REQUIRE(rerun.status == 0);
    const double step = nlohmann::json::parse(rerun.out)["training"]["step_time"];
    CHECK(step == Approx(entry["step_time"].get<double>()).epsilon(1e-12));
    // Its Megatron-LM arguments name the same degrees.
    const std::string megatron = entry["launch"]["megatron"];
    CHECK(megatron.find("--tensor-model-parallel-size " + std::to_string(t)) != std::string::npos);
    CHECK(megatron.find("--pipeline-model-parallel-size 2") != std::string::npos);
    CHECK(megatron.find("--micro-batch-size " + std::to_string(b)) != std::string::npos);
  }
}

TEST_CASE("A layout flag given to plan pins its axis") {
  const nlohmann::json plan = plan_json({"-t", "2", "-p", "2", "--recompute", "selective"});
  REQUIRE(!plan["points"].empty());
  for (const auto& point : plan["points"]) {
    const std::string label = point["layout"];
    INFO(label);
    CHECK(label.starts_with("t2 "));
    CHECK(label.find(" p2 ") != std::string::npos);
    CHECK(label.find(" selective ") != std::string::npos);
  }
}

TEST_CASE("Megatron's accounted split counts the embedding and the loss as a layer each") {
  CHECK(ppsim::accounted_split(126, 16) == std::vector<int>{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7});
  CHECK(ppsim::accounted_split(80, 8).empty());  // 82 stages' worth does not divide by 8
  CHECK(ppsim::accounted_split(10, 2).empty());  // two stages would be all embedding and loss
}

TEST_CASE("An uneven split reads the same in Megatron's layout string and torchtitan's module lists") {
  ppsim::Scenario given;
  ppsim::apply_config_json({{"model", twelve_layers()}, {"global-batch", 64}, {"seq", 4096}}, "test", given);
  const ppsim::Scenario base = ppsim::resolve_transformer_scenario(given);
  ppsim::PlanLayout layout;
  layout.p = 2;
  layout.d = 8;
  layout.schedule = "1f1b";
  layout.layers_per_stage = {7, 5};
  const ppsim::LaunchFlags megatron = ppsim::launch_flags(base, layout);
  CHECK(megatron.megatron.find("--pipeline-model-parallel-layout \"Ettttttt|tttttL\"") != std::string::npos);
  CHECK(megatron.torchtitan.empty());
  CHECK(megatron.ppsim_command.find("--layers-per-stage 7,5") != std::string::npos);
  layout.fsdp = true;
  const ppsim::LaunchFlags torchtitan = ppsim::launch_flags(base, layout);
  CHECK(torchtitan.megatron.empty());
  CHECK(torchtitan.torchtitan.find("pipeline_parallel_schedule = \"1F1B\"") != std::string::npos);
  CHECK(torchtitan.torchtitan.find("[\"tok_embeddings\", \"layers.0\", \"layers.1\", \"layers.2\", \"layers.3\", "
                                   "\"layers.4\", \"layers.5\", \"layers.6\"], [\"layers.7\"") != std::string::npos);
  CHECK(torchtitan.torchtitan.find("\"layers.11\", \"norm\", \"output\"]]") != std::string::npos);
}

TEST_CASE("The automatic split of Llama 3 70B at TP4 PP8 VP5 is no slower than Megatron-Bridge's hand-tuned one") {
  // NVIDIA-NeMo/Megatron-Bridge, src/megatron/bridge/perf_recipes/llama/h100/llama3.py,
  // llama3_70b_pretrain_64gpu_h100_fp8cs_config (commit 56ae11d): "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL".
  std::vector<int> hand(40, 2);
  hand[35] = 3;
  hand[39] = 1;
  std::string hand_list;
  for (const int layers : hand) hand_list += (hand_list.empty() ? "" : ",") + std::to_string(layers);
  auto step = [&](const std::string& split) {
    std::vector<std::string> args{"run", "--model", "llama3.1-70b", "--seq", "8192", "--global-batch", "256",
                                  "--precision", "fp8", "-t", "4", "-p", "8", "-v", "5", "-d", "2",
                                  "--sequence-parallel", "--distributed-optimizer", "-s", "interleaved-1f1b",
                                  "--format", "json"};
    if (!split.empty()) args.insert(args.end(), {"--layers-per-stage", split});
    const auto run = cli(args);
    REQUIRE(run.status == 0);
    return nlohmann::json::parse(run.out)["training"]["step_time"].get<double>();
  };
  const double uniform = step("");
  const double tuned = step(hand_list);
  const double automatic = step("auto");
  CHECK(tuned < uniform);
  CHECK(automatic <= tuned);
}

TEST_CASE("Bad plan input gets one line naming the flag, exit 2 and nothing on stdout") {
  const auto [extra, named] = GENERATE(table<std::vector<std::string>, std::string>({
      {{"--global-batch", "64"}, "--gpus: plan needs the GPU count"},
      {{"--gpus", "0", "--global-batch", "64"}, "--gpus: needs 1 to"},
      {{"--gpus", "16"}, "--global-batch: plan needs the global batch"},
      {{"--gpus", "16", "--global-batch", "64", "-m", "8"}, "-m: plan derives m"},
      {{"--gpus", "16", "--global-batch", "64", "--format", "csv"}, "--format: plan writes table or json"},
      {{"--gpus", "16", "--global-batch", "64", "--objective", "fastest"}, "--objective: 'fastest' is not"},
      {{"--gpus", "16", "--global-batch", "64", "--framework", "deepspeed"}, "--framework: 'deepspeed' is not"},
      {{"--gpus", "16", "--global-batch", "64", "--top", "0"}, "--top: needs 1 to 100"},
      {{"--gpus", "16", "--global-batch", "64", "--layers-per-stage", "6,6"}, "--layers-per-stage: plan chooses"},
      {{"--gpus", "16", "--global-batch", "64", "--objective", "p99_step_time"}, "--objective: p99_step_time needs"},
      {{"--gpus", "16", "--global-batch", "64", "--objective", "goodput"}, "--objective: goodput needs --mtbf"},
      {{"--gpus", "sixteen", "--global-batch", "64"}, "--gpus: needs a whole number"},
  }));
  std::vector<std::string> args{"plan", "--model", twelve_layers()};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto run = cli(args);
  INFO(run.err);
  CHECK(run.status == 2);
  CHECK(run.out.empty());
  CHECK(run.err.starts_with("ppsim: error: " + named));
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
}

TEST_CASE("A plan file holds the plan's keys beside the scenario's, and flags override it") {
  ppsim::test::TempDir dir("plan-file");
  const std::string file = dir.file("plan.json");
  {
    std::ofstream(file) << nlohmann::json{{"model", twelve_layers()}, {"gpus", 16}, {"global-batch", 64},
                                          {"seq", 4096}, {"top", 2}, {"framework", "megatron"}}
                               .dump();
  }
  const auto run = cli({"plan", file, "--format", "json", "--top", "1"});
  REQUIRE(run.status == 0);
  const auto plan = nlohmann::json::parse(run.out);
  CHECK(plan["layouts"].size() == 1);
  for (const auto& point : plan["points"]) {
    const std::string label = point["layout"];
    CHECK(label.find("fsdp") == std::string::npos);
  }
  { std::ofstream(file) << R"({"gpus": "many", "model": "x"})"; }
  const auto bad = cli({"plan", file});
  CHECK(bad.status == 2);
  CHECK(bad.err.find(file + ": $.gpus: needs a whole number") != std::string::npos);
}

TEST_CASE("The plan page draws every simulated layout and the Pareto front, and is written before stdout") {
  ppsim::test::TempDir dir("plan-page");
  const std::string page = dir.file("plan.html");
  const auto run = cli({"plan", "--model", twelve_layers(), "--gpus", "16", "--global-batch", "64", "--seq", "4096",
                        "--html", page});
  REQUIRE(run.status == 0);
  const std::string html = ppsim::test::read_whole(page);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("<path d=\"M") != std::string::npos);
  CHECK(html.find("Best layouts") != std::string::npos);
  const auto unwritable = cli({"plan", "--model", twelve_layers(), "--gpus", "16", "--global-batch", "64", "--html",
                               dir.file("missing/plan.html")});
  CHECK(unwritable.status == 2);
  CHECK(unwritable.out.empty());
}
