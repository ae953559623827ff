// SPDX-License-Identifier: Apache-2.0
// The command line on a few hundred generated hostile inputs of each class (truncation, type swaps,
// huge and non-finite numbers, duplicate keys, BOM, NUL, invalid UTF-8, deep nesting, giant strings
// and arrays) for every kind of file it reads. Whatever the input, ppsim exits 0, 2 or 3; a failure
// leaves stdout empty, says so in at most a few short stderr lines and leaves no output file; a
// success writes every requested file whole. Deterministic: one fixed seed per class.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "study/common/errors.hpp"
#include "tests/support/cli_run.hpp"

namespace fs = std::filesystem;
using ppsim::test::cli;
using ppsim::test::CliRun;
using ppsim::test::read_whole;
using ppsim::test::TempDir;

namespace {

std::string source_file(const std::string& relative) { return read_whole(fs::path(PPSIM_SOURCE_DIR) / relative); }

enum class Mutation {
  kTruncate,
  kTypeSwap,
  kHugeNumber,
  kDuplicateKey,
  kBom,
  kNul,
  kBadUtf8,
  kDeep,
  kGiantString,
  kGiantArray
};

constexpr Mutation kMutations[] = {
    Mutation::kTruncate, Mutation::kTypeSwap, Mutation::kHugeNumber, Mutation::kDuplicateKey, Mutation::kBom,
    Mutation::kNul,      Mutation::kBadUtf8,  Mutation::kDeep,       Mutation::kGiantString,  Mutation::kGiantArray};

std::string name_of(Mutation mutation) {
  constexpr const char* kNames[] = {"truncation", "type swap", "huge number",  "duplicate key", "BOM",
                                    "NUL",        "bad UTF-8", "deep nesting", "giant string",  "giant array"};
  return kNames[static_cast<int>(mutation)];
}

// A value to put where a JSON value was: a hostile one of the mutation's class.
std::string hostile_value(Mutation mutation, std::mt19937& random) {
  auto pick = [&](std::initializer_list<const char*> options) {
    return std::string(*(options.begin() + std::uniform_int_distribution<std::size_t>(0, options.size() - 1)(random)));
  };
  switch (mutation) {
    case Mutation::kTypeSwap:
      return pick(
          {"null", "true", "\"text\"", "[]", "{}", "[1, \"a\"]", "{\"a\": 1}", "0", "-1", "\"\"", "\"1 ms, x\""});
    case Mutation::kHugeNumber:
      return pick({"1e309", "-1e309", "1e308", "-0", "9223372036854775808", "18446744073709551616", "1e-320",
                   "4294967297", "2147483648", "-2147483649", "\"1e309 ms\"", "\"inf\"", "\"nan\"", "\"1e308 GiB\"",
                   "123456789012345678901234567890"});
    case Mutation::kDeep: {
      const int depth = std::uniform_int_distribution<int>(60, 20'000)(random);
      return std::string(depth, '[') + std::string(depth, ']');
    }
    case Mutation::kGiantString:
      return "\"" + std::string(std::uniform_int_distribution<std::size_t>(1000, 200'000)(random), 'x') + "\"";
    case Mutation::kGiantArray: {
      std::string array = "[1";
      const int count = std::uniform_int_distribution<int>(100, 20'000)(random);
      for (int i = 1; i < count; ++i) array += ",1";
      return array + "]";
    }
    default:
      return "1";
  }
}

// Offsets just after each ": " in `text`, where a value starts.
std::vector<std::size_t> value_starts(const std::string& text) {
  std::vector<std::size_t> starts;
  for (std::size_t at = text.find(": "); at != std::string::npos; at = text.find(": ", at + 1))
    starts.push_back(at + 2);
  return starts;
}

// The end of the JSON value starting at `start` (a scalar, or a balanced [..] or {..}).
std::size_t value_end(const std::string& text, std::size_t start) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"') {
        in_string = false;
        if (depth == 0) return i + 1;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (depth == 0) return i;
      if (--depth == 0) return i + 1;
    } else if (depth == 0 && (c == ',' || c == '\n')) {
      return i;
    }
  }
  return text.size();
}

std::string mutate(const std::string& text, Mutation mutation, std::mt19937& random) {
  auto position = [&](std::size_t size) { return std::uniform_int_distribution<std::size_t>(0, size)(random); };
  switch (mutation) {
    case Mutation::kTruncate:
      return text.substr(0, position(text.size() - 1));
    case Mutation::kBom:
      return "\xEF\xBB\xBF" + text;
    case Mutation::kNul: {
      std::string out = text;
      out.insert(position(out.size()), 1, '\0');
      return out;
    }
    case Mutation::kBadUtf8: {
      std::string out = text;
      const auto quote = out.find('"', position(out.size() - 1));
      const char* bytes[] = {"\xff", "\xc3\x28", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"};
      out.insert(quote == std::string::npos ? out.size() : quote + 1, bytes[position(4)]);
      return out;
    }
    case Mutation::kDuplicateKey: {
      const auto open = text.find('{');
      if (open == std::string::npos) return text;
      const char* keys[] = {"\"p\": 3, ", "\"m\": 2, ", "\"schedule\": \"gpipe\", ", "\"p\": \"x\", ",
                            "\"fixed\": {}, "};
      std::string out = text;
      out.insert(open + 1, keys[position(4)]);
      const auto close = out.rfind('}');
      if (close != std::string::npos && close > open + 1) out.insert(close, std::string(", ") + keys[position(4)]);
      return out;
    }
    default: {
      const auto starts = value_starts(text);
      if (starts.empty()) return text;
      const std::size_t start = starts[position(starts.size() - 1)];
      return text.substr(0, start) + hostile_value(mutation, random) + text.substr(value_end(text, start));
    }
  }
}

// Runs one hostile input and checks the promises; `outputs` are the files the command asked for.
void check_run(const std::vector<std::string>& args, const std::vector<fs::path>& outputs, const std::string& label) {
  for (const fs::path& output : outputs) fs::remove(output);
  const CliRun run = cli(args);
  INFO(label << "\nexit " << run.status << "\nstderr: " << run.err.substr(0, 600));
  REQUIRE(
      (run.status == ppsim::kExitOk || run.status == ppsim::kExitBadInput || run.status == ppsim::kExitBadSchedule));
  if (run.status == ppsim::kExitOk) {
    for (const fs::path& output : outputs) {
      const std::string text = read_whole(output);
      REQUIRE_FALSE(text.empty());
      if (output.extension() == ".svg") CHECK(text.ends_with("</svg>\n"));
      if (output.extension() == ".html") CHECK(text.ends_with("</html>\n"));
      if (output.extension() == ".json") CHECK(nlohmann::json::accept(text));
    }
    return;
  }
  CHECK(run.out.empty());
  for (const fs::path& output : outputs) CHECK_FALSE(fs::exists(output));
  // The message line is bounded; exit 3 adds the grid, whose rows are bounded by its context.
  const std::string first_line = run.err.substr(0, run.err.find('\n'));
  CHECK(first_line.starts_with("ppsim: error: "));
  CHECK(first_line.size() <= 16 + ppsim::kMaxErrorChars + 4);
  if (run.status == ppsim::kExitBadInput) CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
}

constexpr int kPerClass = 30;  // per base file and class: a few hundred inputs per class in all

}  // namespace

TEST_CASE("hostile config files exit 0, 2 or 3 with no partial output", "[hostile][config]") {
  const Mutation mutation = GENERATE(from_range(std::begin(kMutations), std::end(kMutations)));
  std::mt19937 random(12 + static_cast<unsigned>(mutation));
  const TempDir dir("hostile-config");
  const std::vector<std::string> bases = {"configs/examples/slow_link.json", "configs/examples/1f1b_p8_m32.json",
                                          "configs/examples/unbalanced_last_stage.json",
                                          "configs/examples/llama3.1-8b-h200.json"};
  for (const std::string& base : bases) {
    const std::string text = source_file(base);
    for (int i = 0; i < kPerClass; ++i) {
      const std::string path = dir.file("cfg.json");
      std::ofstream(path, std::ios::binary) << mutate(text, mutation, random);
      const bool pictures = i % 10 == 0;  // rendering every one would be slow; a tenth checks the files
      std::vector<std::string> args = {"run", "-c", path, "--format", "json"};
      std::vector<fs::path> outputs;
      if (pictures) {
        outputs = {dir.path / "out.svg", dir.path / "out.trace.json"};
        args.insert(args.end(), {"--svg", outputs[0].string(), "--trace", outputs[1].string()});
      }
      check_run(args, outputs, name_of(mutation) + " of " + base);
    }
  }
}

TEST_CASE("hostile schedule files exit 0, 2 or 3 with no partial output", "[hostile][schedule-file]") {
  const Mutation mutation = GENERATE(from_range(std::begin(kMutations), std::end(kMutations)));
  std::mt19937 random(34 + static_cast<unsigned>(mutation));
  const TempDir dir("hostile-schedule");
  const std::vector<std::string> bases = {
      "tests/data/schedule_files/1f1b_p2_m3.json", "tests/data/schedule_files/v_shape_p2_m2.json",
      "tests/data/schedule_files/zero_bubble_p2_m2.csv", "tests/golden/interleaved-1f1b_p4_m8_v2.csv"};
  for (const std::string& base : bases) {
    const std::string text = source_file(base);
    const std::string extension = fs::path(base).extension().string();
    for (int i = 0; i < kPerClass; ++i) {
      const std::string path = dir.file("schedule" + extension);
      std::string mutated = mutate(text, mutation, random);
      if (extension == ".csv" && mutation >= Mutation::kTypeSwap && mutation != Mutation::kBom &&
          mutation != Mutation::kNul && mutation != Mutation::kBadUtf8) {
        // CSV has no values to swap: put the hostile text in a random cell instead.
        const auto comma = text.find(',', std::uniform_int_distribution<std::size_t>(0, text.size() - 1)(random));
        mutated = text.substr(0, comma == std::string::npos ? text.size() : comma + 1) +
                  hostile_value(mutation, random) + (comma == std::string::npos ? "" : text.substr(comma));
      }
      std::ofstream(path, std::ios::binary) << mutated;
      const fs::path exported = dir.path / "exported.csv";
      check_run({"export", "--schedule-file", path, "-o", exported.string()}, {exported},
                name_of(mutation) + " of " + base);
      check_run({"run", "--schedule-file", path, "--format", "csv"}, {}, name_of(mutation) + " of " + base);
    }
  }
}

TEST_CASE("hostile studies exit 0, 2 or 3 with no partial output", "[hostile][sweep]") {
  const Mutation mutation = GENERATE(from_range(std::begin(kMutations), std::end(kMutations)));
  std::mt19937 random(56 + static_cast<unsigned>(mutation));
  const TempDir dir("hostile-study");
  const std::string base = R"({
  "description": "small",
  "fixed": {"forward": "1 ms, 1 ms", "backward": 2, "activation-bytes": "1 GiB"},
  "axes": {"schedule": ["gpipe", "1f1b"], "p": [2], "m": {"from": 2, "to": 8, "step": 2}},
  "objective": "bubble",
  "bubble_target": 0.05,
  "top": 3
})";
  for (int i = 0; i < kPerClass; ++i) {
    const std::string path = dir.file("study.json");
    std::ofstream(path, std::ios::binary) << mutate(base, mutation, random);
    const fs::path points = dir.path / "points.jsonl";
    check_run({"sweep", path, "-j", "1", "-o", points.string()}, {points}, name_of(mutation) + " of the study");
  }
}

TEST_CASE("hostile model and hardware files exit 0, 2 or 3 with no partial output", "[hostile][model]") {
  const Mutation mutation = GENERATE(from_range(std::begin(kMutations), std::end(kMutations)));
  std::mt19937 random(78 + static_cast<unsigned>(mutation));
  const TempDir dir("hostile-model");
  const std::string model = source_file("configs/models/llama3.1-8b.json");
  const std::string hardware = source_file("configs/hardware/h100-sxm5-80gb.json");
  for (int i = 0; i < kPerClass; ++i) {
    std::ofstream(dir.file("model.json"), std::ios::binary) << mutate(model, mutation, random);
    check_run({"run", "--model", dir.file("model.json"), "-p", "4", "-m", "8", "--format", "json"}, {},
              name_of(mutation) + " of the model");
    std::ofstream(dir.file("hardware.json"), std::ios::binary) << mutate(hardware, mutation, random);
    check_run({"run", "--model", "llama3.1-8b", "--hardware", dir.file("hardware.json"), "-p", "4", "-m", "8"}, {},
              name_of(mutation) + " of the hardware");
  }
}
