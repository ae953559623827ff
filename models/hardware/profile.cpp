// SPDX-License-Identifier: Apache-2.0
#include "models/hardware/profile.hpp"

#include "models/hardware/published_tables.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

namespace ppsim {
namespace {

// The datasheets write capacity as "80GB" / "141GB", but HBM capacity is binary-sized like all
// DRAM: an A100-SXM4-80GB reports 81920 MiB (exactly 80 GiB) in nvidia-smi. So the figure is read
// as GiB. nvidia-smi shows a little less on Hopper (H100 80GB: 81559 MiB), because the driver
// reserves some; the cost model's workspace allowance, not this number, covers such losses.
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

// The datasheet-only GEMM tables by FLOPs, which the presets keep for a GEMM whose shape a caller does
// not know (every other efficiency comes from published_tables.hpp). They are assumptions, not
// measurements, chosen to have the shape such measurements have: small GEMMs cannot fill every SM
// with tiles and pay launch and wave-quantization overhead; large bf16 GEMMs reach about 70-80% of
// the dense datasheet peak in cuBLAS size sweeps. Rises from 0.2 at 1e8 FLOPs (e.g. 512x512x256) to
// 0.75 from 1e12 FLOPs on.
EfficiencyTable assumed_table(std::vector<EfficiencyPoint> points) {
  auto table = EfficiencyTable::create(std::move(points));
  // The presets are fixed data: a bad table is a bug in this file, caught by the tests.
  if (!table.ok) throw std::logic_error("hardware preset table: " + table.error);
  return std::move(table.value);
}

EfficiencyTable assumed_gemm_table() {
  return assumed_table({{1e8, 0.20}, {1e9, 0.35}, {1e10, 0.55}, {1e11, 0.68}, {1e12, 0.75}});
}

// FP8 GEMMs run the same tiles twice as fast, so their fixed costs (launch, prologue, wave tails)
// weigh twice as much at a given FLOP count: the bf16 curve shifted right by a factor of 2 in
// FLOPs. Large FP8 GEMMs also reach a smaller share of their doubled peak than bf16 does, because
// operand loads and the epilogue do not speed up with the tensor cores: 0.65 against 0.75 at the
// top, the ratio cuBLAS's published H100 results show between FP8 and BF16 for large square GEMMs
// (NVIDIA cuBLAS 12.0 release blog, "H100 ... FP8 up to 3x A100"). Assumed, like the rest.
EfficiencyTable assumed_gemm_fp8_table() {
  return assumed_table({{2e8, 0.17}, {2e9, 0.30}, {2e10, 0.47}, {2e11, 0.59}, {2e12, 0.65}});
}


// Typical per-message latencies of NCCL point-to-point sends, not from any datasheet: a few
// microseconds over NVLink inside a node, somewhat more over InfiniBand between nodes.
constexpr double kAssumedNvlinkLatency = 3e-6;
constexpr double kAssumedInfinibandLatency = 8e-6;

// The presets' efficiencies from published kernel measurements (published_tables.hpp). The two
// FLOP-keyed GEMM tables stay, assumed, for a GEMM whose shape a caller does not know.
void set_published_efficiencies(HardwareProfile& p, PublishedGpu gpu) {
  p.gemm_model = published_gemm_model(gpu);
  p.memory = published_memory_table(gpu);
  p.attention_forward = published_attention_forward(gpu);
  p.attention_backward = published_attention_backward(gpu);
  p.intra_link = published_intra_link_table(gpu);
  p.inter_link = published_inter_link_table(gpu);
  p.sustained_clock = published_sustained_clock(gpu);
  const NvlsFigures nvls = published_nvls(gpu);
  p.nvls_bus_bandwidth = nvls.all_reduce_bus_bandwidth;
  p.nvls_min_ranks = nvls.min_ranks;
  p.sources = published_sources(gpu);
  p.efficiency_published = true;
  p.efficiency_assumed = false;
}

HardwareProfile a100_sxm4_80gb() {
  HardwareProfile p;
  p.name = "A100-SXM4-80GB";
  // Datasheet: BF16/FP16 Tensor Core 312 TFLOPS (624 with sparsity), TF32 156 (312 sparse),
  // FP32 19.5. A100 has no FP8.
  p.dense_peak_flops = {{"bf16", 312e12}, {"fp16", 312e12}, {"tf32", 156e12}, {"fp32", 19.5e12}};
  p.memory_bandwidth = 2039e9;  // datasheet: 2,039 GB/s for the 80GB SXM part (decimal GB)
  p.memory_capacity = 80 * kGiB;
  p.devices_per_node = 8;          // DGX A100 / HGX A100 8-GPU
  p.intra_node_bandwidth = 300e9;  // NVLink 3: 600 GB/s total = 300 GB/s each direction
  p.intra_node_latency = kAssumedNvlinkLatency;
  p.inter_node_bandwidth = 25e9;  // one 200 Gb/s HDR port per GPU = 25 GB/s each direction
  p.inter_node_latency = kAssumedInfinibandLatency;
  p.host_bandwidth = 32e9;  // PCIe Gen4 x16: 64 GB/s total = 32 GB/s each direction
  p.gemm = assumed_gemm_table();
  set_published_efficiencies(p, PublishedGpu::kA100);
  p.source =
      "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM column): BF16 312 TFLOPS dense "
      "(624 sparse), TF32 156, FP32 19.5, 80GB HBM2e, 2,039 GB/s, NVLink 600 GB/s; DGX A100 "
      "user guide: 8 GPUs per node, 8x 200 Gb/s HDR InfiniBand (ConnectX-6) compute ports. "
      "Latencies are assumed; the efficiencies come from published microbenchmarks (sources).";
  p.latency_assumed = true;
  return p;
}

// An 8-GPU node (DGX/HGX H100, H200, B200; the MI300X OAM platform): `intra` bytes/s each direction inside the node, one 400 Gb/s
// NIC per GPU (50 GB/s each direction), PCIe Gen5 x16 to the host, assumed latencies, and the
// FLOP-keyed GEMM tables kept for a GEMM of unknown shape.
void set_eight_gpu_node(HardwareProfile& p, double intra) {
  p.devices_per_node = 8;
  p.intra_node_bandwidth = intra;
  p.intra_node_latency = kAssumedNvlinkLatency;
  p.inter_node_bandwidth = 50e9;
  p.inter_node_latency = kAssumedInfinibandLatency;
  p.host_bandwidth = 64e9;
  p.gemm = assumed_gemm_table();
  p.gemm_fp8 = assumed_gemm_fp8_table();
  p.latency_assumed = true;
}

// H100 SXM5 and H200 SXM share the GH100 die, SM count and clocks, so their tensor peaks are
// equal. The datasheets give tensor figures "with sparsity" (BF16 1,979 TFLOPS) and say dense is
// half; the Hopper architecture whitepaper gives the dense H100 SXM5 figures unrounded.
void set_hopper_sxm_peaks(HardwareProfile& p) {
  p.dense_peak_flops = {
      {"bf16", 989.4e12}, {"fp16", 989.4e12}, {"fp8", 1978.9e12}, {"tf32", 494.7e12}, {"fp32", 66.9e12}};
  // NVLink 4: 900 GB/s total = 450 GB/s each direction; one 400 Gb/s NDR port per GPU.
  set_eight_gpu_node(p, 450e9);
}

HardwareProfile h100_sxm5_80gb() {
  HardwareProfile p;
  p.name = "H100-SXM5-80GB";
  set_hopper_sxm_peaks(p);
  p.memory_bandwidth = 3.35e12;  // datasheet: 3.35 TB/s (H100 SXM)
  p.memory_capacity = 80 * kGiB;
  set_published_efficiencies(p, PublishedGpu::kH100);
  p.source =
      "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column): BF16 1,979 TFLOPS with sparsity "
      "(dense is half), 80GB HBM3, 3.35 TB/s, NVLink 900 GB/s; NVIDIA H100 Tensor Core GPU "
      "Architecture whitepaper: dense H100 SXM5 FP16/BF16 989.4, FP8 1978.9, TF32 494.7, FP32 "
      "66.9 TFLOPS; DGX H100 user guide: 8 GPUs per node, 8x 400 Gb/s NDR InfiniBand "
      "(ConnectX-7) compute ports. Latencies are assumed; the efficiencies come from published "
      "microbenchmarks (sources).";
  return p;
}

HardwareProfile h200_sxm_141gb() {
  HardwareProfile p;
  p.name = "H200-SXM-141GB";
  set_hopper_sxm_peaks(p);
  p.memory_bandwidth = 4.8e12;  // datasheet: 4.8 TB/s (H200 SXM)
  p.memory_capacity = 141 * kGiB;
  set_published_efficiencies(p, PublishedGpu::kH200);
  p.source =
      "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column): BF16 1,979 TFLOPS with sparsity "
      "(dense is half, same tensor peaks as H100 SXM, so the Hopper whitepaper's dense H100 SXM5 "
      "figures are used), 141GB HBM3e, 4.8 TB/s, NVLink 900 GB/s; DGX H200: 8 GPUs per node, "
      "8x 400 Gb/s NDR InfiniBand (ConnectX-7) compute ports. Latencies are assumed; the "
      "efficiencies come from published microbenchmarks (sources).";
  return p;
}

HardwareProfile b200_sxm_180gb() {
  HardwareProfile p;
  p.name = "B200-SXM-180GB";
  // Dense tensor peaks: half the datasheets' "with sparsity" figures (DGX B200: 72 PFLOPS FP8 and 36
  // FP16/BF16 over 8 GPUs, sparse); FP32 80 TFLOPS as stas00/ml-engineering's table (NVIDIA's HGX
  // page gives 75 per GPU: the lower figure matters only for FP32 work, which training does not do).
  p.dense_peak_flops = {{"bf16", 2250e12}, {"fp16", 2250e12}, {"fp8", 4500e12}, {"tf32", 1125e12}, {"fp32", 80e12}};
  p.memory_bandwidth = 8.0e12;   // DGX B200 datasheet: 64 TB/s over 8 GPUs
  p.memory_capacity = 180 * kGiB;  // DGX B200 user guide: 1,440 GB over 8 GPUs
  // NVLink 5: 1.8 TB/s total = 900 GB/s each direction; one 400 Gb/s ConnectX-7 per GPU (DGX B200
  // user guide).
  set_eight_gpu_node(p, 900e9);
  set_published_efficiencies(p, PublishedGpu::kB200);
  p.source =
      "NVIDIA DGX B200 datasheet and user guide: 8x B200, 1,440 GB HBM3e and 64 TB/s in total, 72 PFLOPS FP8 and "
      "36 PFLOPS FP16/BF16 with sparsity (dense is half: BF16 2250, FP8 4500, TF32 1125 TFLOPS per GPU), NVLink 5 "
      "1.8 TB/s per GPU, 8x 400 Gb/s ConnectX-7; FP32 80 TFLOPS (stas00/ml-engineering compute/accelerator "
      "table). Latencies are assumed; the efficiencies come from published microbenchmarks where there are "
      "any (sources), and the rest is assumed as the sources say.";
  return p;
}

HardwareProfile mi300x_oam_192gb() {
  HardwareProfile p;
  p.name = "MI300X-OAM-192GB";
  // AMD Instinct MI300X data sheet: dense matrix peaks (the sheet also prints the doubled "with
  // structured sparsity" ones): BF16/FP16 1307.4, FP8 2614.9, TF32 653.7, FP32 163.4 TFLOPS.
  p.dense_peak_flops = {
      {"bf16", 1307.4e12}, {"fp16", 1307.4e12}, {"fp8", 2614.9e12}, {"tf32", 653.7e12}, {"fp32", 163.4e12}};
  p.memory_bandwidth = 5.3e12;   // 5.3 TB/s HBM3
  p.memory_capacity = 192 * kGiB;  // 192 GB HBM3
  // The 8-GPU OAM platform, fully connected by Infinity Fabric: seven links of 64 GB/s each direction
  // (128 GB/s "peak link bandwidth" read as both directions, as stas00/ml-engineering
  // network/README.md reads it), 448 GB/s to the other seven together, which a collective over the 8
  // GPUs uses; a point-to-point send between two GPUs has one link, 64 GB/s, so pipeline sends inside
  // a node are timed optimistically on this profile. The NIC, one 400 Gb/s per GPU, is assumed.
  set_eight_gpu_node(p, 448e9);
  set_published_efficiencies(p, PublishedGpu::kMI300X);
  p.source =
      "AMD Instinct MI300X datasheet: 304 CUs, BF16/FP16 1307.4, FP8 2614.9, TF32 653.7, FP32 163.4 TFLOPS dense, "
      "192 GB HBM3 at 5.3 TB/s, 7 Infinity Fabric links of 128 GB/s (64 GB/s each direction; 448 GB/s to the "
      "other seven together, one link, 64 GB/s, to any one of them), PCIe Gen5 x16; 8 GPUs per OAM platform. The "
      "inter-node NIC (400 Gb/s per GPU) is assumed. Latencies are assumed; the efficiencies come from published "
      "microbenchmarks where there are any (sources), and the rest is assumed as the sources say.";
  return p;
}

bool positive_finite(double x) { return std::isfinite(x) && x > 0; }

}  // namespace

std::optional<double> HardwareProfile::peak_flops(std::string_view precision) const {
  const auto it = dense_peak_flops.find(precision);
  if (it == dense_peak_flops.end()) return std::nullopt;
  return it->second;
}

double HardwareProfile::gemm_time(double flops) const { return gemm_time(flops, "bf16"); }

double HardwareProfile::gemm_time(double flops, std::string_view precision) const {
  const auto peak = peak_flops(precision);
  if (!peak) {
    throw std::invalid_argument("hardware profile " + name + " has no " + std::string(precision) + " peak");
  }
  if (!(flops > 0)) return 0.0;
  const EfficiencyTable& table = precision == "fp8" && !gemm_fp8.empty() ? gemm_fp8 : gemm;
  return flops / (*peak * table.at(flops));
}

double HardwareProfile::gemm_time(const GemmShape& shape, std::string_view precision, int sms_taken) const {
  const double fraction = gemm_model.empty() ? 0.0 : gemm_model.fraction(precision);
  if (fraction <= 0) return gemm_time(shape.flops(), precision);
  const auto peak = peak_flops(precision);
  if (!peak) {
    throw std::invalid_argument("hardware profile " + name + " has no " + std::string(precision) + " peak");
  }
  if (!(shape.flops() > 0)) return 0.0;
  // The operands stream at the memory table's large-kernel rate: the ramp below it is a small
  // kernel's fixed cost, which kernel_overhead already charges.
  const double streaming = memory.empty() ? 1.0 : memory.points().back().fraction;
  return gemm_model.time(gemm_model.compute_time(shape, *peak * sustained_clock, fraction, sms_taken),
                         GemmModel::operand_bytes(shape, precision) / (memory_bandwidth * streaming));
}

double HardwareProfile::attention_time(double flops, double seq, bool backward, std::string_view precision) const {
  if (attention_forward.empty()) return gemm_time(flops, precision);
  if (!(flops > 0)) return 0.0;
  return flops /
         (*peak_flops("bf16") * sustained_clock * (backward ? attention_backward : attention_forward).at(seq));
}

double HardwareProfile::memory_time(double bytes) const {
  if (!(bytes > 0)) return 0.0;
  return bytes / (memory_bandwidth * memory.at(bytes));
}

double HardwareProfile::message_time(double bytes, bool inter_node) const {
  if (!(bytes > 0)) return 0.0;
  const double latency = inter_node ? inter_node_latency : intra_node_latency;
  const double bandwidth = inter_node ? inter_node_bandwidth : intra_node_bandwidth;
  const EfficiencyTable& link = inter_node ? inter_link : intra_link;
  return latency + bytes / (bandwidth * link.at(bytes));
}

const CollectiveTable* HardwareProfile::collective_table(Collective op, int ranks) const {
  for (const CollectiveTable& table : collectives) {
    if (table.op() == op && table.ranks() == ranks) return &table;
  }
  return nullptr;
}

std::string validate_hardware_profile(const HardwareProfile& p) {
  if (p.name.empty()) return "the profile has no name";
  const std::string who = "hardware profile " + p.name + ": ";
  if (!p.peak_flops("bf16")) return who + "no bf16 peak (dense_peak_flops.bf16)";
  for (const auto& [precision, flops] : p.dense_peak_flops) {
    if (!positive_finite(flops)) return who + precision + " peak must be finite and > 0";
  }
  if (!positive_finite(p.memory_bandwidth)) return who + "memory_bandwidth must be finite and > 0";
  if (!(p.sustained_clock >= 1e-3 && p.sustained_clock <= 1)) return who + "sustained_clock must be in [0.001, 1]";
  if (p.efficiency_assumed && p.efficiency_published) return who + "efficiency cannot be both assumed and published";
  if (p.efficiency_published != !p.sources.empty()) {
    return who + "published efficiencies need their sources, and only they have sources";
  }
  if (p.attention_forward.empty() != p.attention_backward.empty()) {
    return who + "the fused-attention tables come as a pair (attention_forward, attention_backward)";
  }
  if (!p.gemm_model.empty()) {
    const GemmModel& g = p.gemm_model;
    const auto whole = [](double x) { return x >= 1 && x <= 4096 && x == std::floor(x); };
    if (g.sm_count < 1 || g.sm_count > (1 << 16)) return who + "gemm_model.sm_count must be from 1 to 65536";
    if (!whole(g.tile_rows) || !whole(g.tile_cols)) return who + "gemm_model.tile must be two whole numbers from 1 to 4096";
    if (!(g.min_split_k >= 1 && g.min_split_k <= 1e9)) return who + "gemm_model.min_split_k must be from 1 to 1e9";
    if (!(g.kernel_overhead >= 0 && g.kernel_overhead <= 1)) return who + "gemm_model.kernel_overhead must be from 0 to 1";
    if (g.peak_fraction.empty()) return who + "gemm_model.peak_fraction needs at least one precision";
    for (const auto& [precision, fraction] : g.peak_fraction) {
      if (!(fraction >= 1e-3 && fraction <= 1)) return who + "gemm_model.peak_fraction." + precision + " must be from 0.001 to 1";
      if (!p.peak_flops(precision)) return who + "gemm_model.peak_fraction." + precision + " has no peak";
    }
  }
  if (p.memory_capacity <= 0) return who + "memory_capacity must be > 0";
  if (p.devices_per_node < 1) return who + "devices_per_node must be >= 1";
  if (!positive_finite(p.intra_node_bandwidth)) {
    return who + "intra_node_bandwidth must be finite and > 0";
  }
  if (!positive_finite(p.inter_node_bandwidth)) {
    return who + "inter_node_bandwidth must be finite and > 0";
  }
  if (!std::isfinite(p.intra_node_latency) || p.intra_node_latency < 0) {
    return who + "intra_node_latency must be finite and >= 0";
  }
  if (!std::isfinite(p.inter_node_latency) || p.inter_node_latency < 0) {
    return who + "inter_node_latency must be finite and >= 0";
  }
  if (!std::isfinite(p.nvls_bus_bandwidth) || p.nvls_bus_bandwidth < 0) {
    return who + "nvls_bus_bandwidth must be finite and >= 0";
  }
  if (p.nvls_bus_bandwidth > 0 && p.nvls_min_ranks < 2) return who + "nvls_min_ranks must be >= 2";
  for (std::size_t i = 0; i < p.collectives.size(); ++i) {
    const CollectiveTable& table = p.collectives[i];
    const std::string which = "collectives[" + std::to_string(i) + "] (" + std::string(collective_name(table.op())) +
                              " over " + std::to_string(table.ranks()) + " ranks)";
    if (table.ranks() > p.devices_per_node) {
      return who + which + " spans more GPUs than a node has (" + std::to_string(p.devices_per_node) + ")";
    }
    if (p.collective_table(table.op(), table.ranks()) != &table) return who + which + " is given twice";
  }
  return {};
}

std::span<const HardwareProfile> hardware_presets() {
  // Built once, on first use (thread-safe static initialization), and never changed.
  static const std::vector<HardwareProfile> presets = {a100_sxm4_80gb(), h100_sxm5_80gb(), h200_sxm_141gb(),
                                                       b200_sxm_180gb(), mi300x_oam_192gb()};
  return presets;
}

const HardwareProfile* find_hardware_preset(std::string_view name) {
  for (const HardwareProfile& p : hardware_presets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string HardwareProfile::provenance() const {
  if (efficiency_assumed) return "datasheet only (assumed)";
  if (efficiency_published) {
    return "published microbenchmarks (" + std::to_string(sources.size()) + (sources.size() == 1 ? " source)" : " sources)");
  }
  return "measured on this machine (ppsim-calibrate" + (calibrated_on.empty() ? std::string() : ", " + calibrated_on) + ")";
}

}  // namespace ppsim
