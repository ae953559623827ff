// SPDX-License-Identifier: Apache-2.0
// ppsim-calibrate end to end, in-process: the CPU backend at --quick sizes writes a profile that
// the reader accepts and that reproduces its own measurements; the reader refuses broken profiles
// with the JSON path; bad flags are refused before anything runs, and leave no file behind.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "models/json/architecture_json.hpp"
#include "models/json/hardware_profile_json.hpp"
#include "models/json/json_input_error.hpp"
#include "tools/calibrate/cli.hpp"
#include "tools/calibrate/cpu_backend.hpp"
#include "tools/calibrate/tests/fake_backend.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using Catch::Matchers::EndsWith;
using Catch::Matchers::WithinRel;
using nlohmann::json;
using ppsim::calibrate::BackendEntry;
namespace fs = std::filesystem;

namespace {

struct Run {
  int status = 0;
  std::string out;
  std::string err;
};

Run run(const std::vector<std::string>& args, const std::vector<BackendEntry>& backends) {
  std::ostringstream out, err;
  Run r;
  r.status = ppsim::calibrate::run_calibrate_cli(args, backends, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

Run run_cpu(const std::vector<std::string>& args) { return run(args, {ppsim::calibrate::cpu_backend_entry()}); }

// A fresh directory under the system's temporary directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("ppsim-calibrate-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

json read(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// The CPU backend's --quick profile, measured once for every test that reads it.
const json& cpu_quick_profile() {
  static const json profile = [] {
    TempDir dir;
    const std::string path = dir.file("cpu.json");
    const Run r = run_cpu({"--backend", "cpu", "--quick", "-o", path});
    INFO(r.err);
    REQUIRE(r.status == 0);
    return read(path);
  }();
  return profile;
}

// A backend entry that fails the test if the command line asks it anything.
BackendEntry untouchable(const std::string& name) {
  return BackendEntry{
      .name = name,
      .unavailable = [name]() -> std::string {
        FAIL("the " << name << " backend was asked whether it is available");
        return {};
      },
      .create = [name](bool) -> std::unique_ptr<ppsim::calibrate::Backend> {
        FAIL("the " << name << " backend was created");
        return nullptr;
      },
  };
}

BackendEntry fake_entry(const std::string& name, std::string unavailable_because) {
  return BackendEntry{
      .name = name,
      .unavailable = [why = std::move(unavailable_because)] { return why; },
      .create = [name](bool) -> std::unique_ptr<ppsim::calibrate::Backend> {
        ppsim::calibrate::testing::FakeMachine machine;
        machine.backend = name;
        return std::make_unique<ppsim::calibrate::testing::FakeBackend>(machine);
      },
  };
}

}  // namespace

TEST_CASE("The CPU backend at --quick sizes writes a measured profile the reader and the validator accept") {
  const json& j = cpu_quick_profile();
  const auto loaded = ppsim::hardware_profile_from_json(j, "cpu.json");
  CHECK(ppsim::validate_hardware_profile(loaded.profile).empty());
  CHECK(j.at("efficiency") == "measured");
  CHECK(j.at("latency") == "measured");
  CHECK_FALSE(loaded.profile.efficiency_assumed);
  CHECK_THAT(loaded.profile.source, Contains("best measured GEMM rate"));
  CHECK_THAT(loaded.profile.source, Contains("best measured copy rate"));
  // The same top-level keys as the presets (their descriptive "datasheet" and "efficiency_note" aside,
  // and the citations and GEMM shape model of their published efficiencies, which a measured profile
  // replaces with its own tables), plus the record of the run, the measured collectives, the host's
  // CRC32 rate and the kernels' variability, which only a measured profile has.
  const json preset = read(std::string(PPSIM_SOURCE_DIR) + "/configs/hardware/h200-sxm-141gb.json");
  std::vector<std::string> preset_keys, keys;
  for (const auto& item : preset.items()) {
    if (item.key() != "datasheet" && item.key() != "efficiency_note" && item.key() != "sources" &&
        item.key() != "gemm_model") {
      preset_keys.push_back(item.key());
    }
  }
  for (const auto& item : j.items()) {
    if (item.key() != "calibration" && item.key() != "collectives" && item.key() != "crc32_rate" &&
        item.key() != "variability") {
      keys.push_back(item.key());
    }
  }
  // zlib's CRC32 runs at hundreds of MB/s to tens of GB/s on any host.
  CHECK(loaded.profile.crc32_rate > 1e8);
  CHECK(loaded.profile.crc32_rate < 1e12);
  CHECK(j.at("calibration").at("checksum").at("seconds").at("runs").get<int>() >= 5);
  // Each op kind's variability is a coefficient of variation of repeated GEMMs: some, not huge.
  CHECK(loaded.profile.has_variability());
  for (const double cv : loaded.profile.op_variability) {
    CHECK(cv >= 0);
    CHECK(cv < 10);
  }
  CHECK(loaded.profile.host_bandwidth == loaded.profile.memory_bandwidth);  // the CPU's memory is the host's
  std::sort(preset_keys.begin(), preset_keys.end());
  std::sort(keys.begin(), keys.end());
  CHECK(keys == preset_keys);
  CHECK(j.at("collectives").size() == loaded.profile.collectives.size());
  CHECK_FALSE(loaded.profile.collectives.empty());

  const json& cal = loaded.calibration;
  REQUIRE(cal.is_object());
  CHECK_THAT(cal.at("tool").get<std::string>(), StartsWith("ppsim-calibrate "));
  CHECK(std::regex_match(cal.at("date").get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  CHECK_THAT(cal.at("command_line").get<std::string>(), StartsWith("ppsim-calibrate --backend cpu --quick -o "));
  CHECK_THAT(cal.at("command_line").get<std::string>(), Catch::Matchers::EndsWith("cpu.json"));
  CHECK_FALSE(cal.at("device").at("name").get<std::string>().empty());
  CHECK(cal.at("request").at("quick") == true);
  for (const char* group : {"gemm", "memory", "links"}) {
    INFO(group);
    REQUIRE(cal.at(group).size() > 0);
    for (const json& m : cal.at(group)) {
      const json& s = m.at("seconds");
      CHECK(s.at("runs") == 3);
      CHECK(s.at("min").get<double>() > 0);
      CHECK(s.at("min") <= s.at("median"));
      CHECK(s.at("median") <= s.at("max"));
    }
  }
}

TEST_CASE("Every measured table has strictly increasing sizes and fractions above 0 and at most 1") {
  const json& tables = cpu_quick_profile().at("efficiency_tables");
  const std::string name = GENERATE("gemm", "memory", "intra_link", "inter_link");
  const json& rows = tables.at(name);
  INFO(name);
  REQUIRE(rows.size() >= 3);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double fraction = rows[i][1].get<double>();
    CHECK(fraction > 0);
    CHECK(fraction <= 1);
    if (i > 0) CHECK(rows[i][0].get<double>() > rows[i - 1][0].get<double>());
  }
}

TEST_CASE("The profile's interpolation returns the measured fraction at every measured size") {
  const json& j = cpu_quick_profile();
  const auto p = ppsim::hardware_profile_from_json(j, "cpu.json").profile;
  // Exact at the table's points...
  for (const auto* table : {&p.gemm, &p.memory, &p.intra_link, &p.inter_link}) {
    for (const auto& point : table->points()) CHECK(table->at(point.size) == point.fraction);
  }
  // ...which are the measurements: at each GEMM size, the median of the GEMMs of that size (F, I
  // and W of one grid size have the same FLOPs).
  std::map<double, std::vector<double>> fractions;
  for (const json& g : j.at("calibration").at("gemm")) {
    fractions[g.at("flops").get<double>()].push_back(g.at("fraction_of_peak").get<double>());
  }
  REQUIRE(fractions.size() == p.gemm.points().size());
  for (auto& [flops, values] : fractions) {
    INFO(flops);
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    if (n % 2 == 1) {
      CHECK(p.gemm.at(flops) == values[n / 2]);
    } else {
      CHECK_THAT(p.gemm.at(flops), WithinRel((values[n / 2 - 1] + values[n / 2]) / 2, 1e-3));
    }
  }
  // Links: the profile's message time gives back each measured median.
  for (const json& l : j.at("calibration").at("links")) {
    const double bytes = l.at("bytes").get<double>();
    INFO(bytes);
    CHECK_THAT(p.message_time(bytes, false), WithinRel(l.at("seconds").at("median").get<double>(), 2e-3));
  }
}

TEST_CASE("A calibrated profile round-trips through the writer and the reader") {
  const auto loaded = ppsim::hardware_profile_from_json(cpu_quick_profile(), "cpu.json");
  const auto written = ppsim::hardware_profile_to_json(loaded.profile, loaded.calibration);
  CHECK(json::parse(written.dump()) == cpu_quick_profile());
  const auto again = ppsim::hardware_profile_from_json(json::parse(written.dump()), "again");
  CHECK(again.profile == loaded.profile);
  CHECK(json::parse(again.calibration.dump()) == json::parse(loaded.calibration.dump()));
}

TEST_CASE("A broken calibrated profile is refused with the JSON path of the fault") {
  struct Case {
    const char* what;
    std::function<void(json&)> edit;
    const char* path;
  };
  const Case c = GENERATE(values<Case>({
      {"missing bandwidth", [](json& j) { j.erase("memory_bandwidth"); }, "$.memory_bandwidth"},
      {"missing bf16 peak", [](json& j) { j["dense_peak_flops"].erase("bf16"); }, "$.dense_peak_flops.bf16"},
      {"missing table", [](json& j) { j["efficiency_tables"].erase("memory"); }, "$.efficiency_tables.memory"},
      {"missing link latency", [](json& j) { j["intra_node"].erase("latency"); }, "$.intra_node.latency"},
      {"sizes out of order",
       [](json& j) { std::swap(j["efficiency_tables"]["gemm"][0], j["efficiency_tables"]["gemm"][1]); },
       "$.efficiency_tables.gemm[1]"},
      {"a repeated size",
       [](json& j) { j["efficiency_tables"]["intra_link"][2][0] = j["efficiency_tables"]["intra_link"][1][0]; },
       "$.efficiency_tables.intra_link[2]"},
      {"a fraction above 1", [](json& j) { j["efficiency_tables"]["memory"][0][1] = 1.5; },
       "$.efficiency_tables.memory"},
      {"calibration not an object", [](json& j) { j["calibration"] = 3; }, "$.calibration"},
  }));
  json j = cpu_quick_profile();
  c.edit(j);
  INFO(c.what);
  CHECK_THROWS_WITH(ppsim::hardware_profile_from_json(j, "cal.json"), Contains(std::string("cal.json: ") + c.path));
}

TEST_CASE("Bad flags are refused in one line naming the flag, with exit status 2 and no file") {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const Case c = GENERATE(values<Case>({
      {{"--tp", "0"}, "--tp 0: must be >= 1"},
      {{"--seq", "0"}, "--seq 0: must be >= 1"},
      {{"--micro-batch", "-2"}, "--micro-batch -2: must be >= 1"},
      {{"--tp", "two"}, "--tp"},
      {{"--precision", "bf16,fp8"}, "--precision bf16,fp8: unknown precision \"fp8\""},
      {{"--precision", ""}, "--precision"},
      {{"--model", "no-such-model"}, "--model no-such-model: neither a preset"},
      {{"--model", "llama3.1-70b", "--tp", "3"}, "--tp 3: tensor parallelism 3 does not divide the 64 attention heads"},
      {{"--backend", "tpu"}, "--backend tpu: unknown backend"},
      {{"--backend", "cuda"}, "--backend cuda: this ppsim-calibrate was built without CUDA"},
      {{"--frobnicate"}, "--frobnicate"},
      // Sizes that would allocate without bound (issue 31, item 5): ppsim's 1e9 and 2^20 tokens.
      {{"--micro-batch", "1000000"}, "--micro-batch 1000000: 4096 x 1000000 tokens per layer is above the 1048576"},
      {{"--seq", "10000000000"}, "--seq 10000000000: is absurdly large (at most 1000000000)"},
      {{"--tp", "2000000000"}, "--tp 2000000000: is absurdly large"},
  }));
  TempDir dir;
  const std::string path = dir.file("out.json");
  std::vector<std::string> args = c.args;
  args.insert(args.end(), {"--quick", "-o", path});
  const Run r = run_cpu(args);
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK_THAT(r.err, StartsWith("ppsim-calibrate: error: "));
  CHECK_THAT(r.err, Contains(c.message));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.out.empty());
  CHECK_FALSE(fs::exists(path));
  CHECK_FALSE(fs::exists(path + ".tmp"));
}

TEST_CASE("An output path in a missing directory is refused before measuring") {
  const Run r = run({"-o", "/nonexistent-ppsim-dir/profile.json"}, {untouchable("cpu")});
  CHECK(r.status == 2);
  CHECK_THAT(r.err,
             Contains("-o: cannot write /nonexistent-ppsim-dir/profile.json: directory /nonexistent-ppsim-dir does not exist"));
}

TEST_CASE("A profile written onto a device goes into it and never replaces it, and a full device is exit 2") {
  // As root, the calibrator once turned /dev/full into a JSON file and said it succeeded.
  const std::string full = "/dev/full";
  struct stat before {};
  REQUIRE(::stat(full.c_str(), &before) == 0);
  REQUIRE(S_ISCHR(before.st_mode));
  const Run r = run_cpu({"--quick", "-o", full});
  CHECK(r.status == 2);
  CHECK_THAT(r.err, EndsWith("ppsim-calibrate: error: -o: cannot write /dev/full: No space left on device\n"));
  struct stat after {};
  REQUIRE(::stat(full.c_str(), &after) == 0);
  CHECK(S_ISCHR(after.st_mode));
  CHECK(after.st_rdev == before.st_rdev);
  // /dev/null takes the profile in place and stays a device.
  const Run null = run_cpu({"--quick", "-o", "/dev/null"});
  CHECK(null.status == 0);
  struct stat device {};
  REQUIRE(::stat("/dev/null", &device) == 0);
  CHECK(S_ISCHR(device.st_mode));
}

TEST_CASE("Asking for --help and --version answers without any backend, so they never touch a GPU") {
  const std::string flag = GENERATE("--help", "--version");
  const Run r = run({flag}, {untouchable("cuda"), untouchable("cpu")});
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Contains("cuda|cpu"));
  CHECK(r.err.empty());
}

TEST_CASE("Without --backend the first available backend runs, and an unavailable one is refused") {
  const std::vector<BackendEntry> backends = {fake_entry("cuda", "no CUDA device found"), fake_entry("cpu", "")};
  const Run fallback = run({"--quick"}, backends);
  INFO(fallback.err);
  REQUIRE(fallback.status == 0);
  CHECK(json::parse(fallback.out).at("calibration").at("backend") == "cpu");
  const Run asked = run({"--quick", "--backend", "cuda"}, backends);
  CHECK(asked.status == 2);
  CHECK_THAT(asked.err, Contains("--backend cuda: no CUDA device found"));
}

TEST_CASE("With --model the CPU backend measures that model's layer, LM head and layer-sized kernels") {
  TempDir dir;
  ppsim::Architecture tiny = *ppsim::find_architecture_preset("llama3.1-8b");
  tiny.name = "tiny-llama";
  tiny.layers = 2;
  tiny.hidden = 128;
  tiny.heads = 4;
  tiny.kv_heads = 2;
  tiny.ffn_hidden = 256;
  tiny.vocab = 512;
  const std::string model = dir.file("tiny.json");
  std::ofstream(model) << ppsim::architecture_to_json(tiny).dump(2);
  const std::string out = dir.file("tiny-profile.json");
  const Run r = run_cpu({"--model", model, "--tp", "2", "--seq", "32", "--micro-batch", "2", "--quick", "-o", out});
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json cal = read(out).at("calibration");
  CHECK(cal.at("request").at("model") == "tiny-llama");
  CHECK(cal.at("request").at("tensor_parallel") == 2);
  std::set<std::string> labels;
  for (const json& g : cal.at("gemm"))
    labels.insert(g.at("label").get<std::string>() + "." + g.at("pass").get<std::string>());
  for (const char* expected : {"qkv.F", "qkv.I", "qkv.W", "attention_out.W", "mlp_up_gate.F", "mlp_down.I", "lm_head.F",
                               "scores.F", "context.F", "grad_q.I"}) {
    INFO(expected);
    CHECK(labels.count(expected) == 1);
  }
  // QKV forward on one of two ranks: 64 tokens x (2 query heads + 2 x 1 KV head) x 32 wide, over 128.
  bool found = false;
  for (const json& g : cal.at("gemm")) {
    if (g.at("label") != "qkv" || g.at("pass") != "F") continue;
    found = true;
    CHECK(g.at("m") == 64);
    CHECK(g.at("n") == 128);
    CHECK(g.at("k") == 128);
  }
  CHECK(found);
  int layer_kernels = 0;
  for (const json& k : cal.at("memory")) layer_kernels += k.at("group") == "layer";
  CHECK(layer_kernels == 5);
}
