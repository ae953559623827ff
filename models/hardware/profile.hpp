// SPDX-License-Identifier: Apache-2.0
#pragma once
// A hardware profile: the peaks a vendor publishes for one accelerator and its links, plus the
// efficiency tables that turn those peaks into achievable times. The transformer cost model
// (issue 4) times every GEMM, memory-bound kernel and message through this one type, so a preset
// built from datasheets and a profile measured on a real machine are used the same way.
//
// Units are base units throughout: FLOP/s, bytes/s, bytes, seconds. Bandwidths are per GPU and
// per direction, which is what one point-to-point send between two pipeline stages can use.

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/hardware/collectives.hpp"
#include "models/hardware/efficiency.hpp"
#include "models/hardware/gemm_model.hpp"

namespace ppsim {

struct HardwareProfile {
  std::string name;  // e.g. "H100-SXM5-80GB"

  // Dense (no 2:4 sparsity) matrix peak in FLOP/s, keyed by precision: "bf16", "fp16", "fp8",
  // "tf32" on tensor cores, "fp32" on the plain FP32 units. A precision the device lacks (FP8 on
  // A100) is absent.
  std::map<std::string, double, std::less<>> dense_peak_flops;

  double memory_bandwidth = 0;       // HBM, bytes/s
  std::int64_t memory_capacity = 0;  // HBM, bytes
  int devices_per_node = 1;          // GPUs that share the intra-node link (NVLink/NVSwitch domain)

  double intra_node_bandwidth = 0;  // bytes/s per GPU per direction
  double intra_node_latency = 0;    // seconds per message
  double inter_node_bandwidth = 0;  // bytes/s per GPU per direction
  double inter_node_latency = 0;    // seconds per message
  // NVLink SHARP (NVLS): the NVSwitch reduces an all-reduce in the switch, so inside a node it reaches
  // a bus bandwidth above the ring's. NCCL picks it from `nvls_min_ranks` GPUs of a node up, when it
  // is the faster algorithm; 0: the node has no NVLS and every all-reduce is a ring.
  double nvls_bus_bandwidth = 0;  // bytes/s, nccl-tests' busbw of a large all-reduce
  int nvls_min_ranks = 0;

  EfficiencyTable gemm;        // by FLOPs of one GEMM
  // By FLOPs of one FP8 GEMM (Transformer Engine's linear layers under --precision fp8); empty: the
  // gemm table at the fp8 peak.
  EfficiencyTable gemm_fp8;
  // GEMMs by shape (gemm_model.hpp); when set it times every GEMM whose shape is known, and the two
  // FLOP-keyed tables above only what has no shape.
  GemmModel gemm_model;
  EfficiencyTable memory;      // by bytes moved by one memory-bound kernel
  // Fused (flash) attention's achieved fraction of the bf16 peak by sequence length, forward and
  // backward, counting FLOPs as the FlashAttention benchmarks do (causal: half the square; backward
  // 2.5x forward); empty: the gemm table at those FLOPs.
  EfficiencyTable attention_forward;
  EfficiencyTable attention_backward;
  // The share of the clock the compute microbenchmarks above ran at that a GPU holds through hours of
  // training at its power limit: the shape model's GEMMs and the attention tables scale by it
  // (memory-bound kernels, links and the FLOP-keyed tables do not). 1 where nothing is published.
  double sustained_clock = 1.0;
  EfficiencyTable intra_link;  // by bytes of one message
  EfficiencyTable inter_link;  // by bytes of one message

  // Device-to-host copies per GPU (PCIe), bytes/s per direction: what an async checkpoint's snapshot
  // to host memory runs at; 0 when the profile does not say.
  double host_bandwidth = 0;
  // CRC32 over a checkpoint on the host, bytes/s, as ppsim-calibrate measures it; 0: not measured.
  double crc32_rate = 0;
  // Coefficients of variation of F, B, I and W (by Op) and of one message, from the measured
  // kernels' repeated runs (ppsim-calibrate); all 0 when not measured. --jitter measured uses them.
  std::array<double, 4> op_variability{};
  double link_variability = 0;
  bool has_variability() const {
    for (const double cv : op_variability) {
      if (cv > 0) return true;
    }
    return link_variability > 0;
  }

  // Collectives measured inside one node (ppsim-calibrate with NCCL), at most one per operation and
  // group size; empty in the presets, which derive every collective from the link figures.
  std::vector<CollectiveTable> collectives;

  std::string source;               // where the peaks come from
  bool efficiency_assumed = false;  // the tables are guesses, not measurements
  // The published kernel measurements the efficiencies come from, one citation each (repository,
  // file and commit, table or figure); non-empty only when `efficiency_published`.
  std::vector<std::string> sources;
  // The efficiencies come from measurements others published (the presets), not from this machine.
  bool efficiency_published = false;
  bool latency_assumed = false;     // the latencies are typical figures, not measurements
  // When the tables were measured here: the date of ppsim-calibrate's run, from the profile's
  // calibration record ("" when the profile has none).
  std::string calibrated_on;

  // Where this profile's kernel efficiencies come from (DESIGN.md, "profile provenance"), as every
  // result built on it says under mfu and step_time: "datasheet only (assumed)", "published
  // microbenchmarks (N sources)", or "measured on this machine (ppsim-calibrate, DATE)".
  std::string provenance() const;
  // The profile file's "efficiency" marker for the same: "assumed", "published" or "measured".
  const char* efficiency_marker() const {
    return efficiency_assumed ? "assumed" : efficiency_published ? "published" : "measured";
  }

  // Dense peak for `precision`, or nothing when the device has no such peak.
  std::optional<double> peak_flops(std::string_view precision) const;

  // Seconds for one GEMM of `flops` at the table's efficiency: flops / (peak * gemm.at(flops)),
  // gemm_fp8 instead of gemm for "fp8" when the profile has it. The one-argument form uses bf16, the training precision the presets are for. Throws
  // std::invalid_argument when the profile has no peak for `precision`. flops <= 0 takes 0 s.
  double gemm_time(double flops) const;
  double gemm_time(double flops, std::string_view precision) const;
  // Seconds for one GEMM of this shape: the shape model when the profile has one (and a fraction for
  // `precision`), else the FLOP-keyed table at the shape's FLOPs.
  // `sms_taken` SMs busy with an overlapped collective leave the GEMM the rest (its tiles run in more
  // waves); they cost nothing without a shape model, which is where the SM count comes from.
  double gemm_time(const GemmShape& shape, std::string_view precision, int sms_taken = 0) const;

  // Seconds of fused causal attention of `flops` (as counted above) over sequences of `seq` tokens:
  // flops / (bf16 peak * table.at(seq)), or the gemm table at `precision` without attention tables.
  double attention_time(double flops, double seq, bool backward, std::string_view precision = "bf16") const;

  // Seconds for a memory-bound kernel that moves `bytes`: bytes / (bandwidth * memory.at(bytes)).
  double memory_time(double bytes) const;

  // Seconds for one point-to-point message of `bytes`:
  // latency + bytes / (bandwidth * link.at(bytes)), on the inter-node link or the intra-node one.
  // An empty message (bytes <= 0) is not sent and takes 0 s.
  double message_time(double bytes, bool inter_node) const;

  // The measured table of `op` among `ranks` GPUs of one node, or nullptr.
  const CollectiveTable* collective_table(Collective op, int ranks) const;

  friend bool operator==(const HardwareProfile&, const HardwareProfile&) = default;
};

// Empty when the profile is usable, otherwise what is wrong with it (first problem only): a name,
// a bf16 peak, positive finite peaks, bandwidths and capacity, devices_per_node >= 1, latencies
// finite and >= 0. A profile loaded from a file is checked with this before use.
std::string validate_hardware_profile(const HardwareProfile& profile);

// The built-in presets (A100-SXM4-80GB, H100-SXM5-80GB, H200-SXM-141GB), from the vendors'
// datasheets; configs/hardware/*.json hold the same data and a test keeps the two equal.
std::span<const HardwareProfile> hardware_presets();

// The preset with this name (exact match), or nullptr.
const HardwareProfile* find_hardware_preset(std::string_view name);

}  // namespace ppsim
