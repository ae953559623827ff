// SPDX-License-Identifier: Apache-2.0
// Memory that matches what ran: the terms that over-counted runs which fit on 80 GB GPUs (issue 33),
// each computed by hand, and the runs themselves, which must fit.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/transformer/data_parallel.hpp"
#include "models/transformer/layer_costs.hpp"
#include "models/transformer/pass_costs.hpp"
#include "models/transformer/stage_plan.hpp"
#include "models/transformer/static_memory.hpp"
#include "study/common/errors.hpp"
#include "support/cli_run.hpp"
#include "support/documented_figures.hpp"
#include "support/ideal_machine.hpp"

using Catch::Matchers::WithinRel;
using ppsim::Architecture;
using ppsim::TrainingLayout;
using ppsim::test::gpt;
using ppsim::test::ideal_machine;
using ppsim::test::source_path;

TEST_CASE("Under FP8 a layer stashes its linear layers' FP8 inputs and keeps the attention output twice") {
  // gpt() (h = 1024, f = 4096, no dropout), s = 2048, b = 1, t = 4 with sequence parallelism.
  // bf16 per token: norms' inputs 4h, QKV and MLP-in inputs 2h + 2h (all over t), Q K V 6h, the
  // projection's input 2h, the MLP 2f + 2f (over t). FP8 saves the QKV, MLP-in and MLP-out inputs
  // in 1 byte (-h, -h, -f) and adds the projection input's FP8 copy (+h): -(h + f) per token over t.
  const Architecture arch = gpt();
  TrainingLayout l;
  l.seq = 2048;
  l.tensor_parallel = 4;
  l.sequence_parallel = true;
  const double bf16 = ppsim::activation_bytes_per_layer(arch, l.activation_layout());
  l.precision = "fp8";
  const double fp8 = ppsim::activation_bytes_per_layer(arch, l.activation_layout());
  const double tokens = 2048;
  CHECK_THAT(bf16, WithinRel(tokens * (8 * 1024 + 8 * 1024 + 4 * 4096) / 4.0, 1e-15));
  CHECK_THAT(bf16 - fp8, WithinRel(tokens * (1024 + 4096) / 4.0, 1e-15));
  // The weight-gradient pass reads FP8 casts of inputs and output gradients: half the bf16 bytes.
  TrainingLayout b = l;
  b.precision = "bf16";
  CHECK_THAT(ppsim::weight_grad_bytes_per_layer(arch, l.activation_layout()),
             WithinRel(ppsim::weight_grad_bytes_per_layer(arch, b.activation_layout()) / 2, 1e-15));
}

TEST_CASE("FP8 parameters replace the bf16 weights and their FP8 copies with the FP8 weight and its transpose") {
  // gpt(4) on p = 2, t = 2: 12,582,912 linear weights on each device (see transformer_model_test).
  const Architecture arch = gpt(4);
  const ppsim::StagePlan plan = ppsim::plan_stages(arch, 2, {});
  TrainingLayout l;
  l.tensor_parallel = 2;
  l.pipeline = 2;
  l.precision = "fp8";
  const auto copies = ppsim::static_memory_per_device(arch, l, plan, {0, 1}, 2);
  l.fp8_param_gather = true;
  const auto params = ppsim::static_memory_per_device(arch, l, plan, {0, 1}, 2);
  // 2 + 2 bytes per linear weight become 1 + 1: 2 bytes fewer each; the rest stays bf16.
  CHECK(copies[1].parameters - params[1].parameters == 2 * 12'582'912);
  CHECK(params[1].parameters == std::llround(2 * params[1].parameter_count));
  CHECK(params[1].gradients == copies[1].gradients);
  // The distributed optimizer gathers the FP8 share in 1 byte: a device of only linear weights
  // gathers half the bf16 bytes.
  CHECK_THAT(ppsim::fp8_parameter_share(l, params[1]), WithinRel(12'582'912.0 / params[1].parameter_count, 1e-15));
}

TEST_CASE("The gradient buffer and its reduction take the reduction dtype: fp32 by default with bf16 and fp8, fp16 with fp16") {
  TrainingLayout l;
  CHECK(ppsim::grad_reduce_dtype(l) == "fp32");
  CHECK(ppsim::gradient_bytes(l) == 4);
  l.precision = "fp8";
  CHECK(ppsim::gradient_bytes(l) == 4);
  l.precision = "fp16";
  CHECK(ppsim::grad_reduce_dtype(l) == "fp16");
  CHECK(ppsim::gradient_bytes(l) == 2);
  l.precision = "bf16";
  l.grad_reduce_dtype = "bf16";
  CHECK(ppsim::gradient_bytes(l) == 2);

  const Architecture arch = gpt(4);
  const ppsim::StagePlan plan = ppsim::plan_stages(arch, 1, {});
  TrainingLayout fp32;
  fp32.data_parallel = 4;
  TrainingLayout bf16 = fp32;
  bf16.grad_reduce_dtype = "bf16";
  const auto wide = ppsim::static_memory_per_device(arch, fp32, plan, {0}, 1);
  const auto narrow = ppsim::static_memory_per_device(arch, bf16, plan, {0}, 1);
  CHECK(wide[0].gradients == std::llround(4 * wide[0].parameter_count));
  CHECK(narrow[0].gradients == std::llround(2 * narrow[0].parameter_count));
  // The reduction moves the buffer's bytes: a bf16 reduction of P parameters is the fp32 one of P/2.
  const ppsim::TransformerSetup narrow_setup{arch, bf16, ideal_machine()};
  const ppsim::TransformerSetup wide_setup{arch, fp32, ideal_machine()};
  CHECK(ppsim::gradient_reduce_time(narrow_setup, 1e8) == ppsim::gradient_reduce_time(wide_setup, 5e7));
}

TEST_CASE("Every validation run, each of which ran on 80 GB GPUs, fits") {
  const nlohmann::json cases =
      nlohmann::json::parse(ppsim::test::read_whole(source_path("configs/validation/cases.json")))["cases"];
  REQUIRE(cases.size() >= 70);
  for (const nlohmann::json& c : cases) {
    INFO(c["name"].get<std::string>());
    const ppsim::test::CliRun run = ppsim::test::cli(
        {"run", "-c", source_path("configs/validation/" + c["config"].get<std::string>()), "--format", "json"});
    REQUIRE(run.status == ppsim::kExitOk);
    const nlohmann::json training = nlohmann::json::parse(run.out)["training"];
    INFO(training["memory_verdict"].get<std::string>());
    CHECK(training["fits"] == true);
  }
}

TEST_CASE("Llama-3 70B in FP8 at t=4 p=8 v=5 d=2, NeMo's recommended H100 layout, fits, with NeMo's settings or without") {
  // NVIDIA/NeMo scripts/performance/recommended_model_configs/model_configs_h100.csv: pre_train,
  // llama3, 70b, fp8, 64 GPUs, seq 8192, TP 4, PP 8, CP 1, VP 5, MBS 1, GBS 128.
  const std::vector<std::string> layout{"run",  "-s", "interleaved-1f1b", "--model", "llama3.1-70b", "--seq", "8192",
                                        "-t",   "4",  "-p",               "8",       "-v",           "5",     "-d",
                                        "2",    "-b", "1",                "--global-batch", "128", "--precision", "fp8",
                                        "--sequence-parallel", "--tp-comm-overlap", "--distributed-optimizer",
                                        "--format", "json"};
  std::vector<std::string> nemo = layout;
  for (const char* flag : {"--grad-reduce-dtype", "bf16", "--fp8-param-gather"}) nemo.push_back(flag);
  for (const auto& args : {layout, nemo}) {
    const ppsim::test::CliRun run = ppsim::test::cli(args);
    REQUIRE(run.status == ppsim::kExitOk);
    const nlohmann::json training = nlohmann::json::parse(run.out)["training"];
    INFO(training["memory_verdict"].get<std::string>());
    CHECK(training["fits"] == true);
  }
}

TEST_CASE("The settings of what ran are refused one line each when they cannot apply") {
  const std::vector<std::string> base{"run", "--model", "llama3.1-8b", "-p", "2", "-m", "4"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), base.begin(), base.end());
    return ppsim::test::cli(args);
  };
  const ppsim::test::CliRun no_fp8 = with({"--fp8-param-gather"});
  CHECK(no_fp8.status == ppsim::kExitBadInput);
  CHECK(no_fp8.err == "ppsim: error: --fp8-param-gather: needs --precision fp8, whose FP8 weights it keeps as the "
                      "parameters\n");
  const ppsim::test::CliRun dtype = with({"--grad-reduce-dtype", "fp64"});
  CHECK(dtype.status == ppsim::kExitBadInput);
  CHECK(dtype.err == "ppsim: error: --grad-reduce-dtype: must be fp32, bf16 or fp16, got 'fp64'\n");
}

TEST_CASE("FP8 parameters are gathered in 1 byte, the rest of the parameters in 2") {
  // A device of only linear weights gathers half the bf16 bytes: the same time as half as many bf16
  // parameters.
  const Architecture arch = gpt(4);
  TrainingLayout l;
  l.precision = "fp8";
  l.fp8_param_gather = true;
  l.data_parallel = 4;
  l.distributed_optimizer = true;
  const ppsim::TransformerSetup setup{arch, l, ideal_machine()};
  CHECK(ppsim::parameter_gather_time(setup, 1e8, 1.0) == ppsim::parameter_gather_time(setup, 5e7, 0.0));
  CHECK(ppsim::parameter_gather_time(setup, 1e8, 0.5) == ppsim::parameter_gather_time(setup, 7.5e7, 0.0));
}

TEST_CASE("A 16-bit gradient dtype under --fsdp is FSDP2's reduce_dtype, and fp32 is what it does unasked") {
  auto run = [](std::vector<std::string> more) {
    std::vector<std::string> args = {"run", "--model", "llama3.1-8b", "-p", "2", "-m", "4", "-d", "2", "--fsdp",
                                     "--format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    const ppsim::test::CliRun result = ppsim::test::cli(args);
    REQUIRE(result.status == ppsim::kExitOk);
    return nlohmann::json::parse(result.out);
  };
  const nlohmann::json plain = run({});
  const nlohmann::json fp32 = run({"--grad-reduce-dtype", "fp32"});
  const nlohmann::json bf16 = run({"--grad-reduce-dtype", "bf16"});
  CHECK(plain["scenario"]["grad-reduce-dtype"] == "fp32");
  CHECK(plain["training"] == fp32["training"]);
  CHECK(bf16["scenario"]["grad-reduce-dtype"] == "bf16");
  // Half the bytes to reduce-scatter and to hold unsharded; the fp32 shards stay as they were.
  CHECK(bf16["training"]["fsdp_reduce_time"].get<double>() < fp32["training"]["fsdp_reduce_time"].get<double>());
  CHECK(bf16["training"]["memory"][0]["unsharded"].get<double>() <
        fp32["training"]["memory"][0]["unsharded"].get<double>());
  CHECK(bf16["training"]["memory"][0]["gradients"] == fp32["training"]["memory"][0]["gradients"]);
}

TEST_CASE("The two settings of what ran go into the scenario and come back from it") {
  const ppsim::test::CliRun run =
      ppsim::test::cli({"run", "--model", "llama3.1-8b", "-p", "2", "-m", "4", "--precision", "fp8",
                        "--grad-reduce-dtype", "bf16", "--fp8-param-gather", "--format", "json"});
  REQUIRE(run.status == ppsim::kExitOk);
  const nlohmann::json scenario = nlohmann::json::parse(run.out)["scenario"];
  CHECK(scenario["grad-reduce-dtype"] == "bf16");
  CHECK(scenario["fp8-param-gather"] == true);
  // The default is named as it resolves: fp32 with bf16.
  const ppsim::test::CliRun plain = ppsim::test::cli({"run", "--model", "llama3.1-8b", "-p", "2", "-m", "4", "--format", "json"});
  REQUIRE(plain.status == ppsim::kExitOk);
  CHECK(nlohmann::json::parse(plain.out)["scenario"]["grad-reduce-dtype"] == "fp32");
}

TEST_CASE("Gradient compression is refused where it cannot apply, one line each") {
  const std::vector<std::string> base{"run", "--model", "llama3.1-8b", "-p", "2", "-m", "4", "-d", "2"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), base.begin(), base.end());
    return ppsim::test::cli(args);
  };
  const ppsim::test::CliRun bad = with({"--grad-compression", "2bit"});
  CHECK(bad.status == ppsim::kExitBadInput);
  CHECK(bad.err == "ppsim: error: --grad-compression: must be none, fp8 or 1bit, got '2bit'\n");
  const ppsim::test::CliRun zero = with({"--grad-compression", "1bit", "--distributed-optimizer"});
  CHECK(zero.status == ppsim::kExitBadInput);
  CHECK(zero.err == "ppsim: error: --grad-compression: 1bit (1-bit Adam) keeps the whole optimizer state on every "
                    "rank; it does not combine with --distributed-optimizer\n");
  const ppsim::test::CliRun fsdp = with({"--grad-compression", "fp8", "--fsdp"});
  CHECK(fsdp.status == ppsim::kExitBadInput);
  CHECK(fsdp.err == "ppsim: error: --grad-compression: compresses Megatron-style data-parallel reductions, not "
                    "FSDP's; give one of the two\n");
  // Accepted, it moves fewer bytes: the data-parallel reduction of this layout gets shorter.
  const auto reduce = [&](const char* compression) {
    const ppsim::test::CliRun run = with({"--grad-compression", compression, "--format", "json"});
    REQUIRE(run.status == ppsim::kExitOk);
    return nlohmann::json::parse(run.out)["training"]["dp_reduce_time"].get<double>();
  };
  CHECK(reduce("fp8") < reduce("none"));
  CHECK(reduce("1bit") < reduce("fp8"));
}
