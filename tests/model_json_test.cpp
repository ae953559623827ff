// SPDX-License-Identifier: Apache-2.0
// Reading configs/models and configs/hardware: round trips, and bad files refused with the JSON path.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "models/json/architecture_json.hpp"
#include "models/json/hardware_profile_json.hpp"
#include "models/json/json_input_error.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using nlohmann::json;

namespace {

// The message of the JsonInputError `read` throws.
template <typename Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const ppsim::JsonInputError& error) {
    return error.what();
  }
  FAIL("no JsonInputError");
  return {};
}

json h100_json() { return json::parse(ppsim::hardware_profile_to_json(*ppsim::find_hardware_preset("H100-SXM5-80GB")).dump()); }

}  // namespace

TEST_CASE("Every hardware preset survives a round trip through its JSON form") {
  for (const auto& preset : ppsim::hardware_presets()) {
    CAPTURE(preset.name);
    const json written = json::parse(ppsim::hardware_profile_to_json(preset).dump());
    const ppsim::LoadedProfile read = ppsim::hardware_profile_from_json(written, "round-trip");
    CHECK(read.profile == preset);
    CHECK(read.calibration.is_null());
  }
}

TEST_CASE("A measured profile keeps its calibration object through a round trip") {
  const nlohmann::ordered_json calibration = {{"device", "test GPU"}, {"runs", 7}};
  const json written =
      json::parse(ppsim::hardware_profile_to_json(*ppsim::find_hardware_preset("H200-SXM-141GB"), calibration).dump());
  const ppsim::LoadedProfile read = ppsim::hardware_profile_from_json(written, "p.json");
  CHECK(read.calibration.at("device") == "test GPU");
  CHECK(read.calibration.at("runs") == 7);
}

TEST_CASE("A hardware profile with a bad field is refused with the JSON path of that field") {
  json j = h100_json();
  SECTION("a missing field") {
    j.erase("memory_bandwidth");
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.memory_bandwidth: is missing"));
  }
  SECTION("a missing nested field") {
    j["inter_node"].erase("latency");
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.inter_node.latency: is missing"));
  }
  SECTION("efficiency sizes that do not increase") {
    j["efficiency_tables"]["memory"][2][0] = 1e6;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.efficiency_tables.memory[2]: sizes must increase strictly, got 1000000.0 after "
                      "33554432.0"));
  }
  SECTION("a fraction above 1") {
    j["efficiency_tables"]["gemm"][0][1] = 1.5;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Contains("h.json: $.efficiency_tables.gemm: "));
  }
  SECTION("a negative bandwidth") {
    j["intra_node"]["bandwidth"] = -1;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.intra_node.bandwidth: must be a finite number > 0, got -1"));
  }
  SECTION("a string where a number belongs") {
    j["memory_capacity"] = "80 GiB";
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.memory_capacity: must be an integer, got string \"80 GiB\""));
  }
  SECTION("an NVLS group below two GPUs") {
    j["intra_node"]["nvls"]["min_ranks"] = 1;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.intra_node.nvls.min_ranks: must be an integer from 2 to 1048576, got 1"));
  }
  SECTION("an unknown key in the NVLS figures") {
    j["intra_node"]["nvls"]["bus_bandwidth"] = 4.8e11;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Contains("h.json: $.intra_node.nvls.bus_bandwidth: unknown key"));
  }
  SECTION("NVLS between nodes") {
    j["inter_node"]["nvls"] = j["intra_node"]["nvls"];
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Contains("h.json: $.inter_node.nvls: unknown key"));
  }
  SECTION("an unknown key, with the nearest known one") {
    j["memory_bandwith"] = 1;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.memory_bandwith: unknown key (did you mean \"memory_bandwidth\"?)"));
  }
  SECTION("no bf16 peak") {
    j["dense_peak_flops"].erase("bf16");
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Contains("h.json: $.dense_peak_flops.bf16: is missing"));
  }
  SECTION("an efficiency marker that is neither assumed, measured nor published") {
    j["efficiency"] = "guessed";
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.efficiency: must be \"assumed\", \"measured\" or \"published\", got 'guessed'"));
  }
  SECTION("published efficiencies without their citations") {
    j.erase("sources");
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.sources: is missing"));
  }
  SECTION("a citation that is not a string") {
    j["sources"][1] = 7;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.sources[1]: must be a citation (a non-empty string), got number 7"));
  }
  SECTION("citations on assumed tables") {
    j["efficiency"] = "assumed";
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.sources: is for \"efficiency\": \"published\" profiles (their citations)"));
  }
  SECTION("a GEMM tile that is not two whole numbers") {
    j["gemm_model"]["tile"] = {128, 0.5};
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.gemm_model.tile: must be [rows, cols], two whole numbers from 1 to 4096, got array [128,0.5]"));
  }
  SECTION("a GEMM peak fraction for a precision the profile has no peak for") {
    j["gemm_model"]["peak_fraction"]["int4"] = 0.5;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.gemm_model.peak_fraction.int4: has no peak in dense_peak_flops"));
  }
  SECTION("a GEMM model with no SMs") {
    j["gemm_model"]["sm_count"] = 0;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Contains("h.json: $.gemm_model.sm_count: "));
  }
  SECTION("a GEMM peak fraction above 1") {
    j["gemm_model"]["peak_fraction"]["bf16"] = 1.5;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Contains("h.json: $.gemm_model.peak_fraction.bf16: "));
  }
  SECTION("a sustained clock of 0") {
    j["sustained_clock"] = 0;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }), Contains("h.json: $.sustained_clock: "));
  }
  SECTION("an empty list of sources") {
    j["sources"] = nlohmann::json::array();
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.sources: must be a non-empty list of citations (strings)"));
  }
  SECTION("a fused-attention table without its pair") {
    j["efficiency_tables"].erase("attention_backward");
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.efficiency_tables.attention_backward: is missing: the fused-attention tables come as "
                      "a pair"));
  }
}

TEST_CASE("An unreadable or malformed file is refused with its name") {
  CHECK_THAT(error_of([] { ppsim::load_hardware_profile("/nonexistent/h.json"); }),
             Equals("/nonexistent/h.json: cannot read the file"));
  CHECK_THAT(error_of([] { ppsim::load_architecture(std::string(PPSIM_SOURCE_DIR) + "/README.md"); }),
             Contains("README.md: malformed JSON: "));
}

TEST_CASE("Every architecture preset survives a round trip through its JSON form") {
  for (const auto& preset : ppsim::architecture_presets()) {
    CAPTURE(preset.name);
    const json written = json::parse(ppsim::architecture_to_json(preset).dump());
    CHECK(ppsim::architecture_from_json(written, "round-trip") == preset);
  }
}

TEST_CASE("An MoE architecture survives a round trip and bad expert settings name their JSON path") {
  ppsim::Architecture arch = *ppsim::find_architecture_preset("llama3.1-8b");
  arch.name = "moe";
  arch.head_dim = 256;
  arch.qk_norm = true;
  arch.moe = {.experts = 64, .top_k = 6, .expert_ffn_hidden = 1408, .shared_experts = 2,
              .shared_expert_ffn_hidden = 2816, .dense_layers = 1, .layer_freq = 2};
  const json written = json::parse(ppsim::architecture_to_json(arch).dump());
  CHECK(ppsim::architecture_from_json(written, "round-trip") == arch);
  // A dense model writes none of the MoE keys, so configs/models stay as they were.
  const json dense = json::parse(ppsim::architecture_to_json(*ppsim::find_architecture_preset("llama3.1-8b")).dump());
  CHECK_FALSE(dense.contains("moe"));
  CHECK_FALSE(dense.contains("head_dim"));
  json j = written;
  SECTION("more experts per token than experts") {
    j["moe"]["top_k"] = 65;
    CHECK_THAT(error_of([&] { ppsim::architecture_from_json(j, "m.json"); }),
               Equals("m.json: $.moe.top_k: must be an integer from 1 to 64, got 65"));
  }
  SECTION("a shared expert width without shared experts") {
    j["moe"].erase("shared_experts");
    CHECK_THAT(error_of([&] { ppsim::architecture_from_json(j, "m.json"); }),
               Equals("m.json: $.moe.shared_expert_ffn_hidden: needs shared_experts above 0"));
  }
  SECTION("every layer dense") {
    j["moe"]["dense_layers"] = 32;
    CHECK_THAT(error_of([&] { ppsim::architecture_from_json(j, "m.json"); }),
               Equals("m.json: $.moe.dense_layers: must be an integer from 0 to 31, got 32"));
  }
  SECTION("experts so many that the parameter count would not stay exact") {
    // Regression: 2^20 experts of width 2^24 at hidden 2^24 overflowed the int64 parameter count.
    j["hidden"] = 1 << 24;
    j["moe"]["experts"] = 1 << 20;
    j["moe"]["top_k"] = 1;
    j["moe"]["expert_ffn_hidden"] = 1 << 24;
    CHECK_THAT(error_of([&] { ppsim::architecture_from_json(j, "m.json"); }),
               Equals("m.json: $.moe: the model would have more than 2^53 parameters"));
  }
  SECTION("heads whose total width is out of range") {
    j["head_dim"] = 1 << 24;
    CHECK_THAT(error_of([&] { ppsim::architecture_from_json(j, "m.json"); }),
               Equals("m.json: $.head_dim: heads x head_dim must be at most 16777216, got 32 x 16777216"));
  }
  SECTION("an unknown expert key") {
    j["moe"]["num_experts"] = 8;
    CHECK_THAT(error_of([&] { ppsim::architecture_from_json(j, "m.json"); }),
               Contains("m.json: $.moe.num_experts: unknown key"));
  }
}

TEST_CASE("An architecture with inconsistent heads is refused with the JSON path") {
  json j = json::parse(ppsim::architecture_to_json(*ppsim::find_architecture_preset("llama3.1-8b")).dump());
  SECTION("heads that do not divide hidden") {
    j["heads"] = 30;
    CHECK_THAT(error_of([&] { ppsim::architecture_from_json(j, "m.json"); }),
               Equals("m.json: $.heads: 30 heads do not divide hidden 4096"));
  }
  SECTION("KV heads that do not divide heads") {
    j["kv_heads"] = 5;
    CHECK_THAT(error_of([&] { ppsim::architecture_from_json(j, "m.json"); }),
               Equals("m.json: $.kv_heads: 5 KV heads do not divide 32 heads"));
  }
  SECTION("zero layers") {
    j["layers"] = 0;
    CHECK_THAT(error_of([&] { ppsim::architecture_from_json(j, "m.json"); }),
               Equals("m.json: $.layers: must be an integer from 1 to 100000, got 0"));
  }
  SECTION("an unknown norm") {
    j["norm"] = "batchnorm";
    CHECK_THAT(error_of([&] { ppsim::architecture_from_json(j, "m.json"); }),
               Equals("m.json: $.norm: must be \"layernorm\" or \"rmsnorm\", got \"batchnorm\""));
  }
}

TEST_CASE("Measured collective tables survive a round trip and bad ones are refused with their JSON path") {
  json j = h100_json();
  j["collectives"] = json::array({{{"op", "all_reduce"}, {"ranks", 8}, {"bus_bandwidth", {{1e6, 1e11}, {1e9, 3.6e11}}}},
                                  {{"op", "all_gather"}, {"ranks", 2}, {"bus_bandwidth", {{4096, 1e9}}}}});
  const ppsim::HardwareProfile read = ppsim::hardware_profile_from_json(j, "h.json").profile;
  REQUIRE(read.collectives.size() == 2);
  CHECK(read.collective_table(ppsim::Collective::kAllReduce, 8)->points()[1] == ppsim::BusBandwidthPoint{1e9, 3.6e11});
  CHECK(read.collective_table(ppsim::Collective::kAllReduce, 4) == nullptr);
  const json written = json::parse(ppsim::hardware_profile_to_json(read).dump());
  CHECK(ppsim::hardware_profile_from_json(written, "again").profile == read);
  SECTION("an unknown operation") {
    j["collectives"][1]["op"] = "broadcast";
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Equals("h.json: $.collectives[1].op: must be all_reduce, reduce_scatter, all_gather or all_to_all, got "
                      "'broadcast'"));
  }
  SECTION("a group larger than a node") {
    j["collectives"][0]["ranks"] = 16;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Contains("collectives[0] (all_reduce over 16 ranks) spans more GPUs than a node has (8)"));
  }
  SECTION("the same table twice") {
    j["collectives"][1] = j["collectives"][0];
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Contains("collectives[1] (all_reduce over 8 ranks) is given twice"));
  }
  SECTION("a zero bandwidth") {
    j["collectives"][0]["bus_bandwidth"][0][1] = 0;
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Contains("h.json: $.collectives[0].bus_bandwidth: point 0 (bytes 1e+06, bus bandwidth 0): bus bandwidth "
                        "must be finite and > 0"));
  }
  SECTION("an unknown key in a table") {
    j["collectives"][0]["algorithm"] = "ring";
    CHECK_THAT(error_of([&] { ppsim::hardware_profile_from_json(j, "h.json"); }),
               Contains("h.json: $.collectives[0].algorithm: unknown key"));
  }
}
