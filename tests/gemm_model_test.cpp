// SPDX-License-Identifier: Apache-2.0
// The shape model of GEMMs (models/hardware/gemm_model.hpp): its parts computed by hand, and the
// presets against every published measurement in configs/hardware/published/gemm_points.json. The
// points that calibrate a peak fraction must come back exactly; the others are checks, each printed
// in docs/validation.md with the model's prediction and error, and their mean absolute error may not
// rise above the figure the document and the README state.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "models/hardware/gemm_model.hpp"
#include "models/hardware/profile.hpp"
#include "support/cli_run.hpp"
#include "support/documented_figures.hpp"

using Catch::Matchers::WithinRel;
using ppsim::GemmModel;
using ppsim::GemmShape;

namespace {

using ppsim::test::printed;
using ppsim::test::source_path;
using ppsim::test::stated_figure;

GemmModel small_machine() {
  GemmModel model;
  model.sm_count = 100;
  model.tile_rows = 128;
  model.tile_cols = 256;
  model.min_split_k = 2048;
  model.kernel_overhead = 0;
  model.peak_fraction = {{"bf16", 0.5}};
  return model;
}

constexpr double kPeak = 1e15;
// Each SM's share of the achievable rate on the small machine: 1e15 * 0.5 / 100.
constexpr double kPerSm = 5e12;

// The preset's TFLOP/s for a point's shape at the benchmark's clock, with its peak fraction for the point's precision
// replaced by `fraction` when that is > 0.
double predicted_tflops(const ppsim::HardwareProfile& preset, const nlohmann::json& point, double fraction = 0) {
  ppsim::HardwareProfile profile = preset;
  // The microbenchmarks ran for seconds at the clock the GPU boosts to, not at the one it sustains
  // through a training run (sustained_clock).
  profile.sustained_clock = 1.0;
  const std::string precision = point["precision"];
  if (fraction > 0) profile.gemm_model.peak_fraction[precision] = fraction;
  const GemmShape shape{point["m"].get<double>(), point["k"].get<double>(), point["n"].get<double>()};
  return shape.flops() / profile.gemm_time(shape, precision) / 1e12;
}

}  // namespace

TEST_CASE("A GEMM that fills part of one wave takes one tile's K loop") {
  // 1024 x 1024 x 1024: 8 x 4 tiles of 128 x 256 (either way round) on 100 SMs, K too short to split.
  const GemmModel model = small_machine();
  CHECK_THAT(model.compute_time({1024, 1024, 1024}, kPeak, 0.5), WithinRel(2.0 * 128 * 256 * 1024 / kPerSm, 1e-15));
}

TEST_CASE("A GEMM with too few tiles splits K while each split keeps min_split_k") {
  // 128 x 8192 x 256: one tile; 100 SMs would allow 100 splits, K allows 8192 / 2048 = 4.
  const GemmModel model = small_machine();
  CHECK_THAT(model.compute_time({128, 8192, 256}, kPeak, 0.5), WithinRel(2.0 * 128 * 256 * 2048 / kPerSm, 1e-15));
  // Without enough K to split, the one tile runs its whole K loop.
  GemmModel no_split = model;
  no_split.min_split_k = 1e9;
  CHECK_THAT(no_split.compute_time({128, 8192, 256}, kPeak, 0.5), WithinRel(2.0 * 128 * 256 * 8192 / kPerSm, 1e-15));
}

TEST_CASE("Stream-K scheduling spreads a partial last wave: 150 tiles on 100 SMs take 1.5 waves, not 2") {
  // 128 x 256 tiles: 15 x 10 = 150 of them for a 1920 x 2560 output; the other orientation has
  // 8 x 20 = 160, so the first wins.
  const GemmModel model = small_machine();
  CHECK_THAT(model.compute_time({1920, 4096, 2560}, kPeak, 0.5), WithinRel(1.5 * 2.0 * 128 * 256 * 4096 / kPerSm, 1e-15));
}

TEST_CASE("Compute and memory combine as a 4-norm plus the per-GEMM overhead") {
  GemmModel model = small_machine();
  model.kernel_overhead = 1e-6;
  // Away from the ridge the larger part dominates; at it, both add 2^(1/4) - 1, about 19%.
  CHECK_THAT(model.time(1.0, 1.0), WithinRel(1e-6 + std::pow(2.0, 0.25), 1e-15));
  CHECK_THAT(model.time(3.0, 4.0), WithinRel(1e-6 + std::pow(81.0 + 256.0, 0.25), 1e-15));
  CHECK_THAT(model.time(1e-3, 1.0), WithinRel(1e-6 + 1.0, 1e-12));
  CHECK(model.time(0, 0) == 1e-6);
  // Operand bytes: A and B in the GEMM's precision, C in bf16.
  CHECK(GemmModel::operand_bytes({10, 20, 30}, "bf16") == (10 * 20 + 20 * 30) * 2 + 10 * 30 * 2);
  CHECK(GemmModel::operand_bytes({10, 20, 30}, "fp8") == (10 * 20 + 20 * 30) * 1 + 10 * 30 * 2);
}

TEST_CASE("A skinny GEMM is bound by streaming its weight from HBM") {
  // 64 tokens by a 5376 x 12288 weight on H100: about 134 MB, over 40 us at the published streaming
  // rate, against under 30 us of tensor-core work.
  const ppsim::HardwareProfile& h100 = *ppsim::find_hardware_preset("H100-SXM5-80GB");
  const GemmShape skinny{64, 5376, 12288};
  const double streaming = h100.memory.points().back().fraction;
  const double memory = GemmModel::operand_bytes(skinny, "bf16") / (h100.memory_bandwidth * streaming);
  const double compute = h100.gemm_model.compute_time(skinny, 989.4e12, h100.gemm_model.fraction("bf16"));
  CHECK(memory > compute);
  CHECK(h100.gemm_time(skinny, "bf16") > memory);
  // fp16 runs at bf16's fraction; a precision without a fraction falls back to the FLOP tables.
  CHECK(h100.gemm_time(skinny, "fp16") == h100.gemm_time(skinny, "bf16"));
  CHECK(h100.gemm_time(skinny, "tf32") == h100.gemm_time(skinny.flops(), "tf32"));
}

TEST_CASE("Each preset's peak fraction reproduces the published point it is solved from") {
  const nlohmann::json points =
      nlohmann::json::parse(ppsim::test::read_whole(source_path("configs/hardware/published/gemm_points.json")))["points"];
  int calibrating = 0;
  for (const nlohmann::json& point : points) {
    if (point["role"] != "calibrates") continue;
    ++calibrating;
    const ppsim::HardwareProfile& preset = *ppsim::find_hardware_preset(point["gpu"].get<std::string>());
    const std::string precision = point["precision"];
    INFO(preset.name << " " << precision);
    // Solve the fraction by bisection (the prediction rises with it), then compare with the preset's.
    double low = 0.1;
    double high = 1.0;
    for (int i = 0; i < 60; ++i) {
      const double middle = (low + high) / 2;
      (predicted_tflops(preset, point, middle) < point["tflops"].get<double>() ? low : high) = middle;
    }
    CHECK_THAT(preset.gemm_model.fraction(precision), WithinRel(low, 2e-4));
    CHECK_THAT(predicted_tflops(preset, point), WithinRel(point["tflops"].get<double>(), 5e-4));
  }
  CHECK(calibrating == 7);
}

TEST_CASE("The GEMM model predicts every published check point docs/validation.md prints, within its stated error") {
  const std::string document = ppsim::test::read_whole(source_path("docs/validation.md"));
  const std::string readme = ppsim::test::read_whole(source_path("README.md"));
  const nlohmann::json points =
      nlohmann::json::parse(ppsim::test::read_whole(source_path("configs/hardware/published/gemm_points.json")))["points"];
  double sum = 0;
  double worst = 0;
  int checks = 0;
  for (const nlohmann::json& point : points) {
    if (point["role"] != "checks") continue;
    const ppsim::HardwareProfile& preset = *ppsim::find_hardware_preset(point["gpu"].get<std::string>());
    const std::string shape = std::to_string(point["m"].get<int>()) + "x" + std::to_string(point["n"].get<int>()) +
                              "x" + std::to_string(point["k"].get<int>());
    INFO(preset.name << " " << point["precision"].get<std::string>() << " " << shape);
    const double measured = point["tflops"];
    const double predicted = predicted_tflops(preset, point);
    const double error = (predicted - measured) / measured;
    const std::size_t row = document.find("| " + preset.name + " | " + point["precision"].get<std::string>() + " | " +
                                          shape + " |");
    REQUIRE(row != std::string::npos);
    const std::string line = document.substr(row, document.find('\n', row) - row);
    CHECK_THAT(line, Catch::Matchers::Contains("| " + printed("%.1f", predicted) + " |"));
    CHECK_THAT(line, Catch::Matchers::Contains("| " + printed("%+.1f%%", 100 * error) + " |"));
    sum += std::fabs(error);
    worst = std::max(worst, std::fabs(error));
    ++checks;
  }
  REQUIRE(checks >= 10);
  const double mean = 100 * sum / checks;
  const std::string label = "GEMM model against published microbenchmarks: mean absolute error ";
  CHECK(mean <= stated_figure(document, label) + 0.05);
  CHECK(mean <= stated_figure(readme, label) + 0.05);
  CHECK(100 * worst <= stated_figure(document, "over the check points; worst ") + 0.05);
}

TEST_CASE("A GEMM beside an overlapped collective runs its tiles on the SMs the collective leaves") {
  // 150 tiles: 1.5 waves on 100 SMs; with 25 SMs taken, 2 waves on the other 75, each SM at the same rate.
  const GemmModel model = small_machine();
  const GemmShape shape{1920, 4096, 2560};
  CHECK_THAT(model.compute_time(shape, kPeak, 0.5, 25), WithinRel(2.0 * 2.0 * 128 * 256 * 4096 / kPerSm, 1e-15));
  CHECK(model.compute_time(shape, kPeak, 0.5, 0) == model.compute_time(shape, kPeak, 0.5));
  // H100 under Transformer Engine's userbuffers: a large GEMM on 116 of 132 SMs takes 132/116 as long
  // in its compute part (many waves, so no rounding).
  const ppsim::HardwareProfile& h100 = *ppsim::find_hardware_preset("H100-SXM5-80GB");
  const GemmShape big{16384, 8192, 8192};
  const double fraction = h100.gemm_model.fraction("bf16");
  CHECK_THAT(h100.gemm_model.compute_time(big, 989.4e12, fraction, 16) /
                 h100.gemm_model.compute_time(big, 989.4e12, fraction),
             WithinRel(132.0 / 116.0, 1e-12));
  // A profile without a shape model has no SM count: nothing is taken.
  ppsim::HardwareProfile tables_only = h100;
  tables_only.gemm_model = {};
  CHECK(tables_only.gemm_time(big, "bf16", 16) == tables_only.gemm_time(big, "bf16"));
}
