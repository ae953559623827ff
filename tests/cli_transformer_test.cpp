// SPDX-License-Identifier: Apache-2.0
// Transformer studies through the command line: the example config, every preset pair, the memory
// verdict, m from the global batch, preset names against their JSON files, and bad input.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <regex>
#include <string>
#include <vector>

#include "models/hardware/profile.hpp"
#include "models/transformer/architecture.hpp"
#include "study/common/errors.hpp"
#include "support/cli_run.hpp"
#include "tools/ppsim/cli.hpp"

using Catch::Matchers::Contains;

namespace {

using Run = ppsim::test::CliRun;
using ppsim::test::TempDir;
constexpr auto ppsim_cli = ppsim::test::cli;

std::string source_path(const std::string& relative) { return std::string(PPSIM_SOURCE_DIR) + "/" + relative; }

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

TEST_CASE("the Llama-3 70B example prints step time, MFU and the memory table", "[cli][transformer]") {
  const Run run = ppsim_cli({"run", "-c", source_path("configs/examples/llama3-70b-h100.json")});
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(run.err.empty());
  CHECK_THAT(run.out, Contains("training step: llama3.1-70b on 64 x H100-SXM5-80GB, global batch 64"));
  CHECK_THAT(run.out, Contains("\nstep_time "));
  CHECK_THAT(run.out, Contains("\nmfu "));
  CHECK_THAT(run.out, Contains("memory per device (GiB)\ndevice  parameters  gradients  optimizer  activations"));
  CHECK_THAT(run.out, Contains(" of 80.0 GiB: fits\n"));

  const Run json = ppsim_cli({"run", "-c", source_path("configs/examples/llama3-70b-h100.json"), "--format", "json"});
  REQUIRE(json.status == ppsim::kExitOk);
  const auto report = nlohmann::json::parse(json.out);
  CHECK(report["m"] == 64);  // global batch 64 / (b = 1 * d = 1)
  const auto& training = report.at("training");
  CHECK(training["gpus"] == 64);
  CHECK(training["tokens_per_step"] == 64 * 8192);
  CHECK(training["mfu"].get<double>() > 0.2);
  CHECK(training["mfu"].get<double>() < 0.8);
  CHECK(training["hfu"].get<double>() > training["mfu"].get<double>());  // selective recomputation
  CHECK(training["memory"].size() == 8);
  CHECK(training["stages"].size() == 8);
  CHECK(training["stages"][0]["layers"] == 10);
  CHECK(report["scenario"]["model"] == "llama3.1-70b");
  CHECK(report["scenario"]["sequence-parallel"] == true);
}

TEST_CASE("every model preset runs on every hardware preset", "[cli][transformer]") {
  for (const ppsim::Architecture& arch : ppsim::architecture_presets()) {
    for (const ppsim::HardwareProfile& hardware : ppsim::hardware_presets()) {
      INFO(arch.name << " on " << hardware.name);
      const Run run = ppsim_cli({"run", "--model", arch.name, "--hardware", lower(hardware.name), "-p", "2", "--seq",
                                 "1024", "--global-batch", "4", "--format", "json"});
      REQUIRE(run.status == ppsim::kExitOk);
      const auto training = nlohmann::json::parse(run.out).at("training");
      CHECK(training["step_time"].get<double>() > 0);
      CHECK(training["mfu"].get<double>() > 0);
      CHECK(training["mfu"].get<double>() < 1);
      CHECK(training["model"] == arch.name);
      CHECK(training["memory"].size() == 2);
    }
  }
}

TEST_CASE("a model that does not fit is reported plainly, not refused", "[cli][transformer]") {
  const Run run = ppsim_cli({"run", "--model", "llama3.1-70b", "-p", "1", "-m", "1", "--seq", "4096"});
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(run.err.empty());
  CHECK_THAT(run.out, Contains("device 0 needs "));
  CHECK_THAT(run.out, Contains(" of 80.0 GiB: does not fit\n"));
  CHECK_THAT(run.out, Contains("  NO\n"));
}

TEST_CASE("m is the global batch over b times d", "[cli][transformer]") {
  const Run run = ppsim_cli({"run", "--model", "llama3.1-8b", "-p", "2", "-b", "2", "-d", "4", "--global-batch", "512",
                             "--seq", "1024", "--format", "json"});
  REQUIRE(run.status == ppsim::kExitOk);
  const auto report = nlohmann::json::parse(run.out);
  CHECK(report["m"] == 64);
  CHECK(report["training"]["gpus"] == 8);
  // Without a global batch, it is m * b * d.
  const Run derived =
      ppsim_cli({"run", "--model", "llama3.1-8b", "-p", "2", "-m", "8", "-b", "2", "-d", "4", "--seq", "1024",
                 "--format", "json"});
  REQUIRE(derived.status == ppsim::kExitOk);
  CHECK(nlohmann::json::parse(derived.out)["training"]["global_batch"] == 64);
}

TEST_CASE("a preset name and its JSON file give the same bytes", "[cli][transformer]") {
  const Run by_name = ppsim_cli({"run", "--model", "llama3.1-8b", "--hardware", "h200-sxm-141gb", "-p", "2", "-m", "4",
                                 "--seq", "2048", "--format", "json"});
  const Run by_file = ppsim_cli({"run", "--model", source_path("configs/models/llama3.1-8b.json"), "--hardware",
                                 source_path("configs/hardware/h200-sxm-141gb.json"), "-p", "2", "-m", "4", "--seq",
                                 "2048", "--format", "json"});
  REQUIRE(by_name.status == ppsim::kExitOk);
  REQUIRE(by_file.status == ppsim::kExitOk);
  auto a = nlohmann::json::parse(by_name.out);
  auto b = nlohmann::json::parse(by_file.out);
  CHECK(a["training"] == b["training"]);
  CHECK(a["makespan"] == b["makespan"]);
}

TEST_CASE("ppsim models lists every preset", "[cli][transformer]") {
  const Run run = ppsim_cli({"models"});
  REQUIRE(run.status == ppsim::kExitOk);
  for (const auto& arch : ppsim::architecture_presets()) CHECK_THAT(run.out, Contains(arch.name + " "));
  for (const auto& hardware : ppsim::hardware_presets()) CHECK_THAT(run.out, Contains(lower(hardware.name) + " "));
}

TEST_CASE("bad transformer settings exit 2 with one line naming the flag", "[cli][transformer][errors]") {
  using Args = std::vector<std::string>;
  const auto [args, expected] = GENERATE(table<Args, std::string>({
      {{"run", "--model", "llama3.1-70b", "-t", "3"},
       "ppsim: error: --tensor-parallel: t=3 does not divide the 64 attention heads of llama3.1-70b"},
      {{"run", "--model", "llama3.1-70b", "-t", "16"},
       "ppsim: error: --tensor-parallel: t=16 does not divide the 8 KV heads of llama3.1-70b"},
      {{"run", "--model", "lama3.1-8b"},
       "ppsim: error: --model: unknown model 'lama3.1-8b' (did you mean llama3.1-8b?)"},
      // h100 alone now names h100-sxm5-80gb (a family name); h800 names no preset.
      {{"run", "--model", "llama3.1-8b", "--hardware", "h800"}, "ppsim: error: --hardware: unknown hardware 'h800'"},
      {{"run", "--model", "llama3.1-8b", "--forward", "2"},
       "ppsim: error: --forward: cannot be combined with --model, which derives F, B, W, memory and links"},
      {{"run", "--seq", "4096"}, "ppsim: error: --seq: needs --model (a transformer study)"},
      {{"run", "--sequence-parallel"}, "ppsim: error: --sequence-parallel: needs --model"},
      {{"run", "--model", "llama3.1-8b", "-d", "3", "--global-batch", "100"},
       "ppsim: error: --global-batch: 100 sequences do not split into micro-batches of b=1 on d=3 replicas"},
      {{"run", "--model", "llama3.1-8b", "-m", "8", "--global-batch", "16"},
       "ppsim: error: -m: 8 disagrees with the global batch: 16 / (b=1 * d=1) = 16 micro-batches"},
      {{"run", "--model", "llama3.1-8b", "-p", "4", "--layers-per-stage", "8,8,8"},
       "ppsim: error: --layers-per-stage: has 3 entries; give one per stage (4 = p * v)"},
      {{"run", "--model", "llama3.1-8b", "-p", "2", "--layers-per-stage", "8,8"},
       "ppsim: error: --layers-per-stage: sums to 16 layers but llama3.1-8b has 32"},
      {{"run", "--model", "llama3.1-8b", "--hardware", "a100-sxm4-80gb", "--precision", "fp8"},
       "ppsim: error: --precision: A100-SXM4-80GB has no fp8 peak in its profile"},
      {{"run", "--model", "llama3.1-8b", "--precision", "int4"},
       "ppsim: error: --precision: must be bf16, fp16 or fp8, got 'int4'"},
      {{"run", "--model", "llama3.1-8b", "--recompute", "some"},
       "ppsim: error: --recompute: must be none, selective or full, got 'some'"},
      {{"run", "--model", "llama3.1-8b", "--seq", "0"}, "ppsim: error: --seq: must be a positive integer, got 0"},
      {{"run", "--model", "llama3.1-8b", "--workspace", "-1 GiB"}, "ppsim: error: --workspace: must not be negative"},
      {{"run", "--model", "/nonexistent/m.json"}, "ppsim: error: /nonexistent/m.json: cannot read the file"},
      {{"run", "--model", "llama3.1-8b", "--seq", "1000000000", "--no-flash-attention", "-p", "1", "-m", "1"},
       "ppsim: error: --seq: s=1000000000 with b=1 would stash "},
  }));
  INFO("args: " << Catch::Detail::stringify(args));
  const Run run = ppsim_cli(args);
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.out.empty());
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK_THAT(run.err, Catch::Matchers::StartsWith(expected));
}

TEST_CASE("An MoE model runs, with or without expert parallelism, and what is not modelled yet is refused in one line",
          "[cli][transformer][errors]") {
  TempDir dir("moe-model");
  nlohmann::json model = {{"name", "mixtral-8x7b"}, {"layers", 32},  {"hidden", 4096},
                          {"heads", 32},            {"kv_heads", 8}, {"ffn_hidden", 14336},
                          {"gated_mlp", true},      {"vocab", 32000}, {"norm", "rmsnorm"}};
  model["moe"] = {{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 14336}};
  const std::string moe = dir.file("mixtral.json");
  std::ofstream(moe) << model.dump();
  Run run = ppsim_cli({"run", "--model", moe, "-p", "8", "-m", "16", "--format", "json"});
  REQUIRE(run.status == 0);
  const nlohmann::json result = nlohmann::json::parse(run.out);
  // 6 x 12.88B activated parameters a token, plus attention, over 16 x 2048 tokens (the default sequence).
  CHECK(result["training"]["model_flops_per_step"].get<double>() > 6 * 12.87e9 * 16 * 2048);
  CHECK(result["training"]["model_flops_per_step"].get<double>() < 6 * 13.3e9 * 16 * 2048);
  // Expert parallelism folds out of d; Megatron's rules, one line each.
  run = ppsim_cli({"run", "--model", moe, "-p", "4", "-d", "8", "-e", "8", "--global-batch", "64", "--format", "json"});
  REQUIRE(run.status == 0);
  CHECK(nlohmann::json::parse(run.out)["scenario"]["e"] == 8);
  using Case = std::pair<std::vector<std::string>, std::string>;
  for (const auto& [args, expected] : std::vector<Case>{
           {{"-d", "6", "-e", "3"}, "ppsim: error: --expert-parallel: e=3 does not divide the 8 experts of mixtral-8x7b\n"},
           {{"-d", "2", "-e", "4"},
            "ppsim: error: --expert-parallel: e=4 does not divide the t*d = 2 ranks of a pipeline stage, out of which it folds\n"},
           {{"-d", "4", "-e", "4", "--expert-tensor-parallel", "2"},
            "ppsim: error: --expert-parallel: e=4 times --expert-tensor-parallel 2 does not divide the t*d = 4 ranks "
            "of a pipeline stage, out of which it folds\n"},
           {{"-d", "3", "--expert-tensor-parallel", "3"},
            "ppsim: error: --expert-tensor-parallel: 3 does not divide the expert FFN width 14336 of mixtral-8x7b\n"},
           {{"-d", "2", "--expert-tensor-parallel", "4"},
            "ppsim: error: --expert-tensor-parallel: 4 times e=1 does not divide the t*d = 2 ranks of a pipeline stage, "
            "out of which it folds\n"},
           {{"--moe-imbalance", "0.5"}, "ppsim: error: --moe-imbalance: must be a factor from 1 (balanced) to 1000, "
                                        "got 0.5\n"},
       }) {
    std::vector<std::string> full = {"run", "--model", moe, "-p", "4"};
    full.insert(full.end(), args.begin(), args.end());
    INFO(Catch::Detail::stringify(full));
    const Run refused = ppsim_cli(full);
    CHECK(refused.status == ppsim::kExitBadInput);
    CHECK(refused.err == expected);
  }
  // Megatron's combined 1F1B overlaps expert all-to-alls: it needs them.
  run = ppsim_cli({"run", "--model", moe, "-s", "combined-1f1b", "-p", "4", "-m", "8"});
  CHECK(run.err == "ppsim: error: --schedule: combined-1f1b overlaps MoE all-to-alls, so it needs a mixture-of-experts "
                   "model and -e > 1, as Megatron-LM's --overlap-moe-expert-parallel-comm does\n");
  run = ppsim_cli({"run", "--model", moe, "-s", "combined-1f1b", "-p", "4", "-d", "2", "-e", "2", "--global-batch",
                   "16", "--moe-dispatcher", "allgather"});
  CHECK(run.err == "ppsim: error: --schedule: combined-1f1b needs --moe-dispatcher alltoall or deepep, as Megatron-LM "
                   "does\n");
  run = ppsim_cli({"run", "--model", moe, "-s", "combined-1f1b", "-p", "4", "-d", "2", "-e", "2", "--global-batch",
                   "16", "--format", "json"});
  CHECK(run.status == 0);
  // Megatron's --recompute-modules: selective recomputation's modules, one line per mistake.
  run = ppsim_cli({"run", "--model", moe, "-p", "4", "-m", "8", "--recompute-modules", "layernorm,moe_act",
                   "--format", "json"});
  REQUIRE(run.status == 0);
  CHECK(nlohmann::json::parse(run.out)["scenario"]["recompute"] == "selective");
  CHECK(nlohmann::json::parse(run.out)["scenario"]["recompute-modules"] == "layernorm,moe_act");
  run = ppsim_cli({"run", "--model", moe, "-p", "4", "-m", "8", "--recompute", "full", "--recompute-modules",
                   "layernorm"});
  CHECK(run.err == "ppsim: error: --recompute-modules: needs --recompute selective, got --recompute full\n");
  run = ppsim_cli({"run", "--model", moe, "-p", "4", "-m", "8", "--recompute-modules", "core_attn,mlp,moe,attn"});
  CHECK(run.err == "ppsim: error: --recompute-modules: must be a comma-separated list of core_attn, layernorm, moe_act, "
                   "mlp, moe, shared_experts and mla_up_proj, got 'core_attn,mlp,moe,attn'\n");
  run = ppsim_cli({"run", "--model", moe, "-p", "4", "-m", "8", "--recompute-modules", "mla_up_proj"});
  CHECK(run.err == "ppsim: error: --recompute-modules: mla_up_proj needs multi-latent attention (\"mla\"); "
                   "mixtral-8x7b has none\n");
  run = ppsim_cli({"run", "--model", moe, "-p", "4", "-m", "8", "--recompute-modules", "shared_experts"});
  CHECK(run.err == "ppsim: error: --recompute-modules: shared_experts needs shared experts; mixtral-8x7b has none\n");
  run = ppsim_cli({"run", "--model", "llama3.1-8b", "--recompute-modules", "moe"});
  CHECK(run.err == "ppsim: error: --recompute-modules: moe needs a mixture-of-experts model; llama3.1-8b is dense\n");
  run = ppsim_cli({"run", "--model", "llama3.1-8b", "--recompute-modules", "moe_act"});
  CHECK(run.err == "ppsim: error: --recompute-modules: moe_act needs a mixture-of-experts model; llama3.1-8b is "
                   "dense\n");
  run = ppsim_cli({"run", "--model", "llama3.1-8b", "--moe-dispatcher", "deepep"});
  CHECK(run.err == "ppsim: error: --moe-dispatcher: needs a mixture-of-experts model; llama3.1-8b is dense\n");
  run = ppsim_cli({"run", "--model", "llama3.1-8b", "-d", "8", "-e", "8"});
  CHECK(run.err == "ppsim: error: --expert-parallel: needs a mixture-of-experts model; llama3.1-8b is dense\n");
  run = ppsim_cli({"run", "--model", moe, "-t", "2", "-p", "4", "-m", "8"});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err ==
        "ppsim: error: --tensor-parallel: t=2 with mixtral-8x7b's mixture-of-experts layers needs --sequence-parallel, "
        "as Megatron-LM requires\n");
  run = ppsim_cli({"run", "--model", moe, "-t", "2", "--sequence-parallel", "-p", "4", "-d", "4", "-e", "8",
                   "--global-batch", "32"});
  CHECK(run.status == 0);
  model["moe"]["shared_experts"] = 1;
  model["moe"]["shared_expert_ffn_hidden"] = 2048;
  std::ofstream(moe) << model.dump();
  // Shared experts run beside the routed ones; a width t does not divide is refused.
  run = ppsim_cli({"run", "--model", moe, "-p", "8", "-m", "16", "-d", "2", "-e", "2", "--expert-tensor-parallel",
                   "1", "--format", "json"});
  CHECK(run.status == 0);
  model["moe"]["shared_expert_ffn_hidden"] = 2047;
  std::ofstream(moe) << model.dump();
  run = ppsim_cli({"run", "--model", moe, "-t", "2", "--sequence-parallel", "-p", "4", "-m", "8"});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err == "ppsim: error: --tensor-parallel: t=2 does not divide the shared experts' width 2047 of "
                   "mixtral-8x7b\n");
  // Qwen3's heads are wider than hidden / heads: 32 x 128 = 4096 against hidden 2048. Its queries
  // and the attention's output are 4096 wide, so it does more work than with heads of 64.
  model.erase("moe");
  model["name"] = "wide-heads";
  model["hidden"] = 2048;
  model["ffn_hidden"] = 6144;
  const std::string narrow = dir.file("narrow.json");
  std::ofstream(narrow) << model.dump();
  model["head_dim"] = 128;
  model["qk_norm"] = true;
  const std::string wide = dir.file("wide.json");
  std::ofstream(wide) << model.dump();
  auto flops = [&](const std::string& file) {
    const Run flops_run = ppsim_cli({"run", "--model", file, "-p", "2", "-m", "4", "--format", "json"});
    REQUIRE(flops_run.status == 0);
    return nlohmann::json::parse(flops_run.out)["training"]["model_flops_per_step"].get<double>();
  };
  // By hand, per token and layer: the attention's weights grow from h x h + 2 h kv + h x h (kv = 8
  // heads of 64) to h q + 2 h kv + q h (q = 32 x 128, kv = 8 x 128), 6 FLOPs a weight over F, I and
  // W; the attention products from 12 s x 2048 to 12 s q (4 s q in F, 8 s q in I), s = 2048.
  const double tokens = 4 * 2048.0;
  const double h = 2048;
  const double weights = (2 * h * 4096 + 2 * h * 1024) - (2 * h * h + 2 * h * 512);
  const double extra = 32 * tokens * (6 * weights + 12 * 2048 * (4096 - h));
  CHECK_THAT(flops(wide) - flops(narrow), Catch::Matchers::WithinRel(extra, 1e-9));
}

TEST_CASE("bad transformer keys in a config name their JSON path", "[cli][transformer][errors]") {
  const std::string path = "ppsim-transformer-test-config.json";
  using Case = std::pair<std::string, std::string>;
  const auto [body, expected] = GENERATE(values<Case>({
      {R"({"model": "llama3.1-8b", "t": "eight"})", ": $.t: must be a positive integer"},
      {R"({"model": "llama3.1-8b", "sequence-parallel": "yes"})", ": $.sequence-parallel: must be true or false"},
      {R"({"model": "llama3.1-8b", "layers-per-stage": [16, -16, 32, 0]})", ": $.layers-per-stage[1]: must be"},
      {R"({"model": "llama3.1-8b", "micro_batch": 2})", ": $.micro_batch: unknown key (did you mean \"micro-batch\"?)"},
      {R"({"model": 8})", ": $.model: must be a string"},
  }));
  {
    std::ofstream file(path);
    file << body;
  }
  const Run run = ppsim_cli({"run", "-c", path});
  std::remove(path.c_str());
  INFO(body);
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.out.empty());
  CHECK_THAT(run.err, Contains(path + expected));
}

TEST_CASE("data-parallel overlap settings reach the scenario, the figures and the trace", "[cli][transformer]") {
  const ppsim::test::TempDir dir("dp-overlap");
  // p = 1, d = 8 in one node: the whole model's last backward to hide the buckets behind.
  const std::vector<std::string> base = {"run", "--model", "llama3.1-8b", "-p", "1", "-d", "8", "--global-batch", "32",
                                         "--distributed-optimizer", "--format", "json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return ppsim_cli(args);
  };
  const Run overlapped = with({"--trace", dir.file("t.json")});
  const Run serial = with({"--no-overlap-grad-reduce"});
  const Run gathered = with({"--overlap-param-gather"});
  const Run small = with({"--bucket-size", "1000000"});
  for (const Run* run : {&overlapped, &serial, &gathered, &small}) REQUIRE(run->status == ppsim::kExitOk);
  const auto json = [](const Run& run) { return nlohmann::json::parse(run.out); };
  // Megatron's default bucket, max(40M, 1M * d), is stated in the scenario.
  CHECK(json(overlapped)["scenario"]["bucket-size"] == 40e6);
  CHECK(json(small)["scenario"]["bucket-size"] == 1e6);
  CHECK(json(gathered)["scenario"]["overlap-param-gather"] == true);
  const nlohmann::json on = json(overlapped)["training"];
  const nlohmann::json off = json(serial)["training"];
  // Overlap hides part of the reduction; without it all of it is exposed.
  CHECK(on["dp_reduce_exposed"].get<double>() < on["dp_reduce_time"].get<double>());
  CHECK(on["step_time"].get<double>() < off["step_time"].get<double>());
  CHECK(off["dp_reduce_exposed"].get<double>() > 0);
  // The overlapped all-gather leaves the optimizer step and shows as the forwards' wait.
  const nlohmann::json gather = json(gathered)["training"];
  CHECK(gather["optimizer_time"].get<double>() < on["optimizer_time"].get<double>());
  CHECK(gather["param_gather_exposed"].get<double>() > 0);
  CHECK(on["param_gather_exposed"] == 0);
  // The trace has each device's collectives on a thread of their own.
  std::ifstream trace_file(dir.file("t.json"));
  const auto trace = nlohmann::json::parse(trace_file);
  std::size_t collectives = 0;
  bool named = false;
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("cat", "") == "collective") ++collectives;
    if (event["name"] == "thread_name" && event["args"]["name"] == "data-parallel") named = true;
  }
  CHECK(named);
  CHECK(collectives >= 2);
  // The all-gather overlaps only the distributed optimizer's gather.
  const Run refused = ppsim_cli({"run", "--model", "llama3.1-8b", "-d", "2", "--overlap-param-gather"});
  CHECK(refused.status == ppsim::kExitBadInput);
  CHECK(refused.err == "ppsim: error: --overlap-param-gather: needs --distributed-optimizer, whose parameter "
                       "all-gather it overlaps\n");
}

TEST_CASE("a --dropout flag overrides the model's dropout, which the stash and the scenario show", "[cli][transformer]") {
  const std::vector<std::string> base = {"run", "--model", "llama3.1-8b", "-p", "2", "-m", "4", "--format", "json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return ppsim_cli(args);
  };
  const Run plain = with({});
  const Run dropped = with({"--dropout", "0.1"});
  REQUIRE(plain.status == ppsim::kExitOk);
  REQUIRE(dropped.status == ppsim::kExitOk);
  const nlohmann::json a = nlohmann::json::parse(plain.out);
  const nlohmann::json b = nlohmann::json::parse(dropped.out);
  CHECK(a["scenario"]["dropout"] == 0);  // Llama trains without dropout
  CHECK(b["scenario"]["dropout"] == 0.1);
  // Two 1-byte masks of s x h per layer per micro-batch (flash attention keeps no score mask).
  const double masks = 2.0 * 2048 * 4096 * 16;  // 16 layers on device 0
  CHECK(b["per_device"][0]["peak_activation_bytes"].get<double>() -
            a["per_device"][0]["peak_activation_bytes"].get<double>() ==
        masks * b["per_device"][0]["peak_stashed"].get<double>());
  CHECK(b["training"]["step_time"].get<double>() > a["training"]["step_time"].get<double>());
  const Run refused = with({"--dropout", "1"});
  CHECK(refused.status == ppsim::kExitBadInput);
  CHECK(refused.err == "ppsim: error: --dropout: must be a probability below 1, got 1\n");
}

TEST_CASE("tensor-parallel overlap needs sequence parallelism and shortens the step", "[cli][transformer]") {
  const std::vector<std::string> base = {"run", "--model", "llama3.1-70b", "-t", "8", "-p", "8", "--seq", "8192",
                                         "--global-batch", "64", "--format", "json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return ppsim_cli(args);
  };
  const Run plain = with({"--sequence-parallel"});
  const Run overlapped = with({"--sequence-parallel", "--tp-comm-overlap"});
  REQUIRE(plain.status == ppsim::kExitOk);
  REQUIRE(overlapped.status == ppsim::kExitOk);
  const nlohmann::json a = nlohmann::json::parse(plain.out);
  const nlohmann::json b = nlohmann::json::parse(overlapped.out);
  CHECK(a["scenario"]["tp-comm-overlap"] == false);
  CHECK(b["scenario"]["tp-comm-overlap"] == true);
  CHECK(b["training"]["step_time"].get<double>() < a["training"]["step_time"].get<double>());
  const Run refused = with({"--tp-comm-overlap"});
  CHECK(refused.status == ppsim::kExitBadInput);
  CHECK(refused.err == "ppsim: error: --tp-comm-overlap: needs --sequence-parallel with t > 1, whose all-gathers and "
                       "reduce-scatters it overlaps\n");
}

TEST_CASE("pipeline sends default to Megatron's: paired for 1f1b, asynchronous for interleaved-1f1b", "[cli][transformer]") {
  auto with = [](const char* schedule, std::vector<std::string> extra) {
    std::vector<std::string> args{"run", "--model", "llama3.1-8b", "-s", schedule, "-p", "4", "-m", "8", "--format",
                                  "json"};
    if (std::string_view(schedule) == "interleaved-1f1b") args.insert(args.end(), {"-v", "2"});
    args.insert(args.end(), extra.begin(), extra.end());
    return ppsim_cli(args);
  };
  const Run megatron_1f1b = with("1f1b", {});
  const Run overlapped_1f1b = with("1f1b", {"--overlap-p2p-comm"});
  const Run interleaved = with("interleaved-1f1b", {});
  const Run paired_interleaved = with("interleaved-1f1b", {"--no-overlap-p2p-comm"});
  for (const Run* run : {&megatron_1f1b, &overlapped_1f1b, &interleaved, &paired_interleaved}) {
    REQUIRE(run->status == ppsim::kExitOk);
  }
  const nlohmann::json a = nlohmann::json::parse(megatron_1f1b.out);
  const nlohmann::json b = nlohmann::json::parse(overlapped_1f1b.out);
  CHECK(a["scenario"]["comm"] == "paired");
  CHECK(a["scenario"]["overlap-p2p-comm"] == false);  // what ran
  CHECK(b["scenario"]["comm"] == "overlap");
  CHECK(b["scenario"]["overlap-p2p-comm"] == true);
  // Blocking sends can only lengthen the step.
  CHECK(a["training"]["step_time"].get<double>() > b["training"]["step_time"].get<double>());
  CHECK(nlohmann::json::parse(interleaved.out)["scenario"]["comm"] == "overlap");
  CHECK(nlohmann::json::parse(paired_interleaved.out)["scenario"]["comm"] == "paired");
  // An explicit --comm wins; with --overlap-p2p-comm too, the two must agree.
  CHECK(nlohmann::json::parse(with("1f1b", {"--comm", "overlap"}).out)["scenario"]["comm"] == "overlap");
  CHECK(with("1f1b", {"--comm", "overlap", "--overlap-p2p-comm"}).status == ppsim::kExitOk);
  CHECK(with("1f1b", {"--comm", "paired", "--no-overlap-p2p-comm"}).status == ppsim::kExitOk);
  const Run both = with("1f1b", {"--comm", "blocking", "--overlap-p2p-comm"});
  CHECK(both.status == ppsim::kExitBadInput);
  CHECK(both.err == "ppsim: error: --overlap-p2p-comm: true disagrees with --comm blocking\n");
  // Paired sends are Megatron's, for its own schedules only.
  const Run zb = with("zb-h1", {"--no-overlap-p2p-comm"});
  CHECK(zb.status == ppsim::kExitBadInput);
  CHECK(zb.err == "ppsim: error: --no-overlap-p2p-comm: false (Megatron's paired sends) applies to 1f1b and "
                  "interleaved-1f1b, not to zb-h1, whose runtime sends asynchronously; --comm paired forces it\n");
  // A report's scenario reads back as a config and runs the same.
  TempDir dir("p2p-scenario");
  std::ofstream(dir.file("scenario.json")) << a["scenario"].dump();
  const Run again = ppsim_cli({"run", "-c", dir.file("scenario.json"), "--format", "json"});
  REQUIRE(again.status == ppsim::kExitOk);
  CHECK(nlohmann::json::parse(again.out)["training"]["step_time"] == a["training"]["step_time"]);
  // Without --model the default stays overlap, as before.
  const Run plain = ppsim_cli({"run", "-s", "1f1b", "--format", "json"});
  CHECK(nlohmann::json::parse(plain.out)["scenario"]["comm"] == "overlap");
}

TEST_CASE("a preset named by its family runs as that preset, with a note naming it", "[cli][transformer]") {
  const Run exact = ppsim_cli({"run", "--model", "llama3.1-70b", "--hardware", "h100-sxm5-80gb", "-p", "8", "-m", "16",
                               "-t", "8", "--format", "json"});
  REQUIRE(exact.status == ppsim::kExitOk);
  CHECK(exact.err.empty());  // an exact name needs no note
  const Run family =
      ppsim_cli({"run", "--model", "LLaMA3-70B", "--hardware", "h100", "-p", "8", "-m", "16", "-t", "8", "--format", "json"});
  REQUIRE(family.status == ppsim::kExitOk);
  CHECK(family.err ==
        "ppsim: note: --model: 'LLaMA3-70B' is the preset llama3.1-70b\n"
        "ppsim: note: --hardware: 'h100' is the preset h100-sxm5-80gb\n");
  CHECK(family.out == exact.out);  // the scenario names the preset, so a check of it re-runs the same
}

TEST_CASE("a family name that fits several presets, or none, is refused with the list", "[cli][transformer][errors]") {
  const Run several = ppsim_cli({"run", "--model", "llama3.1", "-p", "4", "-m", "8"});  // 8b, 70b and 405b
  CHECK(several.status == ppsim::kExitBadInput);
  CHECK_THAT(several.err, Contains("--model: unknown model 'llama3.1'"));
  CHECK_THAT(several.err, Contains("presets: "));
  const Run none = ppsim_cli({"run", "--model", "falcon-7b", "-p", "4", "-m", "8"});
  CHECK(none.status == ppsim::kExitBadInput);
  CHECK_THAT(none.err, Contains("--model: unknown model 'falcon-7b'"));
}

TEST_CASE("FSDP runs schedules lowered as torch does, its collectives and unsharded buffers costed",
          "[cli][transformer][fsdp]") {
  const ppsim::test::TempDir dir("fsdp");
  auto json_of = [](std::vector<std::string> args) {
    args.insert(args.end(), {"--model", "llama3.1-8b", "-p", "4", "-m", "8", "--format", "json"});
    const Run run = ppsim_cli(args);
    INFO(run.err);
    REQUIRE(run.status == ppsim::kExitOk);
    return nlohmann::json::parse(run.out);
  };
  const nlohmann::json sharded = json_of({"run", "-s", "1f1b", "-d", "8", "--fsdp"});
  const nlohmann::json replicated = json_of({"run", "-s", "1f1b", "-d", "8", "--comm", "overlap"});
  const nlohmann::json& fsdp = sharded["training"];
  const nlohmann::json& ddp = replicated["training"];
  CHECK(fsdp["fsdp"] == true);
  CHECK(sharded["scenario"]["fsdp"] == true);
  CHECK(sharded["scenario"]["comm"] == "overlap");  // torch's runtime sends asynchronously
  CHECK(fsdp["fsdp_gather_time"].get<double>() > 0);
  CHECK(fsdp["fsdp_reduce_time"].get<double>() > 0);
  CHECK(fsdp["dp_reduce_time"] == 0);  // REDUCE_GRAD reduces instead of Megatron's buckets
  CHECK(ddp["fsdp"] == false);
  CHECK(ddp["fsdp_gather_time"] == 0);
  // The collectives the compute waits for lengthen the pipeline: the first all-gathers, the last
  // reduce-scatters at least.
  CHECK(fsdp["pipeline_time"].get<double>() > ddp["pipeline_time"].get<double>());
  for (std::size_t d = 0; d < 4; ++d) {
    INFO("device " << d);
    const nlohmann::json& f = fsdp["memory"][d];
    const nlohmann::json& r = ddp["memory"][d];
    // Resident: fp32 parameters, gradients and Adam's moments over d = 8, against Megatron's bf16
    // parameters (2 bytes), fp32 gradients (4) and optimizer state (12) unsharded.
    const double n = r["parameters"].get<double>() / 2;  // parameters of the device
    CHECK(std::abs(f["parameters"].get<double>() - 4 * n / 8) <= 1);
    CHECK(std::abs(f["gradients"].get<double>() - 4 * n / 8) <= 1);
    CHECK(std::abs(f["optimizer"].get<double>() - 8 * n / 8) <= 1);
    // 1F1B's peak of stashes meets its first backward, which holds the bf16 parameters and the
    // fp32 accumulated gradients together: 6 bytes a parameter over the stashes' own peak.
    CHECK(std::abs(f["unsharded"].get<double>() - 6 * n) <= 2);
    CHECK(f["activations"] == r["activations"]);
    CHECK(r["unsharded"] == 0);
  }
  // On one rank the collectives take no time: the pipeline is the compute's, whatever is held.
  const nlohmann::json alone = json_of({"run", "-s", "1f1b", "--fsdp"});
  const nlohmann::json plain = json_of({"run", "-s", "1f1b", "--comm", "overlap"});
  CHECK(alone["training"]["pipeline_time"] == plain["training"]["pipeline_time"]);
  CHECK(alone["training"]["fsdp_gather_time"] == 0);
  // The lowered file torch would dump replays to the same figures as the schedule it came from.
  const std::string lowered = dir.file("zbv.csv");
  REQUIRE(ppsim_cli({"export", "-s", "zbv", "-p", "4", "-m", "8", "--lowered", "-o", lowered}).status ==
          ppsim::kExitOk);
  const nlohmann::json from_file = json_of({"run", "--schedule-file", lowered, "-d", "8", "--fsdp"});
  const nlohmann::json from_registry = json_of({"run", "-s", "zbv", "-d", "8", "--fsdp"});
  CHECK(from_file["makespan"] == from_registry["makespan"]);
  CHECK(from_file["training"]["memory"] == from_registry["training"]["memory"]);
  CHECK(from_file["training"]["step_time"] == from_registry["training"]["step_time"]);
  // The table names the FSDP figures and the unsharded column.
  const Run table = ppsim_cli({"run", "-s", "1f1b", "--model", "llama3.1-8b", "-p", "4", "-m", "8", "-d", "8", "--fsdp"});
  REQUIRE(table.status == ppsim::kExitOk);
  CHECK_THAT(table.out, Contains("\nfsdp_gather_time "));
  CHECK_THAT(table.out, Contains("activations  unsharded  workspace"));
}

TEST_CASE("FSDP settings it cannot model are refused, naming the flag", "[cli][transformer][fsdp][errors]") {
  using Args = std::vector<std::string>;
  const auto [args, expected] = GENERATE(table<Args, std::string>({
      {{"run", "--fsdp"}, "ppsim: error: --fsdp: needs --model (a transformer study)\n"},
      {{"run", "--model", "llama3.1-8b", "--fsdp", "--distributed-optimizer"},
       "ppsim: error: --distributed-optimizer: --fsdp shards the optimizer state already; give one of the two\n"},
      {{"run", "--model", "llama3.1-8b", "--fsdp", "--fsdp-float8-all-gather"},
       "ppsim: error: --fsdp-float8-all-gather: gathers FP8 weights, so it needs --fsdp and --precision fp8\n"},
      {{"run", "--model", "llama3.1-8b", "--precision", "fp8", "--fsdp-float8-all-gather"},
       "ppsim: error: --fsdp-float8-all-gather: gathers FP8 weights, so it needs --fsdp and --precision fp8\n"},
      {{"run", "--model", "llama3.1-8b", "--fsdp-unit", "stage"},
       "ppsim: error: --fsdp-unit: says what FSDP shards as one unit; it needs --fsdp\n"},
      {{"run", "--model", "llama3.1-8b", "--fsdp", "--fsdp-unit", "layer"},
       "ppsim: error: --fsdp-unit: must be block or stage, got 'layer'\n"},
      {{"run", "--model", "llama3.1-8b", "--reshard-after-forward", "always"},
       "ppsim: error: --reshard-after-forward: is FSDP's; it needs --fsdp\n"},
      {{"run", "--model", "llama3.1-8b", "--fsdp", "--fsdp-unit", "stage", "--reshard-after-forward", "never"},
       "ppsim: error: --reshard-after-forward: applies to blocks, and --fsdp-unit stage gathers the stage once "
       "(UNSHARD to RESHARD)\n"},
      {{"run", "--model", "llama3.1-8b", "--fsdp", "--comm-actions", "ignore"},
       "ppsim: error: --fsdp: its costs are those of UNSHARD, RESHARD and REDUCE_GRAD, which --comm-actions ignore "
       "drops\n"},
  }));
  INFO("args: " << Catch::Detail::stringify(args));
  const Run run = ppsim_cli(args);
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.out.empty());
  CHECK(run.err == expected);
}

TEST_CASE("Every training result says where its hardware numbers come from, and that datasheet tables are assumed",
          "[cli][transformer][provenance]") {
  // A profile whose efficiencies are the datasheet-only assumption: the presets' file with its
  // published parts taken out.
  nlohmann::json profile =
      nlohmann::json::parse(ppsim::test::read_whole(std::string(PPSIM_SOURCE_DIR) + "/configs/hardware/h100-sxm5-80gb.json"));
  profile["efficiency"] = "assumed";
  profile.erase("sources");
  profile.erase("gemm_model");
  profile["efficiency_tables"].erase("attention_forward");
  profile["efficiency_tables"].erase("attention_backward");
  const ppsim::test::TempDir dir("provenance");
  const std::string assumed_profile = dir.file("assumed.json");
  std::ofstream(assumed_profile) << profile.dump();
  const std::vector<std::string> base{"--model", "llama3.1-8b", "--hardware", assumed_profile, "-p", "2", "-m", "4"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), base.begin(), base.end());
    return ppsim::test::cli(args);
  };
  const std::string assumed =
      "hardware numbers: datasheet only (assumed): the kernel efficiency tables are assumptions, not measurements "
      "(ppsim-calibrate measures them)\n";
  // Under mfu, in run's table and compare's side-by-side table.
  const Run run = with({"run", "-s", "1f1b"});
  REQUIRE(run.status == 0);
  CHECK_THAT(run.out, Contains("stage_imbalance  "));
  CHECK(run.out.find(assumed) > run.out.find("\nmfu "));
  const Run compare = with({"compare", "-s", "gpipe,1f1b"});
  REQUIRE(compare.status == 0);
  CHECK(compare.out.find(assumed) != std::string::npos);
  // In the JSON, beside the hardware's name.
  const Run json = with({"run", "-s", "1f1b", "--format", "json"});
  REQUIRE(json.status == 0);
  CHECK(nlohmann::json::parse(json.out)["training"]["hardware_provenance"] == "datasheet only (assumed)");
  // The presets name their published sources instead, in one line with no warning.
  const Run preset = ppsim::test::cli({"run", "-s", "1f1b", "--model", "llama3.1-8b", "-p", "2", "-m", "4"});
  REQUIRE(preset.status == 0);
  CHECK_THAT(preset.out, Contains("\nhardware numbers: published microbenchmarks (5 sources)\n"));
  CHECK(preset.out.find("assumptions, not measurements") == std::string::npos);
  // The HTML report's summary carries the training step and the same provenance.
  const std::string page = dir.file("report.html");
  const Run html = ppsim::test::cli({"compare", "-s", "1f1b,zb-h1", "--model", "llama3.1-8b", "-p", "2", "-m", "4",
                                     "--html", page});
  REQUIRE(html.status == 0);
  const std::string text = ppsim::test::read_whole(page);
  CHECK_THAT(text, Contains("<tr><td>hardware numbers</td><td>H100-SXM5-80GB: published microbenchmarks (5 sources)"
                            "</td><td>H100-SXM5-80GB: published microbenchmarks (5 sources)</td></tr>"));
  // The training step first after the pipeline's figures, before the per-device rows.
  const std::size_t step = text.find("<tr><td>step_time</td><td>");
  REQUIRE(step != std::string::npos);
  CHECK(step < text.find("<tr><td>peak_stashed d0</td>"));
  CHECK(text.find(" s</td>", step) < text.find("<tr><td>tokens_per_second</td>"));  // seconds, said
  CHECK(std::regex_search(text, std::regex("<tr><td>mfu</td><td>[0-9.]+%</td><td>[0-9.]+%</td></tr>")));
}

TEST_CASE("A layout that fits with under 5% free is tight, and --memory-headroom keeps a share free that fits and "
          "--expect respect",
          "[cli][transformer][memory]") {
  // Llama 3.1 405B as Meta ran it on 80 GB H100s: 78.3 GiB of 80.0.
  const std::vector<std::string> meta{"run", "-s", "interleaved-1f1b", "--model", "llama3.1-405b", "-t", "8", "-p",
                                      "16", "-v", "2", "-d", "128", "--seq", "8192", "--global-batch", "2048",
                                      "--sequence-parallel", "--fsdp"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = meta;
    args.insert(args.end(), extra.begin(), extra.end());
    return ppsim::test::cli(args);
  };
  const Run tight = with({});
  REQUIRE(tight.status == 0);
  CHECK_THAT(tight.out, Contains("device 0 needs 78.3 GiB of 80.0 GiB: fits (tight: 1.7 GiB, 2.2% headroom)\n"));
  const Run kept = with({"--memory-headroom", "0.05", "--expect", "fits"});
  CHECK(kept.status == ppsim::kExitFailure);
  CHECK_THAT(kept.out, Contains("device 0 needs 78.3 GiB of 80.0 GiB: does not fit with 5.0% kept free\n"));
  const Run json = with({"--memory-headroom", "0.01", "--format", "json"});
  REQUIRE(json.status == 0);
  const nlohmann::json result = nlohmann::json::parse(json.out);
  CHECK(result["training"]["fits"] == true);
  CHECK(result["scenario"]["memory-headroom"] == 0.01);
  const Run refused = with({"--memory-headroom", "0.5"});
  CHECK(refused.status == ppsim::kExitBadInput);
  CHECK(refused.err == "ppsim: error: --memory-headroom: must be a share of the memory below 0.5, got 0.5\n");
  // A layout with room to spare is not tight.
  const Run roomy = ppsim::test::cli({"run", "--model", "llama3.1-8b", "--hardware", "h200", "-p", "2", "-m", "4"});
  CHECK_THAT(roomy.out, Contains(": fits\n"));
}

TEST_CASE("A sweep's fits column follows --memory-headroom as an axis", "[cli][transformer][memory]") {
  TempDir dir("headroom-sweep");
  std::ofstream(dir.file("s.json")) << R"({"fixed": {"model": "llama3.1-405b", "t": 8, "p": 16, "v": 2, "d": 128,
    "seq": 8192, "global-batch": 2048, "sequence-parallel": true, "fsdp": true, "schedule": "interleaved-1f1b"},
    "axes": {"memory-headroom": [0, 0.05]}})";
  const Run sweep = ppsim::test::cli({"sweep", dir.file("s.json"), "-o", dir.file("points.jsonl")});
  REQUIRE(sweep.status == 0);
  std::ifstream points(dir.file("points.jsonl"));
  std::string line;
  std::vector<bool> fits;
  while (std::getline(points, line)) fits.push_back(nlohmann::json::parse(line)["fits"].get<bool>());
  CHECK(fits == std::vector<bool>{true, false});
}

TEST_CASE("DeepSeek-V3's published H100 layout fits once its MLA up projections and dense MLPs are recomputed",
          "[cli][transformer]") {
  // Megatron-MoE-ModelZoo, best_practice/DeepSeekV3/run.sh: 1024 H100, TP2 PP8 VPP4 EP64, FP8, the
  // A2A overlap, DeepEP, global batch 8192 at 4096, "--recompute-modules mla_up_proj mlp", the layout
  // "Et|(tt|)*30mL" (one layer after the embedding, then two per chunk, MTP and loss last).
  std::string split = "1";
  for (int k = 0; k < 30; ++k) split += ",2";
  split += ",0";
  const std::vector<std::string> base = {"run", "--model", "deepseek-v3", "-s", "combined-1f1b", "-p", "8", "-v", "4",
                                         "-t", "2", "--sequence-parallel", "-d", "64", "-e", "64", "--global-batch",
                                         "8192", "--seq", "4096", "--precision", "fp8", "--distributed-optimizer",
                                         "--moe-dispatcher", "deepep", "--layers-per-stage", split, "--format", "json"};
  auto training = [&](const std::string& modules) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--recompute-modules", modules});
    const Run run = ppsim_cli(args);
    REQUIRE(run.status == 0);
    return nlohmann::json::parse(run.out).at("training");
  };
  const nlohmann::json published = training("mla_up_proj,mlp");
  const nlohmann::json attention = training("core_attn");
  CHECK(published.at("fits") == true);
  CHECK(attention.at("fits") == false);
  CHECK(published.at("memory_verdict").get<std::string>().starts_with("device 2 needs 77.9 GiB of 80.0 GiB: fits"));
}

TEST_CASE("Llama-3 70B's recipe on 64 H100 at 8192, TP4 PP4 CP2 VP5, fits where the same GPUs without CP do not",
          "[cli][transformer][context-parallel]") {
  auto run = [](const std::string& c, const std::string& d) {
    const Run result = ppsim_cli({"run", "--model", "llama3.1-70b", "-s", "interleaved-1f1b", "-p", "4", "-v", "5", "-t",
                                  "4", "--sequence-parallel", "--context-parallel", c, "-d", d, "--global-batch", "128",
                                  "--seq", "8192", "--distributed-optimizer", "--format", "json"});
    REQUIRE(result.status == 0);
    return nlohmann::json::parse(result.out);
  };
  const nlohmann::json split = run("2", "2");
  const nlohmann::json whole = run("1", "4");
  CHECK(split.at("training").at("gpus") == 64);
  CHECK(split.at("training").at("fits") == true);
  CHECK(whole.at("training").at("fits") == false);
  CHECK(split.at("scenario").at("context-parallel") == 2);
  CHECK(split.at("scenario").at("cp-comm") == "p2p");
  CHECK_FALSE(whole.at("scenario").contains("context-parallel"));  // a layout without CP keeps its keys
  CHECK(split.at("m") == 64);  // the global batch over b * d: CP takes no micro-batches
}

TEST_CASE("Each context-parallel rule of Megatron-LM and Transformer Engine is one line naming the flag",
          "[cli][transformer][context-parallel][errors]") {
  const std::vector<std::string> base = {"run", "--model", "llama3.1-70b", "-p", "4", "-t", "4", "--sequence-parallel",
                                         "--seq", "8192", "-d", "1", "--global-batch", "16"};
  auto error = [&](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    const Run run = ppsim_cli(args);
    CHECK(run.status == 2);
    CHECK(run.out.empty());
    return run.err;
  };
  CHECK(error({"--context-parallel", "3"}) == "ppsim: error: --context-parallel: c=3 does not split s=8192 into 2c "
                                             "equal chunks, as Megatron's load-balanced split needs\n");
  CHECK(error({"--context-parallel", "2", "--no-flash-attention"}) ==
        "ppsim: error: --context-parallel: needs flash attention, the fused attention Transformer Engine's context "
        "parallelism runs in\n");
  CHECK(error({"--context-parallel", "2", "--cp-comm", "ring"}) ==
        "ppsim: error: --cp-comm: must be p2p, a2a, allgather or a2a+p2p, got 'ring'\n");
  CHECK(error({"--context-parallel", "4", "--cp-comm", "a2a+p2p"}) ==
        "ppsim: error: --cp-comm: a2a+p2p needs --hierarchical-context-parallel-sizes A,P\n");
  CHECK(error({"--context-parallel", "4", "--cp-comm", "a2a+p2p", "--hierarchical-context-parallel-sizes", "2,3"}) ==
        "ppsim: error: --hierarchical-context-parallel-sizes: 2 * 3 is not c=4\n");
  CHECK(error({"--context-parallel", "4", "--hierarchical-context-parallel-sizes", "2,2"}) ==
        "ppsim: error: --hierarchical-context-parallel-sizes: needs --cp-comm a2a+p2p, got p2p\n");
  CHECK(error({"--context-parallel", "32", "--cp-comm", "a2a"}) ==
        "ppsim: error: --cp-comm: a2a splits this rank's 16 heads over 32 ranks, which must divide them\n");
  CHECK(error({"--context-parallel", "2", "--hierarchical-context-parallel-sizes", "2"}) ==
        "ppsim: error: --hierarchical-context-parallel-sizes: must be two sizes A,P (the all-to-all group's and the "
        "ring's), got '2'\n");
  const Run plain = ppsim_cli({"run", "-p", "4", "--context-parallel", "2"});
  CHECK(plain.err == "ppsim: error: --context-parallel: needs --model (a transformer study)\n");
}

TEST_CASE("HSDP runs as FSDP's shards replicated, and refuses what it cannot replicate in one line",
          "[cli][transformer][fsdp]") {
  const std::vector<std::string> base = {"run", "-s", "zbv", "--model", "llama3.1-8b", "-p", "4", "-m", "8", "-d", "16"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    return ppsim_cli(args);
  };
  const Run hybrid = with({"--fsdp", "--data-parallel-replicate", "2", "--format", "json"});
  REQUIRE(hybrid.status == 0);
  const nlohmann::json result = nlohmann::json::parse(hybrid.out);
  CHECK(result["scenario"]["data-parallel-replicate"] == 2);
  CHECK(result["training"]["fsdp_reduce_time"].get<double>() > 0);
  CHECK(with({"--data-parallel-replicate", "2"}).err ==
        "ppsim: error: --data-parallel-replicate: HSDP replicates FSDP's shards, so it needs --fsdp\n");
  CHECK(with({"--fsdp", "--data-parallel-replicate", "3"}).err ==
        "ppsim: error: --data-parallel-replicate: R=3 does not divide d=16 into replicas of equal shards\n");
}
