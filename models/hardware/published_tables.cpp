// SPDX-License-Identifier: Apache-2.0
#include "models/hardware/published_tables.hpp"

#include <stdexcept>
#include <utility>

namespace ppsim {
namespace {

// Dense bf16 peaks (datasheets; profile.cpp) and HBM bandwidths the fractions below divide by.
constexpr double kA100Bf16Peak = 312e12;
constexpr double kHopperBf16Peak = 989.4e12;
constexpr double kA100Hbm = 2039e9;
constexpr double kH100Hbm = 3.35e12;

EfficiencyTable table(std::vector<EfficiencyPoint> points) {
  auto made = EfficiencyTable::create(std::move(points));
  // Fixed data: a bad table is a bug in this file, caught by the tests.
  if (!made.ok) throw std::logic_error("published table: " + made.error);
  return std::move(made.value);
}

// --- Memory-bound kernels ----------------------------------------------------------------------
// linkedin/Liger-Kernel, benchmark/data/all_benchmark_data.csv at ead96b61, rows layer_norm /
// forward / speed, Liger kernel, M = 4096 rows of N = 1024 ... 16384 fp32 elements: each run reads
// and writes the M x N tensor, 2 * 4096 * N * 4 bytes, in the printed milliseconds. Achieved
// fraction = bytes / time / datasheet bandwidth. Below the smallest size the ramp to 0.3 at 1 MB is
// assumed (launch and tail, as in the datasheet-only table).
EfficiencyTable layer_norm_table(const double (&milliseconds)[5], double bandwidth) {
  std::vector<EfficiencyPoint> points{{1e6, 0.3}};  // assumed
  for (int i = 0; i < 5; ++i) {
    const double bytes = 2.0 * 4096 * (1024 << i) * 4;
    points.push_back({bytes, bytes / (milliseconds[i] * 1e-3) / bandwidth});
  }
  return table(std::move(points));
}
constexpr double kH100LayerNormMs[5] = {0.0188, 0.0292, 0.0510, 0.0948, 0.1848};  // 2025-07-17 rows
constexpr double kA100LayerNormMs[5] = {0.0303, 0.0499, 0.0882, 0.1652, 0.3223};  // 2024-09-03 rows

// --- Fused attention --------------------------------------------------------------------------
// Sequence lengths of the FlashAttention benchmarks: 16k tokens per run (batch 16k / seqlen), hidden
// 2048, head dimension 128 (Dao-AILab/flash-attention, benchmarks/benchmark_flash_attention.py).
constexpr double kSeq[6] = {512, 1024, 2048, 4096, 8192, 16384};

EfficiencyTable attention_table(const double (&tflops)[6], double peak) {
  std::vector<EfficiencyPoint> points;
  for (int i = 0; i < 6; ++i) points.push_back({kSeq[i], tflops[i] * 1e12 / peak});
  return table(std::move(points));
}

// A100: FlashAttention-2, causal, head dim 128, forward + backward TFLOP/s as labelled on the bars of
// Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png (commit 4f285b35), the figure
// of the FlashAttention-2 paper (arXiv 2307.08691). The combined figure gives one rate for both
// passes (FLOPs counted 3.5x the forward's), used for each.
constexpr double kA100FlashCausal[6] = {99, 133, 155, 173, 182, 189};

// H100 (and H200, the same GH100 SMs and clocks): cuDNN's fused attention, the kernel Transformer
// Engine's FusedAttention runs, causal, head dim 128, bf16, forward TFLOP/s as labelled in the
// FlashAttention-3 paper's forward figure (arXiv 2407.08608v1; Dao-AILab/flash-attention
// assets/flash3_fp16_fwd.png, commit 7ef24848), on a 700 W H100 SXM5.
constexpr double kH100CudnnCausalForward[6] = {315, 410, 484, 518, 529, 539};
// The same paper's backward figure prints cuDNN's non-causal backward only (head dim 128:
// 305, 408, 465, 499, 518, 516); the causal backward is that scaled by the forward's
// causal / non-causal ratio at the same length (non-causal forward: 497, 574, 617, 609, 600, 595).
// Derived, and so marked in the sources.
constexpr double kH100CudnnNonCausalBackward[6] = {305, 408, 465, 499, 518, 516};
constexpr double kH100CudnnNonCausalForward[6] = {497, 574, 617, 609, 600, 595};

// --- Links --------------------------------------------------------------------------------------
// The ramp below 64 MiB is assumed (as in the datasheet-only table); its top is NCCL's published
// large-message figure over the datasheet link rate:
// - NVLink 4 (H100, H200): ring all-gather / reduce-scatter bus bandwidth "370GB/s" of the "450GB/s
//   line rate" (S. Jeaugey, NVIDIA/nccl-tests issue 212, 2024-05-06);
// - NVLink 3 (A100): 8-GPU all-reduce bus bandwidth 234.89 GB/s at 16 GiB of 300 GB/s
//   (stas00/ml-engineering network/README.md, "Real network throughput");
// - NDR 400 Gb/s per GPU (H100, H200): "46-48GB/s per NIC" of 50 (NVIDIA/nccl-tests issue 290);
// - HDR 200 Gb/s per GPU (A100): "24GB/s inter-node" per NIC of 25 (NVIDIA/nccl-tests issue 160).
EfficiencyTable link_table(double top) {
  return table({{4096, 0.10}, {65536, 0.30}, {1048576, 0.60}, {16777216, 0.85 * top / 0.9}, {67108864, top}});
}

}  // namespace

GemmModel published_gemm_model(PublishedGpu gpu) {
  GemmModel model;
  // CTA tile 128 x 256: the largest tile of the Hopper (WGMMA) and Ampere cuBLAS/CUTLASS kernels for
  // large bf16 GEMMs; split-K below 2048 of K per split and 3 us of fixed cost per GEMM are the
  // model's constants (gemm_model.hpp), the same for every GPU.
  model.tile_rows = 128;
  model.tile_cols = 256;
  model.min_split_k = 2048;
  model.kernel_overhead = 3e-6;
  // Each peak fraction reproduces its GPU's best published cuBLAS point, the "Maximum Achievable
  // Matmul FLOPS" table of stas00/ml-engineering compute/accelerator/README.md (at 7bc7c305):
  // A100 SXM bf16 271.2 TFLOP/s at 1024x10240x5120; H100 SXM bf16 794.5 at 2048x2048x13312 and FP8
  // 1402.6 at 1024x9216x14336; H200 SXM FP8 1453.4 at 1280x4096x12032, bf16 "the same" as H100.
  // tests/gemm_model_test.cpp solves them again from those points.
  switch (gpu) {
    case PublishedGpu::kA100:
      model.sm_count = 108;  // A100 whitepaper: 108 SMs
      model.peak_fraction = {{"bf16", 0.8763}};
      break;
    case PublishedGpu::kH100:
      model.sm_count = 132;  // H100 SXM5: 132 SMs (Hopper whitepaper)
      model.peak_fraction = {{"bf16", 0.8478}, {"fp8", 0.7214}};
      break;
    case PublishedGpu::kH200:
      model.sm_count = 132;
      model.peak_fraction = {{"bf16", 0.8478}, {"fp8", 0.7611}};
      break;
    case PublishedGpu::kB200:
      // B200: 148 SMs (chipsandcheese, "Nvidia's B200: Keeping the CUDA Juggernaut Rolling"; the device
      // query in pytorch/ao PR 4002). The same table: bf16 1745.0 TFLOP/s at 1792x16128x3072, FP8
      // 3432.5 at 15360x4096x3072. Blackwell's cuBLAS runs 2-SM 256-wide tiles; the model keeps its
      // one tile shape, and the fraction absorbs the difference at the solved point.
      model.sm_count = 148;
      model.peak_fraction = {{"bf16", 0.7998}, {"fp8", 0.7844}};
      break;
    case PublishedGpu::kMI300X:
      // MI300X: 304 compute units (8 XCDs of 38; chipsandcheese, "Testing AMD's Giant MI300X"), taken as
      // the model's SMs. The same table: bf16 668.4 TFLOP/s at 10240x15360x8192 (ROCm 6.3, hipBLASLt
      // with PyTorch's TunableOp); it prints no FP8 point, so FP8 GEMMs fall back to the assumed
      // FLOP-keyed table.
      model.sm_count = 304;
      model.peak_fraction = {{"bf16", 0.5116}};
      break;
  }
  return model;
}

EfficiencyTable published_memory_table(PublishedGpu gpu) {
  // H200, B200 and MI300X: no published LayerNorm-like figure was found (Liger-Kernel's B200 rows are
  // a GroupNorm that reaches only 0.61 of 8 TB/s at 1 GiB, read as kernel-limited); H100's fractions
  // of each GPU's own bandwidth are assumed to carry over.
  return gpu == PublishedGpu::kA100 ? layer_norm_table(kA100LayerNormMs, kA100Hbm)
                                    : layer_norm_table(kH100LayerNormMs, kH100Hbm);
}

EfficiencyTable published_attention_forward(PublishedGpu gpu) {
  // B200 and MI300X: no per-length fused-attention figure was found (FlashAttention-4's paper gives
  // only its peak, 1613 TFLOP/s on B200): no table, and attention is timed from the GEMM model.
  if (gpu == PublishedGpu::kB200 || gpu == PublishedGpu::kMI300X) return {};
  return gpu == PublishedGpu::kA100 ? attention_table(kA100FlashCausal, kA100Bf16Peak)
                                    : attention_table(kH100CudnnCausalForward, kHopperBf16Peak);
}

EfficiencyTable published_attention_backward(PublishedGpu gpu) {
  if (gpu == PublishedGpu::kB200 || gpu == PublishedGpu::kMI300X) return {};
  if (gpu == PublishedGpu::kA100) return attention_table(kA100FlashCausal, kA100Bf16Peak);
  double causal[6];
  for (int i = 0; i < 6; ++i) {
    causal[i] = kH100CudnnNonCausalBackward[i] * kH100CudnnCausalForward[i] / kH100CudnnNonCausalForward[i];
  }
  return attention_table(causal, kHopperBf16Peak);
}

EfficiencyTable published_intra_link_table(PublishedGpu gpu) {
  switch (gpu) {
    case PublishedGpu::kA100: return link_table(234.89 / 300);
    // NVLink 5: 8-GPU ring all-reduce 682.2 GB/s bus bandwidth at 8 GiB of 900 (ml-engineering
    // network/README.md, SHARP section, NVLS off, NCCL 2.27.7 on p6-b200).
    case PublishedGpu::kB200: return link_table(682.2 / 900);
    // Infinity Fabric: 8-GPU RCCL all-reduce 312.912 GB/s bus bandwidth at 4 GiB of the 448 GB/s the
    // seven links give together (ml-engineering network/README.md, peer-to-peer section).
    case PublishedGpu::kMI300X: return link_table(312.912 / 448);
    default: return link_table(370.0 / 450);
  }
}

EfficiencyTable published_inter_link_table(PublishedGpu gpu) {
  // B200 and MI300X: no InfiniBand figure was found; the NDR NIC's 47 of 50 GB/s (H100, nccl-tests
  // issue 290) is assumed to carry over to the same 400 Gb/s NIC.
  return link_table(gpu == PublishedGpu::kA100 ? 24.0 / 25 : 47.0 / 50);
}

double published_sustained_clock(PublishedGpu gpu) {
  // A100: NVIDIA computes an A100's HPL Rpeak at "the clock that can be sustained at a GPU's power
  // limit while running HPL", 1305 MHz, against the 1410 MHz boost clock the microbenchmarks above
  // run at (G. Lockwood, glennklockwood.com/garden/peak-FLOPS, "Rpeak"). Hopper: no sustained clock
  // under a training load is published for the SXM parts (an H200 CI note, tile-ai/TileOPs issue
  // 1587, says 1830 MHz cannot be held at 700 W and targets 1500, which is a setting, not a
  // measurement); 1, and docs/validation.md names it among the terms left.
  return gpu == PublishedGpu::kA100 ? 1305.0 / 1410.0 : 1.0;
}

std::vector<std::string> published_sources(PublishedGpu gpu) {
  const std::string mamf =
      "GEMM: stas00/ml-engineering compute/accelerator/README.md at 7bc7c305, Maximum Achievable Matmul FLOPS "
      "table (torch.mm / torch._scaled_mm over cuBLAS/cuBLASLt): ";
  const std::string links =
      "links: NCCL large-message bus bandwidth, NVIDIA/nccl-tests issues 212 (NVLink 4 ring: 370 of 450 GB/s), "
      "160 (HDR: 24 GB/s per NIC) and 290 (NDR: 46-48 GB/s per NIC); stas00/ml-engineering network/README.md "
      "(8x A100 all-reduce: 234.89 GB/s at 16 GiB)";
  if (gpu == PublishedGpu::kA100) {
    return {mamf + "A100 SXM bf16 271.2 TFLOP/s at 1024x10240x5120",
            "attention: Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png at 4f285b35 "
            "(FlashAttention-2, arXiv 2307.08691): causal, head dim 128, forward+backward TFLOP/s at 512-16k",
            "memory: linkedin/Liger-Kernel benchmark/data/all_benchmark_data.csv at ead96b61, layer_norm forward on "
            "A100-SXM4-80GB, M=4096, N=1024-16384, fp32",
            links,
            "sustained clock: NVIDIA's A100 HPL Rpeak at the 1305 MHz sustainable at the power limit, of 1410 MHz "
            "boost (glennklockwood.com/garden/peak-FLOPS, Rpeak)"};
  }
  if (gpu == PublishedGpu::kB200) {
    return {mamf + "NVIDIA B200 SXM bf16 1745.0 TFLOP/s at 1792x16128x3072, FP8 3432.5 at 15360x4096x3072",
            "memory: H100's fractions from linkedin/Liger-Kernel benchmark/data/all_benchmark_data.csv at ead96b61 "
            "(no B200 LayerNorm figure published; assumed to carry over)",
            "links: stas00/ml-engineering network/README.md, SHARP section (8x B200, NCCL 2.27.7: ring all-reduce "
            "682.2 GB/s, NVLS 838.0 GB/s at 8 GiB, NVLS from 6 GPUs); inter-node: NDR's 46-48 GB/s per NIC "
            "(NVIDIA/nccl-tests issue 290, H100) assumed for the same NIC",
            "attention: none published per sequence length (timed from the GEMM model)"};
  }
  if (gpu == PublishedGpu::kMI300X) {
    return {mamf + "AMD MI300X bf16 668.4 TFLOP/s at 10240x15360x8192 (ROCm 6.3, TunableOp); no FP8 point",
            "memory: H100's fractions from linkedin/Liger-Kernel benchmark/data/all_benchmark_data.csv at ead96b61 "
            "(no MI300X figure published; assumed to carry over)",
            "links: stas00/ml-engineering network/README.md, peer-to-peer section (8x MI300X RCCL all-reduce "
            "312.912 GB/s bus bandwidth at 4 GiB of 448 GB/s); inter-node assumed as NDR (46-48 of 50 GB/s, "
            "NVIDIA/nccl-tests issue 290)",
            "attention: none published per sequence length (timed from the GEMM model)"};
  }
  std::vector<std::string> sources = {
      gpu == PublishedGpu::kH100
          ? mamf + "H100 SXM bf16 794.5 TFLOP/s at 2048x2048x13312, FP8 1402.6 at 1024x9216x14336"
          : mamf + "H200 SXM FP8 1453.4 TFLOP/s at 1280x4096x12032; bf16 'the same' as H100 SXM (794.5 at "
                   "2048x2048x13312)",
      "attention: FlashAttention-3 paper (arXiv 2407.08608v1) forward figure, Dao-AILab/flash-attention "
      "assets/flash3_fp16_fwd.png at 7ef24848: cuDNN causal and non-causal, head dim 128, TFLOP/s at 512-16k",
      "attention backward: the same paper's backward figure, cuDNN non-causal head dim 128 (a transcription, not "
      "checked against the PDF), scaled to causal by the forward's causal/non-causal ratio (derived)",
      gpu == PublishedGpu::kH100
          ? "memory: linkedin/Liger-Kernel benchmark/data/all_benchmark_data.csv at ead96b61, layer_norm forward on "
            "H100 80GB HBM3, M=4096, N=1024-16384, fp32"
          : "memory: H100's fractions from linkedin/Liger-Kernel benchmark/data/all_benchmark_data.csv at ead96b61 "
            "(no H200 figure published; assumed to carry over)",
      links + "; NVLink SHARP all-reduce: " +
          (gpu == PublishedGpu::kH100
               ? "NVIDIA/nccl-tests issues 212 (~480 GB/s bus bandwidth) and 290 (476), 8x H100"
               : "stas00/ml-engineering network/README.md, SHARP section (8x H200, NCCL 2.27.7: 480.0 GB/s at "
                 "16 GiB; at 8 GiB Ring at 4 GPUs, NVLS from 5)")};
  return sources;
}

NvlsFigures published_nvls(PublishedGpu gpu) {
  // A100's NVSwitch has no in-switch reduction. Hopper's third-generation NVSwitch does: NCCL's NVLS
  // all-reduce reaches about 480 GB/s of bus bandwidth on eight H100s (NVIDIA/nccl-tests issues 212,
  // 290) and on eight H200s (480.0 at 16 GiB, ml-engineering network/README.md, SHARP section), where
  // the ring reaches 370. The same section's sweep by GPU count, at 8 GiB on an 8x H200 node, has
  // NCCL choose the ring at 4 GPUs and NVLS from 5 (363.3 vs 414.2 GB/s); we take that threshold for
  // H100 as well, the same switch generation.
  if (gpu == PublishedGpu::kA100 || gpu == PublishedGpu::kMI300X) return {};  // MI300X: no switch
  // B200 (fourth-generation NVSwitch): 838.0 GB/s at 8 GiB on eight B200s, NVLS chosen from 6 GPUs
  // (ml-engineering network/README.md, SHARP section, p6-b200 with AWS's tuner plugin).
  if (gpu == PublishedGpu::kB200) return {.all_reduce_bus_bandwidth = 838e9, .min_ranks = 6};
  return {.all_reduce_bus_bandwidth = 480e9, .min_ranks = 5};
}

}  // namespace ppsim
