// SPDX-License-Identifier: Apache-2.0
#include "tools/calibrate/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "models/json/architecture_json.hpp"
#include "models/json/hardware_profile_json.hpp"
#include "models/json/json_input_error.hpp"
#include "study/common/errors.hpp"
#include "study/common/output_file.hpp"
#include "study/common/version.hpp"
#include "tools/calibrate/plan.hpp"
#include "tools/calibrate/profile_builder.hpp"
#include "tools/calibrate/runner.hpp"

namespace ppsim::calibrate {
namespace {

// Bad input is ppsim's InputError (study/common/errors.hpp), its message starting with the flag at fault,
// and the exit statuses are ppsim's: 0, 1 for a failure, 2 for bad input.

struct Options {
  std::string backend;
  std::string model;
  int tp = 1;
  std::int64_t seq = 4096;
  std::int64_t micro_batch = 1;
  std::string precision = "bf16";
  bool quick = false;
  std::string output;
};

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string command_line(const std::vector<std::string>& args) {
  std::string line = "ppsim-calibrate";
  for (const std::string& arg : args) {
    const bool quote = arg.empty() || arg.find_first_of(" \t\"'\\$") != std::string::npos;
    line += ' ';
    line += quote ? "'" + arg + "'" : arg;
  }
  return line;
}

std::vector<Precision> parse_precisions(const std::string& text) {
  std::vector<Precision> precisions;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto precision = parse_precision(item);
    if (!precision) {
      throw InputError("--precision " + text + ": unknown precision \"" + item +
                       "\" (choose from bf16, fp16, tf32, fp32)");
    }
    if (std::find(precisions.begin(), precisions.end(), *precision) == precisions.end()) {
      precisions.push_back(*precision);
    }
  }
  if (precisions.empty()) throw InputError("--precision: give at least one of bf16, fp16, tf32, fp32");
  // The profile's GEMM table is bf16's (the precision every profile needs), so bf16 is always
  // measured, first.
  precisions.erase(std::remove(precisions.begin(), precisions.end(), Precision::kBf16), precisions.end());
  precisions.insert(precisions.begin(), Precision::kBf16);
  return precisions;
}

std::optional<Architecture> read_model(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (const Architecture* preset = find_architecture_preset(text)) return *preset;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(text, ec)) {
    std::string names;
    for (const Architecture& a : architecture_presets()) names += (names.empty() ? "" : ", ") + a.name;
    throw InputError("--model " + text + ": neither a preset (" + names + ") nor a readable file");
  }
  try {
    return load_architecture(text);
  } catch (const JsonInputError& e) {
    throw InputError(std::string("--model: ") + e.what());
  }
}

// ppsim's own bound on a count (study/input/config.cpp), and the tokens of one measured layer: the
// calibrator allocates its activations, so seq x micro-batch is bounded too (2^20 tokens is eight
// times a 128k-token sequence; its largest buffers still fit a GPU).
constexpr std::int64_t kMaxCount = 1'000'000'000;
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 20;

void check_sizes(const Options& options) {
  auto count = [](const char* flag, std::int64_t value) {
    if (value < 1) throw InputError(std::string(flag) + " " + std::to_string(value) + ": must be >= 1");
    if (value > kMaxCount) {
      throw InputError(std::string(flag) + " " + std::to_string(value) + ": is absurdly large (at most " +
                       std::to_string(kMaxCount) + ")");
    }
  };
  count("--tp", options.tp);
  count("--seq", options.seq);
  count("--micro-batch", options.micro_batch);
  if (options.seq * options.micro_batch > kMaxTokens) {
    throw InputError("--micro-batch " + std::to_string(options.micro_batch) + ": " + std::to_string(options.seq) +
                     " x " + std::to_string(options.micro_batch) + " tokens per layer is above the " +
                     std::to_string(kMaxTokens) + " the calibrator measures (seq x micro-batch)");
  }
}

const BackendEntry& choose_backend(const std::string& name, const std::vector<BackendEntry>& backends) {
  std::string names;
  for (const BackendEntry& b : backends) names += (names.empty() ? "" : ", ") + b.name;
  if (name.empty()) {
    for (const BackendEntry& b : backends) {
      if (b.unavailable().empty()) return b;
    }
    throw std::runtime_error("no backend can run here (built with " + names + ")");
  }
  for (const BackendEntry& b : backends) {
    if (b.name != name) continue;
    if (const std::string why = b.unavailable(); !why.empty()) throw InputError("--backend " + name + ": " + why);
    return b;
  }
  if (name == "cuda") {
    throw InputError("--backend cuda: this ppsim-calibrate was built without CUDA (no CUDA compiler was found)");
  }
  throw InputError("--backend " + name + ": unknown backend (built with " + names + ")");
}

int calibrate(const Options& options, const std::vector<std::string>& args, const std::vector<BackendEntry>& backends,
              std::ostream& out, std::ostream& err) {
  check_sizes(options);
  const std::vector<Precision> precisions = parse_precisions(options.precision);
  const std::optional<Architecture> model = read_model(options.model);
  const LayerLayout layout{options.seq, options.micro_batch, options.tp};
  if (model) {
    if (const std::string problem = check_layout(*model, layout); !problem.empty()) {
      throw InputError("--tp " + std::to_string(options.tp) + ": " + problem);
    }
  }
  // Before minutes of measuring: a path that cannot be written is refused now.
  if (!options.output.empty()) check_output_target(options.output, "-o");
  const BackendEntry& entry = choose_backend(options.backend, backends);

  const std::unique_ptr<Backend> backend = entry.create(options.quick);
  const CalibrationPlan plan =
      make_plan(model, layout, precisions, plan_scale(backend->name(), options.quick), backend->element_bytes());
  const Measurements measured = run_plan(*backend, plan, &err);

  BuildContext context;
  context.tool = version_line("ppsim-calibrate");
  context.command_line = command_line(args);
  context.date = utc_now_iso8601();
  context.request["model"] = model ? nlohmann::ordered_json(model->name) : nlohmann::ordered_json(nullptr);
  context.request["model_from"] =
      options.model.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(options.model);
  context.request["tensor_parallel"] = options.tp;
  context.request["seq"] = options.seq;
  context.request["micro_batch"] = options.micro_batch;
  nlohmann::ordered_json precision_names = nlohmann::ordered_json::array();
  for (const Precision p : precisions) precision_names.push_back(precision_name(p));
  context.request["precisions"] = precision_names;
  context.request["quick"] = options.quick;
  const BuiltProfile built = build_profile(measured, context);

  const nlohmann::ordered_json json = hardware_profile_to_json(built.profile, built.calibration);
  // Read it back as ppsim will: a profile the reader refuses is a bug here, not a result.
  hardware_profile_from_json(nlohmann::json::parse(json.dump()), "the calibrated profile");
  const std::string text = json.dump(2) + "\n";
  if (options.output.empty()) {
    out << text;
  } else {
    // ppsim's own routine: a temporary renamed into place, a FIFO or a device written in place (never
    // replaced), a full disk refused.
    write_file_atomically(options.output, text, "-o");
    err << "ppsim-calibrate: wrote " << options.output << "\n";
  }
  return kExitOk;
}

// Every flag of ppsim-calibrate, bound to `options`.
void define_cli(CLI::App& app, Options& options, const std::vector<BackendEntry>& backends) {
  std::string backend_names;
  for (const BackendEntry& b : backends) backend_names += (backend_names.empty() ? "" : "|") + b.name;
  app.description(
      "Measures the kernels a transformer layer runs (GEMMs, attention, memory-bound kernels, copies) and writes "
      "them as a ppsim hardware profile (JSON, the schema of configs/hardware).");
  app.name("ppsim-calibrate");
  app.set_version_flag("--version", version_line("ppsim-calibrate") + " (backends: " + backend_names + ")");
  app.add_option("--backend", options.backend,
                 "where to measure; default: cuda when built with it and a GPU is present, else cpu")
      ->type_name(backend_names);
  app.add_option("--model", options.model,
                 "measure the GEMM shapes of this architecture (preset name or configs/models JSON); "
                 "default: a generic grid")
      ->type_name("FILE.json|PRESET");
  app.add_option("--tp", options.tp, "tensor-parallel ranks the layer is split over (default 1)")->type_name("N");
  app.add_option("--seq", options.seq, "sequence length (default 4096)")->type_name("N");
  app.add_option("--micro-batch", options.micro_batch, "sequences per micro-batch (default 1)")->type_name("N");
  app.add_option("--precision", options.precision, "GEMM precisions, comma-separated; bf16 is always measured")
      ->type_name("bf16[,fp16,tf32,fp32]");
  app.add_flag("--quick", options.quick, "small sizes and few runs (for tests; numbers are rough)");
  app.add_option("-o,--output", options.output, "write the profile here (default: stdout)")->type_name("FILE");
}

}  // namespace

int run_calibrate_cli(const std::vector<std::string>& args, const std::vector<BackendEntry>& backends,
                      std::ostream& out, std::ostream& err) {
  Options options;
  CLI::App app;
  define_cli(app, options, backends);

  try {
    std::vector<const char*> argv{"ppsim-calibrate"};
    for (const std::string& arg : args) argv.push_back(arg.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    err << "ppsim-calibrate: error: " << one_line(e.what()) << "\n";
    return kExitBadInput;
  }

  try {
    return calibrate(options, args, backends, out, err);
  } catch (const InputError& e) {  // a flag, or the output file through ppsim's routine
    err << "ppsim-calibrate: error: " << one_line(e.what()) << "\n";
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    err << "ppsim-calibrate: error: out of memory; take a smaller --seq or --micro-batch\n";
    return kExitFailure;
  } catch (const std::exception& e) {
    err << "ppsim-calibrate: error: " << one_line(e.what()) << "\n";
    return kExitFailure;
  }
}

void visit_calibrate_cli_definition(const std::vector<BackendEntry>& backends,
                                    const std::function<void(const CLI::App&)>& visit) {
  Options options;
  CLI::App app;
  define_cli(app, options, backends);
  visit(app);
}

}  // namespace ppsim::calibrate
