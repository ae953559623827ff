// SPDX-License-Identifier: Apache-2.0
// The command line, driven in-process: exit statuses, both streams, the JSON names of DESIGN.md,
// the example configs, and one clear line for every kind of bad input.
#include "tools/ppsim/cli.hpp"

#include "support/cli_run.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "schedules/program.hpp"
#include "schedules/registry.hpp"
#include "study/common/errors.hpp"
#include "study/input/scenario.hpp"
#include "study/run/study.hpp"

namespace {

using ppsim::test::cli;
using ppsim::test::CliRun;

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("ppsim without arguments compares GPipe and 1F1B at p=4, m=8 with timelines", "[cli]") {
  const CliRun run = cli({});
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(run.err == "ppsim: wrote the report to ppsim-report.html\n");  // stdout stays the tables
  CHECK(run.out.find("gpipe") != std::string::npos);
  CHECK(run.out.find("1f1b") != std::string::npos);
  CHECK(run.out.find("p=4 m=8") != std::string::npos);
  CHECK(run.out.find("makespan") != std::string::npos);
  CHECK(run.out.find("== gpipe ==") != std::string::npos);
  CHECK(run.out.find("== 1f1b ==") != std::string::npos);
  // (m + p - 1)(F + B) = 11 * 3 for both schedules.
  CHECK(run.out.find("33") != std::string::npos);
}

TEST_CASE("run --format json carries DESIGN.md's figure names with the simulated values", "[cli]") {
  const CliRun run =
      cli({"run", "-s", "1f1b", "-p", "8", "-m", "32", "--forward", "1", "--backward", "2", "--format", "json"});
  REQUIRE(run.status == ppsim::kExitOk);
  const auto json = nlohmann::json::parse(run.out);
  CHECK(json["schedule"] == "1f1b");
  CHECK(json["p"] == 8);
  CHECK(json["m"] == 32);
  CHECK(json["v"] == 1);
  CHECK(json["makespan"].get<double>() == Approx(39 * 3.0));
  CHECK(json["bubble_ratio"].get<double>() == Approx(7.0 / 39.0));
  CHECK(json["bubble_overhead"].get<double>() == Approx(7.0 / 32.0));
  CHECK(json["comm_ratio"].get<double>() == 0.0);
  REQUIRE(json["per_device"].size() == 8);
  for (const char* name : {"start", "end", "busy", "idle", "bubble_ratio", "peak_stashed", "peak_activation_bytes",
                           "peak_memory_bytes", "phases"}) {
    CHECK(json["per_device"][0].contains(name));
  }
  for (const char* phase : {"warmup", "steady", "cooldown"}) CHECK(json["per_device"][0]["phases"].contains(phase));
  REQUIRE(!json["per_link"].empty());
  for (const char* name : {"src", "dst", "messages", "bytes", "busy"}) CHECK(json["per_link"][0].contains(name));
  CHECK(json["scenario"]["forward"] == 1.0);
  CHECK(json["scenario"]["weight"] == 1.0);  // half of B by default
}

TEST_CASE("run --format csv prints a header and one row per device", "[cli]") {
  const CliRun run = cli({"run", "-s", "gpipe", "-p", "6", "-m", "12", "--format", "csv"});
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(count_lines(run.out) == 7);
  CHECK(run.out.rfind("schedule,p,m,v,device,", 0) == 0);
}

TEST_CASE("compare --format json prints one object per schedule in the order given", "[cli]") {
  const CliRun run = cli({"compare", "-s", "1f1b,gpipe", "-p", "4", "-m", "8", "--format", "json"});
  REQUIRE(run.status == ppsim::kExitOk);
  const auto json = nlohmann::json::parse(run.out);
  REQUIRE(json.is_array());
  REQUIRE(json.size() == 2);
  CHECK(json[0]["schedule"] == "1f1b");
  CHECK(json[1]["schedule"] == "gpipe");
  CHECK(json[0]["makespan"] == json[1]["makespan"]);  // the folklore says otherwise; the bubble is the same
}

TEST_CASE("schedules lists every registry entry with its constraints", "[cli]") {
  const CliRun run = cli({"schedules"});
  REQUIRE(run.status == ppsim::kExitOk);
  CHECK(run.out.find("gpipe") != std::string::npos);
  CHECK(run.out.find("1f1b") != std::string::npos);
  CHECK(run.out.find("constraints: v = 1") != std::string::npos);
}

TEST_CASE("help and version exit 0 and name the commands", "[cli]") {
  const CliRun help = cli({"--help"});
  CHECK(help.status == ppsim::kExitOk);
  CHECK(help.out.find("compare") != std::string::npos);
  CHECK(help.out.find("Exit status") != std::string::npos);
  const CliRun run_help = cli({"run", "--help"});
  CHECK(run_help.status == ppsim::kExitOk);
  CHECK(run_help.out.find("--message-bytes") != std::string::npos);
  const CliRun version = cli({"--version"});
  CHECK(version.status == ppsim::kExitOk);
  CHECK(version.out.find("ppsim") != std::string::npos);
}

TEST_CASE("fewer micro-batches than devices simulates a partial pipeline", "[cli]") {
  const auto schedule = GENERATE(as<std::string>{}, "gpipe", "1f1b");
  const CliRun run = cli({"run", "-s", schedule, "-p", "8", "-m", "2", "--format", "json"});
  REQUIRE(run.status == ppsim::kExitOk);
  const auto json = nlohmann::json::parse(run.out);
  CHECK(json["makespan"].get<double>() == Approx((2 + 8 - 1) * 3.0));
}

TEST_CASE("A micro-batch group size runs Megatron's group order, and --microbatch-group-size is named when refused", "[cli]") {
  const CliRun run = cli({"run", "-s", "interleaved-1f1b", "-p", "4", "-m", "9", "-v", "2",
                          "--microbatch-group-size", "5", "--format", "json"});
  REQUIRE(run.status == ppsim::kExitOk);
  const auto json = nlohmann::json::parse(run.out);
  CHECK(json["scenario"]["microbatch-group-size"] == 5);
  // Device 0 warms up with N + 2(p-1) = 11 forwards: 12 stashes at the peak, one more than N = 4's 11.
  CHECK(json["per_device"][0]["peak_stashed"].get<double>() == 12);
  const CliRun short_rest =
      cli({"run", "-s", "interleaved-1f1b", "-p", "4", "-m", "8", "-v", "2", "--microbatch-group-size", "5"});
  CHECK(short_rest.status == ppsim::kExitBadInput);
  CHECK(short_rest.err.starts_with("ppsim: error: --microbatch-group-size: interleaved-1f1b needs the micro-batch "
                                   "group size to leave m mod N = 0 or >= p"));
  const CliRun other = cli({"run", "-s", "1f1b", "--microbatch-group-size", "4"});
  CHECK(other.status == ppsim::kExitBadInput);
  CHECK(other.err == "ppsim: error: --microbatch-group-size: only interleaved-1f1b takes a micro-batch group size, "
                     "not 1f1b\n");
}

TEST_CASE("the same inputs give the same output bytes", "[cli]") {
  const std::vector<std::string> args{
      "compare",         "-s",  "gpipe,1f1b",  "-p",  "5",        "-m",   "7",         "--latency", "0.3",
      "--message-bytes", "100", "--bandwidth", "150", "--format", "json", "--timeline"};
  CHECK(cli(args).out == cli(args).out);
}

TEST_CASE("flags override the config file", "[cli]") {
  const auto path = std::filesystem::temp_directory_path() / "ppsim_cli_override.json";
  {
    std::ofstream file(path);
    file << R"({"schedule": "gpipe", "p": 4, "m": 8, "forward": 2})";
  }
  const CliRun run = cli({"run", "-c", path.string(), "-m", "16", "--format", "json"});
  std::filesystem::remove(path);
  REQUIRE(run.status == ppsim::kExitOk);
  const auto json = nlohmann::json::parse(run.out);
  CHECK(json["schedule"] == "gpipe");
  CHECK(json["m"] == 16);
  CHECK(json["makespan"].get<double>() == Approx((16 + 4 - 1) * (2.0 + 2.0)));
}

TEST_CASE("every example config runs", "[cli][examples]") {
  const std::filesystem::path dir = std::filesystem::path(PPSIM_SOURCE_DIR) / "configs" / "examples";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  for (const auto& file : files) {
    INFO(file.string());
    std::ifstream stream(file);
    const auto config = nlohmann::json::parse(stream);
    const bool several = config.at("schedule").is_array();
    const CliRun run = cli({several ? "compare" : "run", "-c", file.string(), "--format", "json"});
    CHECK(run.err.empty());
    REQUIRE(run.status == ppsim::kExitOk);
    const auto json = nlohmann::json::parse(run.out);
    const auto& first = several ? json.at(0) : json;
    CHECK(first["p"] == config.at("p"));
    CHECK(first["makespan"].get<double>() > 0);
  }
}

TEST_CASE("bad input exits 2 with one line naming the flag, and prints nothing on stdout", "[cli][errors]") {
  using Args = std::vector<std::string>;
  const auto [args, expected] = GENERATE(table<Args, std::string>({
      {{"run", "-p", "0"}, "ppsim: error: -p: must be a positive integer, got 0"},
      {{"run", "-p", "four"}, "ppsim: error: -p: must be a positive integer, got 'four'"},
      {{"run", "-m", "-3"}, "ppsim: error: -m: must be a positive integer, got -3"},
      {{"run", "-m", "2.5"}, "ppsim: error: -m: must be a positive integer, got '2.5'"},
      {{"run", "-p", "99999999999"}, "ppsim: error: -p: is absurdly large"},
      {{"run", "-s", "zbv", "-p", "600000", "-m", "1"},
       "ppsim: error: -p: p=600000, v=2 places 1.2e+06 stages, above the limit of 1000000 per run"},
      {{"run", "-p", "100000", "-m", "100000"},
       "ppsim: error: -m: p=100000, v=1, m=100000 would simulate up to 3e+10 ops, above the limit of 1000000000 per "
       "run"},
      {{"run", "-p", "4", "-m", "900000", "--timeline"},
       "ppsim: error: -m: p=4, v=1, m=900000 would simulate up to 1.08e+07 ops, above the limit of 10000000 per run "
       "with a timeline (--timeline, --trace, --svg or --html)"},
      {{"export", "-s", "1f1b", "-p", "4", "-m", "5000000"},
       "ppsim: error: -m: p=4, v=1, m=5000000 would simulate up to 6e+07 ops, above the limit of 50000000 per run that "
       "stores its program (paired sends or an export)"},
      {{"run", "-s", "looped-bfs", "-p", "4", "-m", "5000000"},
       "ppsim: error: -m: p=4, v=2, m=5000000 would simulate up to 1.2e+08 ops, above the limit of 50000000 per run of "
       "a schedule whose messages wait for all m micro-batches"},
      {{"run", "-s", "zigzag"}, "ppsim: error: --schedule: unknown schedule 'zigzag'; known: gpipe, 1f1b"},
      {{"run", "-s", "1f1"},
       "ppsim: error: --schedule: unknown schedule '1f1' (did you mean 1f1b?); known: gpipe, 1f1b"},
      {{"run", "-s", "gpipe,1f1b"},
       "ppsim: error: --schedule: run simulates one schedule; use `ppsim compare -s gpipe,1f1b` for several"},
      {{"run", "-v", "2"}, "ppsim: error: -v: 1f1b needs v = 1"},
      {{"run", "-s", "dualpipev", "-p", "4", "-m", "6"}, "ppsim: error: -m: dualpipev needs m >= 2p"},
      {{"run", "-s", "zbv", "-v", "3"}, "ppsim: error: -v: zbv needs v = 2"},
      {{"run", "--forward", "1,1,1,2", "--overlap", "1"}, "ppsim: error: --overlap: needs uniform costs"},
      {{"export", "-s", "1f1b", "-o", "/nonexistent/ppsim/x.csv"},
       "ppsim: error: -o: cannot write /nonexistent/ppsim/x.csv"},
      {{"run", "--forward", "nan"}, "ppsim: error: --forward: must be a finite time, got NaN"},
      {{"run", "--forward", "inf"}, "ppsim: error: --forward: must be a finite time, got infinity"},
      {{"run", "--forward", "-1"}, "ppsim: error: --forward: must not be negative, got -1"},
      {{"run", "--forward", "0"}, "ppsim: error: --forward: must be positive, got 0"},
      {{"run", "--backward", "1 parsec"}, "ppsim: error: --backward: '1 parsec' has unknown unit 'parsec'"},
      {{"run", "--forward", "1,2,3"},
       "ppsim: error: --forward: has 3 values; give 1 or one per stage (4 for p=4, v=1)"},
      {{"run", "--forward", "1,,2"}, "ppsim: error: --forward (value 2): is empty"},
      {{"run", "--weight", "3"}, "ppsim: error: --weight: W (3) exceeds the full backward B (2) on stage 0"},
      {{"run", "--bandwidth", "0"}, "ppsim: error: --bandwidth: must be positive, got 0"},
      {{"run", "--latency", "-2 ms"}, "ppsim: error: --latency: must not be negative"},
      {{"run", "--activation-bytes", "2000000 TiB"}, "ppsim: error: --activation-bytes: is absurdly large"},
      {{"run", "--message-bytes", "1,2"},
       "ppsim: error: --message-bytes: has 2 values; give 1 or one per boundary between stages (3 for p=4, v=1)"},
      {{"run", "--static-bytes", "1,2,3"},
       "ppsim: error: --static-bytes: has 3 values; give 1 or one per device (4 for p=4, v=1)"},
      {{"run", "--weight-stash-fraction", "1.5"},
       "ppsim: error: --weight-stash-fraction: must be a fraction between 0 and 1, got 1.5"},
      {{"run", "--comm", "sometimes"}, "ppsim: error: --comm: must be overlap, blocking or paired, got 'sometimes'"},
      {{"run", "--format", "xml"}, "ppsim: error: --format: must be table, json or csv, got 'xml'"},
      {{"run", "-c", "/nonexistent/ppsim.json"}, "ppsim: error: /nonexistent/ppsim.json: cannot read the config file"},
      {{"run", "--frobnicate"}, "ppsim: error: unknown flag '--frobnicate' for run"},
      {{"bogus"}, "ppsim: error: unknown command 'bogus'; see ppsim --help"},
  }));
  INFO("args: " << Catch::Detail::stringify(args));
  const CliRun run = cli(args);
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.out.empty());
  CHECK(count_lines(run.err) == 1);
  CHECK(run.err.rfind(expected, 0) == 0);
}

TEST_CASE("a program that cannot finish is a schedule error with the step x device grid", "[cli][errors]") {
  // Device 0 waits for the gradient of stage 1 before it has sent stage 1 its input: a cycle.
  ppsim::Program program;
  program.num_devices = 2;
  program.num_microbatches = 1;
  program.stage_device = {0, 1};
  program.actions = {{{0, ppsim::Op::kForward, 0}, {0, ppsim::Op::kBackward, 0}},
                     {{1, ppsim::Op::kForward, 0}, {1, ppsim::Op::kBackward, 0}}};
  std::swap(program.actions[1][0], program.actions[1][1]);  // 1B0 before 1F0: invalid order
  ppsim::Scenario scenario;
  scenario.params = {2, 1, 1};
  ppsim::Engine engine;
  try {
    ppsim::simulate_program(scenario, "hand", program, false, engine);
    FAIL("expected a ScheduleError");
  } catch (const ppsim::ScheduleError& error) {
    CHECK(std::string(error.what()) == "schedule hand is invalid: 1B0 comes before its forward 1F0");
    CHECK(error.grid().find("[1B0]") != std::string::npos);
    CHECK(error.grid().find("<-- here") != std::string::npos);
  }
}

TEST_CASE("a valid program whose devices wait on each other reports every stuck device", "[cli][errors]") {
  // Two micro-batches: device 1 insists on 1F1 before 1F0 is possible... but 1F1 needs 0F1, which
  // device 0 runs only after 0B0, which needs 1B0, which device 1 runs after 1F1: a cross-device cycle.
  ppsim::Program program;
  program.num_devices = 2;
  program.num_microbatches = 2;
  program.stage_device = {0, 1};
  using ppsim::Op;
  program.actions = {{{0, Op::kForward, 0}, {0, Op::kBackward, 0}, {0, Op::kForward, 1}, {0, Op::kBackward, 1}},
                     {{1, Op::kForward, 1}, {1, Op::kForward, 0}, {1, Op::kBackward, 0}, {1, Op::kBackward, 1}}};
  ppsim::Scenario scenario;
  scenario.params = {2, 2, 1};
  ppsim::Engine engine;
  try {
    ppsim::simulate_program(scenario, "hand", program, false, engine);
    FAIL("expected a ScheduleError");
  } catch (const ppsim::ScheduleError& error) {
    CHECK(std::string(error.what()) ==
          "schedule hand cannot finish: deadlock: device 0 at step 1 (0B0) waits for the gradient of 1B0 or 1I0 "
          "from device 1; device 1 at step 0 (1F1) waits for 0F1 from device 0");
    CHECK(error.grid().find("[0B0]") != std::string::npos);
    CHECK(error.grid().find("[1F1]") != std::string::npos);
  }
}

TEST_CASE("an empty phase has no start or end in JSON", "[cli]") {
  const CliRun run = cli({"run", "-s", "gpipe", "-p", "4", "-m", "8", "--format", "json"});
  REQUIRE(run.status == ppsim::kExitOk);
  const auto phases = nlohmann::json::parse(run.out)["per_device"][0]["phases"];
  CHECK(phases["steady"]["ops"] == 0);  // GPipe goes straight from its forwards to its backwards
  CHECK(phases["steady"]["start"].is_null());
  CHECK(phases["steady"]["end"].is_null());
  CHECK(phases["cooldown"]["start"] == 17.0);  // m + 3(p - 1): the backward wave reaches device 0
  CHECK(phases["cooldown"]["end"] == 33.0);
}

TEST_CASE("formulas --check compares every closed form with the engine and exits 0 when all agree", "[cli][formulas]") {
  const CliRun run = cli({"formulas", "--check"});
  CHECK(run.status == ppsim::kExitOk);
  CHECK(run.out.find(" 0 beyond 1e-09 relative") != std::string::npos);
  CHECK(run.out.find("DEVIATION") == std::string::npos);
  CHECK(run.out.find("1f1b: ") != std::string::npos);
  CHECK(run.out.find("ring attention (--cp-comm p2p): 512 checks against a step-by-step replay\n") != std::string::npos);
}

TEST_CASE("formulas prints each closed form beside the simulated figure and says where it holds", "[cli][formulas]") {
  const CliRun free = cli({"formulas", "-p", "4", "-m", "8"});
  REQUIRE(free.status == ppsim::kExitOk);
  CHECK(free.out.find("(m+p-1)(F+B)") != std::string::npos);
  CHECK(free.out.find("agrees") != std::string::npos);
  CHECK(free.out.find("DIFFERS") == std::string::npos);
  const CliRun slow = cli({"formulas", "-s", "1f1b", "-p", "4", "-m", "8", "--latency", "0.5"});
  REQUIRE(slow.status == ppsim::kExitOk);
  CHECK(slow.out.find("outside: uniform costs, free links") != std::string::npos);
  CHECK(slow.out.find("gpipe") == std::string::npos);  // -s limits the schedules
}

namespace {

// A simulation's figures without the fields that name where the schedule came from.
nlohmann::json figures_of(const std::string& json_text) {
  auto json = nlohmann::json::parse(json_text);
  json.erase("schedule");
  json.erase("scenario");
  return json;
}

std::string data_file(const std::string& name) {
  return std::string(PPSIM_SOURCE_DIR) + "/tests/data/schedule_files/" + name;
}

}  // namespace

TEST_CASE("every registry schedule exported and read back simulates byte for byte the same", "[cli][schedule-file]") {
  const std::string format = GENERATE(as<std::string>{}, "csv", "json");
  for (const auto& info : ppsim::schedule_registry()) {
    if (!info.generated()) continue;  // custom is the importer itself
    INFO(info.name << " as " << format);
    const auto path =
        std::filesystem::temp_directory_path() / ("ppsim_export_" + std::string(info.name) + "." + format);
    // -v explicit: the file's stages carry the costs as given, as the registry run does.
    const std::vector<std::string> costs{"--latency",          "0.1", "--message-bytes", "10", "--bandwidth", "40",
                                         "--activation-bytes", "64",  "--static-bytes",  "5"};
    const std::vector<std::string> size{"-p", "4", "-m", "8", "-v", std::to_string(info.default_v)};
    std::vector<std::string> export_args{"export", "-s", std::string(info.name), "-o", path.string()};
    export_args.insert(export_args.end(), size.begin(), size.end());
    const CliRun exported = cli(export_args);
    if (format == "csv" && info.streams({4, 8, info.default_v}).layerwise_pairs) {
      // Megatron's combined steps free memory layer by layer, which torch's CSV cannot say.
      CHECK(exported.status == ppsim::kExitBadInput);
      CHECK(exported.err.find("interleave layer by layer") != std::string::npos);
      CHECK_FALSE(std::filesystem::exists(path));
      continue;
    }
    if (format == "csv" && info.streams({4, 8, info.default_v}).units_per_microbatch > 1) {
      // Seq1F1B's slices have no place in torch's CSV either.
      CHECK(exported.status == ppsim::kExitBadInput);
      CHECK(exported.err.find("sequence slices of its micro-batches, which torch's schedule CSV cannot say") !=
            std::string::npos);
      CHECK_FALSE(std::filesystem::exists(path));
      continue;
    }
    if (format == "csv" && info.streams({4, 8, info.default_v}).num_pipelines > 1) {
      // DualPipe's two pipelines have no place in torch's CSV: refused, and no file is left.
      CHECK(exported.status == ppsim::kExitBadInput);
      CHECK(exported.err.find("torch's schedule CSV cannot say") != std::string::npos);
      CHECK_FALSE(std::filesystem::exists(path));
      continue;
    }
    REQUIRE(exported.status == ppsim::kExitOk);
    CHECK(exported.out.empty());

    std::vector<std::string> direct{"run", "-s", std::string(info.name), "--format", "json"};
    direct.insert(direct.end(), size.begin(), size.end());
    direct.insert(direct.end(), costs.begin(), costs.end());
    std::vector<std::string> imported{"run", "--schedule-file", path.string(), "--format", "json"};
    imported.insert(imported.end(), costs.begin(), costs.end());
    const CliRun a = cli(direct);
    const CliRun b = cli(imported);
    std::filesystem::remove(path);
    REQUIRE(a.status == ppsim::kExitOk);
    REQUIRE(b.status == ppsim::kExitOk);
    CHECK(figures_of(a.out).dump() == figures_of(b.out).dump());
    CHECK(nlohmann::json::parse(b.out)["schedule"] == "custom");
  }
}

TEST_CASE("export writes torch's CSV to stdout and JSON to a .json file", "[cli][schedule-file]") {
  const CliRun csv = cli({"export", "-s", "1f1b", "-p", "2", "-m", "3"});
  REQUIRE(csv.status == ppsim::kExitOk);
  CHECK(csv.out == "0F0,0F1,0B0,0F2,0B1,0B2\r\n1F0,1B0,1F1,1B1,1F2,1B2\r\n");
  const auto path = std::filesystem::temp_directory_path() / "ppsim_export_1f1b.json";
  REQUIRE(cli({"export", "-s", "1f1b", "-p", "2", "-m", "3", "-o", path.string()}).status == ppsim::kExitOk);
  std::ifstream file(path);
  const auto json = nlohmann::json::parse(file);
  std::filesystem::remove(path);
  CHECK(json["stage_device"] == nlohmann::json::array({0, 1}));
  CHECK(json["microbatches"] == 3);
  CHECK(json["actions"][1][1] == "1B0");
}

TEST_CASE("a failed export leaves no file behind", "[cli][schedule-file][errors]") {
  const auto path = std::filesystem::temp_directory_path() / "ppsim_export_never.csv";
  std::filesystem::remove(path);
  const CliRun run = cli({"export", "-s", "zigzag", "-o", path.string()});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK_FALSE(std::filesystem::exists(path.string() + ".ppsim-tmp"));
}

TEST_CASE("a schedule file that is malformed, misses an op or deadlocks exits 3 with the grid",
          "[cli][schedule-file][errors]") {
  const auto [file, expected] = GENERATE(table<std::string, std::string>({
      {"broken_bad_action.csv", "broken_bad_action.csv: row 2 (device 1), column 2: '1X1' is not an action"},
      {"broken_stage_on_two_devices.csv", "broken_stage_on_two_devices.csv: row 2 (device 1)"},
      {"broken_missing_op.csv", "schedule custom is invalid: 1B1 (or 1I1 and 1W1) is missing"},
      {"deadlock_p2_m2.csv", "schedule custom cannot finish: deadlock: device 0 at step 1 (0B0)"},
  }));
  INFO(file);
  const CliRun run = cli({"run", "--schedule-file", data_file(file)});
  CHECK(run.status == ppsim::kExitBadSchedule);
  CHECK(run.out.empty());
  CHECK(run.err.find(expected) != std::string::npos);
  CHECK(run.err.find("<-- here") != std::string::npos);
}

TEST_CASE("schedule files in JSON, minimal or with their shape, simulate like their CSV twins",
          "[cli][schedule-file]") {
  const CliRun csv = cli({"run", "--schedule-file", data_file("v_shape_p2_m2.csv"), "--format", "json"});
  const CliRun json = cli({"run", "--schedule-file", data_file("v_shape_p2_m2.json"), "--format", "json"});
  REQUIRE(csv.status == ppsim::kExitOk);
  REQUIRE(json.status == ppsim::kExitOk);
  CHECK(figures_of(csv.out).dump() == figures_of(json.out).dump());
  const CliRun minimal = cli({"run", "--schedule-file", data_file("minimal_p2_m2.json"), "--format", "json"});
  REQUIRE(minimal.status == ppsim::kExitOk);
  CHECK(nlohmann::json::parse(minimal.out)["p"] == 2);
}

TEST_CASE("a schedule file's sizes win, and flags that contradict them are named", "[cli][schedule-file][errors]") {
  const CliRun run = cli({"run", "--schedule-file", data_file("1f1b_p2_m3.json"), "-m", "5"});
  CHECK(run.status == ppsim::kExitBadInput);
  CHECK(run.err.rfind("ppsim: error: -m: 5 does not match the 3 micro-batches of ", 0) == 0);
  const CliRun missing = cli({"run", "-s", "custom"});
  CHECK(missing.status == ppsim::kExitBadInput);
  CHECK(missing.err == "ppsim: error: --schedule: custom takes its actions from --schedule-file FILE\n");
}

// A parse registers only the flags its command line names (CLI11 spends more on registering an
// option than a short run spends simulating): what it parses must not depend on that.
TEST_CASE("A run parses alike whichever spelling names its flags, though it registers only those it names", "[cli]") {
  const CliRun plain = cli({"run", "-s", "1f1b", "-p", "8", "-m", "16", "--format", "csv"});
  REQUIRE(plain.status == ppsim::kExitOk);
  const std::vector<std::vector<std::string>> spellings = {
      {"run", "--schedule=1f1b", "-p8", "-m16", "--format=csv"},
      {"run", "-s1f1b", "-m", "16", "-p", "8", "--format", "csv", "--no-timeline"},
      {"run", "--format", "csv", "-p", "8", "-m", "16", "--schedule", "1F1B"},
  };
  for (const auto& args : spellings) {
    const CliRun run = cli(args);
    INFO(args[1] << " ...");
    CHECK(run.status == ppsim::kExitOk);
    CHECK(run.err.empty());
    CHECK(run.out == plain.out);
  }
}

TEST_CASE("Help lists every flag of its command, though a run registers only those it names", "[cli]") {
  for (const char* help : {"--help", "-h"}) {
    for (const char* command : {"run", "compare"}) {
      const CliRun run = cli({command, "-p", "8", help});
      INFO(command << ' ' << help);
      CHECK(run.status == ppsim::kExitOk);
      for (const char* flag : {"--schedule", "--weight-stash-fraction", "--micro-batch", "--no-timeline", "--config",
                               "--svg", "--html", "--trace", "--expect"}) {
        CHECK(run.out.find(flag) != std::string::npos);
      }
      CHECK(run.out.find("{false}") == std::string::npos);  // a switch reads as typed: --timeline,--no-timeline
      CHECK(run.out.find("--timeline,--no-timeline ") != std::string::npos);
    }
  }
  CHECK(cli({"sweep", "--help"}).out.find("--simulate-all") != std::string::npos);
  CHECK(cli({"check", "--help"}).out.find("--rtol") != std::string::npos);
}

TEST_CASE("A bad flag or value reads the same whether the command line names few flags or many", "[cli]") {
  // The parse that registered only the named flags fails; the one with every flag says why, as always.
  CHECK(cli({"run", "-p", "8", "--schedul", "1f1b"}).err ==
        "ppsim: error: unknown flag '--schedul' for run (did you mean --schedule?)\n");
  CHECK(cli({"run", "--latency"}).err == "ppsim: error: --latency: 1 required T missing\n");
  CHECK(cli({"compare", "-p", "4", "extra"}).err == "ppsim: error: The following argument was not expected: extra\n");
  const CliRun jobs = cli({"sweep", "-j", "99999", "study.json"});
  CHECK(jobs.status == ppsim::kExitBadInput);
  CHECK(jobs.err == "ppsim: error: --jobs: Value 99999 not in range 0 to 4096\n");
  CHECK(cli({"merge", "a.csv"}).err == "ppsim: error: --output is required\n");
}

TEST_CASE("Giving -v cuts a device's share of the model into chunks: the schedule's own v changes nothing", "[cli][chunks]") {
  auto makespan = [](std::vector<std::string> args) {
    args.insert(args.begin(), {"run", "--format", "json"});
    const CliRun run = cli(args);
    REQUIRE(run.status == ppsim::kExitOk);
    return nlohmann::json::parse(run.out);
  };
  const auto plain = makespan({"-s", "interleaved-1f1b", "-p", "8", "-m", "32"});
  const auto given = makespan({"-s", "interleaved-1f1b", "-p", "8", "-m", "32", "-v", "2"});
  CHECK(plain.at("makespan") == given.at("makespan"));
  CHECK(plain.at("makespan").get<double>() == 106.5);
  // More chunks: the same work on every device, cut finer.
  const auto four = makespan({"-s", "interleaved-1f1b", "-p", "8", "-m", "32", "-v", "4"});
  CHECK(four.at("v") == 4);
  for (std::size_t d = 0; d < 8; ++d) {
    CHECK(four.at("per_device")[d].at("busy") == plain.at("per_device")[d].at("busy"));
  }
  CHECK(four.at("makespan").get<double>() < plain.at("makespan").get<double>());
  // Per-chunk costs are said so: each chunk then costs what --forward and --backward say.
  const auto per_chunk = makespan({"-s", "interleaved-1f1b", "-p", "8", "-m", "32", "-v", "2", "--costs-per", "chunk"});
  CHECK(per_chunk.at("makespan").get<double>() == 213);
  CHECK(per_chunk.at("scenario").at("costs-per") == "chunk");
  // The report's scenario is the split one, marked as per chunk: it reads back to the same run.
  CHECK(given.at("scenario").at("forward") == 0.5);
  CHECK(given.at("scenario").at("costs-per") == "chunk");
  CHECK(plain.at("scenario").at("v") == 2);
}

TEST_CASE("per-stage lists at v > 1 need --costs-per chunk, said with the flag", "[cli][chunks]") {
  const CliRun refused =
      cli({"run", "-s", "interleaved-1f1b", "-p", "2", "-m", "4", "-v", "2", "--forward", "1,1,1,1"});
  CHECK(refused.status == ppsim::kExitBadInput);
  CHECK(refused.err ==
        "ppsim: error: --forward: has 4 values; give 1 or one per device (2 for p=2), which interleaved-1f1b splits "
        "into its 2 chunks, or one per stage with --costs-per chunk\n");
  CHECK(cli({"run", "-s", "interleaved-1f1b", "-p", "2", "-m", "4", "-v", "2", "--forward", "1,1,1,1", "--costs-per",
             "chunk"})
            .status == ppsim::kExitOk);
  const CliRun bad = cli({"run", "--costs-per", "stage"});
  CHECK(bad.status == ppsim::kExitBadInput);
  CHECK(bad.err == "ppsim: error: --costs-per: must be device or chunk, got 'stage'\n");
}

TEST_CASE("A lowered schedule file replays as torch runs it, waiting at receives, or only its compute", "[cli][lowered]") {
  ppsim::test::TempDir dir("lowered");
  // Device 0 receives 1B0's gradient before it runs 0F1 (see tests/lowered_schedule_test.cpp).
  const std::string early = dir.file("early.csv");
  std::ofstream(early) << "0F0,0SEND_F0,0RECV_B0,0F1,0SEND_F1,0B0,0RECV_B1,0B1\r\n"
                          "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\r\n";
  auto makespan = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"run", "--schedule-file", early, "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliRun run = cli(args);
    REQUIRE(run.status == ppsim::kExitOk);
    return nlohmann::json::parse(run.out).at("makespan").get<double>();
  };
  CHECK(makespan({}) == 9);  // torch posts the receive there; 0F1 does not wait for it
  CHECK(makespan({"--comm-actions", "honor"}) == 9);
  CHECK(makespan({"--comm-actions", "wait-at-recv"}) == 10);
  CHECK(makespan({"--comm-actions", "wait-at-recv", "--timeline"}) == 10);
  CHECK(makespan({"--comm-actions", "ignore"}) == 9);
  // Exported, the file comes back as it was, communication actions and all.
  const CliRun exported = cli({"export", "--schedule-file", early});
  REQUIRE(exported.status == ppsim::kExitOk);
  CHECK(exported.out == "0F0,0SEND_F0,0RECV_B0,0F1,0SEND_F1,0B0,0RECV_B1,0B1\r\n"
                        "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\r\n");

  const std::string unmatched = dir.file("unmatched.csv");
  std::ofstream(unmatched) << "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\r\n"
                              "1RECV_F0,1F0,1F1,1B0,1SEND_B0,1B1,1SEND_B1\r\n";
  const CliRun refused = cli({"run", "--schedule-file", unmatched});
  CHECK(refused.status == ppsim::kExitBadSchedule);
  CHECK(refused.err.starts_with("ppsim: error: schedule custom is invalid: 0SEND_F1 has no 1RECV_F1 on device 1\n"
                                "step  device 0  device 1\n"));
  CHECK(cli({"run", "--schedule-file", unmatched, "--comm-actions", "ignore"}).status == ppsim::kExitOk);

  const CliRun paired = cli({"run", "--schedule-file", early, "--comm", "paired"});
  CHECK(paired.status == ppsim::kExitBadInput);
  CHECK(paired.err.starts_with("ppsim: error: --comm: paired sends are Megatron's"));
  const CliRun bad = cli({"run", "--schedule-file", early, "--comm-actions", "skip"});
  CHECK(bad.err == "ppsim: error: --comm-actions: must be honor, wait-at-recv or ignore, got 'skip'\n");
}

TEST_CASE("run gives the sweep's advice when m is below 2p and the bubble above a third", "[cli]") {
  const CliRun few = cli({"run", "-s", "1f1b", "-p", "8", "-m", "4"});
  CHECK(few.status == 0);
  CHECK(few.err == "ppsim: note: 1f1b runs m=4 < 2p=16, where a 1F1B bubble is above a third (bubble 0.636364): raise "
                   "m with a larger global batch or smaller micro-batches\n");
  CHECK(cli({"run", "-s", "1f1b", "-p", "8", "-m", "16"}).err.empty());
  CHECK(cli({"run", "-s", "1f1b", "-p", "2", "-m", "2"}).err.empty());  // a bubble of exactly a third
}
