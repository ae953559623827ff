// SPDX-License-Identifier: Apache-2.0
#pragma once
// Turns measurements into a hardware profile (the schema of configs/hardware/*.json) and the
// "calibration" object that records how they were taken.
//
// - GEMM table (bf16): achieved FLOP/s / peak against FLOPs of one GEMM, every planned GEMM
//   (attention's batched products included, since the cost model times them through the same table).
// - Memory table: achieved bytes/s / peak bandwidth against bytes moved by one kernel; the sweep's
//   kernels meet at its nominal sizes, the layer's kernels add their own sizes.
// - Link tables: each link's times are fitted to latency + bytes / bandwidth (see fit_link); the
//   table is what remains, bytes / ((time - latency) * bandwidth), so the profile's message_time
//   gives back every measured median.
// Every table: sorted by size, equal sizes merged by their median, fractions kept in (0, 1].
//
// Peaks: the datasheet of the matching preset for a known GPU (so measured fractions compare with
// the presets' published ones), otherwise the best rate measured; for the CPU backend always the best
// measured GEMM rate and the best measured copy rate. The "source" text says which.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "models/hardware/efficiency.hpp"
#include "models/hardware/profile.hpp"
#include "tools/calibrate/runner.hpp"

namespace ppsim::calibrate {

struct BuildContext {
  std::string tool;                                                   // "ppsim-calibrate 0.1.0"
  std::string command_line;                                           // as typed
  std::string date;                                                   // UTC, ISO 8601
  nlohmann::ordered_json request = nlohmann::ordered_json::object();  // model, layout, precisions, quick
};

struct BuiltProfile {
  HardwareProfile profile;
  nlohmann::ordered_json calibration;
};

BuiltProfile build_profile(const Measurements& measurements, const BuildContext& context);

// The preset whose datasheet peaks a GPU of this CUDA device name has, or nullptr: "NVIDIA H200"
// (not H200 NVL, not GH200), "NVIDIA H100 80GB HBM3" (SXM5; not PCIe or NVL), "NVIDIA
// A100-SXM4-80GB". Other parts have other clocks and peaks, so they get measured peaks instead.
const HardwareProfile* preset_for_device(std::string_view device_name);

// Sorted by size, equal sizes merged into one point at their median fraction, fractions rounded to
// 4 significant digits and clamped to (0, 1]; `clamped` counts points that were more than 0.1%
// above 1 (less is the rounding of a peak to 4 digits). Points without a positive fraction are
// dropped.
std::vector<EfficiencyPoint> efficiency_points(std::vector<EfficiencyPoint> raw, int* clamped = nullptr);

// A link model from (bytes, seconds) medians: the line t = latency + bytes / bandwidth that stays
// at or below every point and comes nearest them (least total relative gap): the link's best-case
// latency and bandwidth. The table is what the line leaves, bytes / ((t - latency) * bandwidth),
// 1 where a size runs on the line and below 1 where it runs slower (protocol switches, small-copy
// overheads, a cold cache), so the profile's message_time gives back every measured time.
struct LinkModel {
  double latency = 0;    // seconds, 4 significant digits
  double bandwidth = 0;  // bytes/s, 4 significant digits
  std::vector<EfficiencyPoint> table;
  int clamped = 0;  // points more than 0.1% above the line (none, barring rounding)
};
LinkModel fit_link(const std::vector<std::pair<double, double>>& bytes_seconds);

// `value` to `digits` significant digits (positive values stay positive).
double round_significant(double value, int digits);

}  // namespace ppsim::calibrate
