// SPDX-License-Identifier: Apache-2.0
// The names users bring from elsewhere: a config's long option names and Megatron-LM's and
// torchtitan's names for the same settings, enum values in any case, and times that mix units
// with plain numbers (refused).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/cli_run.hpp"

using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::TempDir;

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The resolved scenario of `ppsim run -c config --format json`.
nlohmann::json scenario_of(const TempDir& dir, const std::string& config) {
  write(dir.file("config.json"), config);
  const CliRun run = cli({"run", "-c", dir.file("config.json"), "--format", "json"});
  INFO(run.err);
  REQUIRE(run.status == 0);
  return nlohmann::json::parse(run.out)["scenario"];
}

}  // namespace

TEST_CASE("A config takes the long option names and Megatron-LM's names for ppsim's keys", "[cli][names]") {
  TempDir dir("names-megatron");
  const nlohmann::json ours = scenario_of(dir, R"({"model": "llama3.1-8b", "t": 2, "p": 2, "d": 2, "m": 4,
      "micro-batch": 2, "seq": 4096, "distributed-optimizer": true, "recompute": "selective"})");
  const nlohmann::json long_names = scenario_of(dir, R"({"model": "llama3.1-8b", "tensor-parallel": 2, "p": 2,
      "data-parallel": 2, "m": 4, "micro-batch": 2, "seq": 4096, "distributed-optimizer": true,
      "recompute": "selective"})");
  const nlohmann::json megatron = scenario_of(dir, R"({"model": "llama3.1-8b", "tensor-model-parallel-size": 2,
      "pipeline_model_parallel_size": 2, "data-parallel": 2, "global-batch-size": 16, "micro-batch-size": 2,
      "seq-length": 4096, "use-distributed-optimizer": true, "recompute-granularity": "selective"})");
  CHECK(long_names == ours);
  CHECK(megatron["t"] == 2);
  CHECK(megatron["p"] == 2);
  CHECK(megatron["m"] == 4);  // 16 / (2 * 2)
  CHECK(megatron == ours);
}

TEST_CASE("A config takes torchtitan's parallelism, training and activation_checkpoint sections", "[cli][names]") {
  TempDir dir("names-torchtitan");
  const nlohmann::json titan = scenario_of(dir, R"({"model": "llama3.1-8b",
      "parallelism": {"tensor_parallel_degree": 2, "pipeline_parallel_degree": 2,
                      "pipeline_parallel_schedule": "Interleaved1F1B", "pipeline_parallel_microbatch_size": 1,
                      "context_parallel_degree": 2},
      "training": {"seq_len": 4096, "global_batch_size": 8},
      "activation_checkpoint": {"mode": "Full"}, "v": 2})");
  CHECK(titan["schedule"] == "interleaved-1f1b");
  CHECK(titan["t"] == 2);
  CHECK(titan["p"] == 2);
  CHECK(titan["context-parallel"] == 2);
  CHECK(titan["seq"] == 4096);
  CHECK(titan["m"] == 8);
  CHECK(titan["recompute"] == "full");
}

TEST_CASE("A name whose meaning differs from ppsim's is answered with how to write it", "[cli][names]") {
  TempDir dir("names-explained");
  const auto [config, message] = GENERATE(table<std::string, std::string>({
      {R"({"num-layers-per-virtual-pipeline-stage": 4})",
       "$.num-layers-per-virtual-pipeline-stage: is Megatron-LM's layers per virtual stage; ppsim's \"v\" is virtual "
       "stages per device: v = layers / (p * N)"},
      {R"({"parallelism": {"pipeline_parallel_layers_per_stage": 4}})",
       "$.parallelism.pipeline_parallel_layers_per_stage: is torchtitan's layers per stage, the embedding and the "
       "output counted as one layer each"},
      {R"({"parallelism": {"data_parallel_shard_degree": 8}})",
       "$.parallelism.data_parallel_shard_degree: is torchtitan's FSDP degree"},
      {R"({"training": {"local_batch_size": 8}})", "$.training.local_batch_size: is torchtitan's sequences per"},
      {R"({"parallelism": {"tensor_paralel_degree": 2}})",
       "$.parallelism.tensor_paralel_degree: unknown key"},
      {R"({"micro_batch": 2})", "$.micro_batch: unknown key (did you mean \"micro-batch\"?)"},
      {R"({"t": 2, "tensor-parallel": 4})", "$.tensor-parallel: sets \"t\" again, as $.t did"},
      {R"({"p": 2, "parallelism": {"pipeline_parallel_degree": 4}})",
       "$.parallelism.pipeline_parallel_degree: sets \"p\" again, as $.p did"},
  }));
  INFO(config);
  write(dir.file("config.json"), config);
  const CliRun run = cli({"run", "-c", dir.file("config.json")});
  CHECK(run.status == 2);
  CHECK(run.out.empty());
  CHECK_THAT(run.err, Catch::Contains(dir.file("config.json") + ": " + message));
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
}

TEST_CASE("One number for --layers-per-stage is explained against torchtitan's meaning", "[cli][names]") {
  const CliRun run = cli({"run", "--model", "llama3.1-8b", "-p", "4", "--layers-per-stage", "4"});
  CHECK(run.status == 2);
  CHECK(run.err == "ppsim: error: --layers-per-stage: has 1 entry; give one per stage (4 = p * v), e.g. 8 each; not "
                   "torchtitan's layers per stage (4 there means ceil((layers + 2) / 4) stages, embedding and output "
                   "counted as layers): choose the stages with -v\n");
}

TEST_CASE("A sweep axis may be named as Megatron-LM or torchtitan names it", "[cli][names]") {
  TempDir dir("names-sweep");
  write(dir.file("study.json"), R"({"fixed": {"model": "llama3.1-8b", "p": 2, "m": 4},
      "axes": {"tensor_parallel_degree": [1, 2]}})");
  const CliRun run = cli({"sweep", dir.file("study.json"), "-j", "1", "-o", dir.file("out.csv")});
  INFO(run.err);
  CHECK(run.status == 0);
  const std::string csv = ppsim::test::read_whole(dir.file("out.csv"));
  CHECK(csv.find(",t,") != std::string::npos);
}

TEST_CASE("Names from a fixed list are read in any case", "[cli][names]") {
  const std::vector<std::string> base = {"run", "--model", "llama3.1-8b", "-p", "2", "-m", "4", "--format", "json"};
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return cli(args);
  };
  const CliRun lower = run({"--precision", "fp8", "--recompute", "full", "--comm", "overlap"});
  const CliRun upper = run({"--precision", "FP8", "--recompute", "Full", "--comm", "OVERLAP"});
  REQUIRE(lower.status == 0);
  CHECK(upper.status == 0);
  CHECK(upper.out == lower.out);
  const CliRun wrong = run({"--precision", "FP9"});
  CHECK(wrong.status == 2);
  CHECK(wrong.err == "ppsim: error: --precision: must be bf16, fp16 or fp8, got 'fp9'\n");
}

TEST_CASE("Times with units and plain numbers do not mix", "[cli][names]") {
  const auto [args, message] = GENERATE(table<std::vector<std::string>, std::string>({
      {{"--forward", "1ms", "--backward", "2"},
       "--backward: has no unit, but --forward has one: give every time a unit (1ms, 2ms) or none"},
      {{"--forward", "1ms"},
       "--backward: its default has no unit, but --forward has one: give every time a unit (1ms, 2ms) or none "
       "(set it, with a unit)"},
      {{"--forward", "1", "--backward", "2", "--latency", "5us"},
       "--forward: has no unit, but --latency has one"},
  }));
  std::vector<std::string> command = {"run", "-p", "2", "-m", "2"};
  command.insert(command.end(), args.begin(), args.end());
  const CliRun run = cli(command);
  CHECK(run.status == 2);
  CHECK(run.out.empty());
  CHECK_THAT(run.err, Catch::StartsWith("ppsim: error: " + message));
  CHECK(cli({"run", "-p", "2", "-m", "2", "--forward", "1ms", "--backward", "2ms", "--latency", "0"}).status == 0);
  CHECK(cli({"run", "-p", "2", "-m", "2", "--forward", "1", "--backward", "2", "--latency", "0.1"}).status == 0);
}

TEST_CASE("Sweep CSV and JSONL columns are all snake_case, settings included", "[cli][names]") {
  TempDir dir("names-columns");
  write(dir.file("study.json"), R"({"fixed": {"model": "llama3.1-8b", "p": 2, "m": 4},
      "axes": {"moe-imbalance": [1], "grad-reduce-dtype": ["fp32", "bf16"]}})");
  for (const std::string file : {"out.csv", "out.jsonl"}) {
    INFO(file);
    REQUIRE(cli({"sweep", dir.file("study.json"), "-j", "1", "-o", dir.file(file)}).status == 0);
    const std::string text = ppsim::test::read_whole(dir.file(file));
    const std::string first_line = text.substr(0, text.find('\n'));
    CHECK(first_line.find("micro_batch") != std::string::npos);
    CHECK(first_line.find("global_batch") != std::string::npos);
    CHECK(first_line.find("grad_reduce_dtype") != std::string::npos);
    if (file.ends_with(".csv")) {
      CHECK(first_line.find('-') == std::string::npos);
    } else {
      const nlohmann::json row = nlohmann::json::parse(first_line);  // alive while items() walks it
      for (const auto& item : row.items()) CHECK(item.key().find('-') == std::string::npos);
    }
  }
}
