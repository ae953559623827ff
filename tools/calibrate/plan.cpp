// SPDX-License-Identifier: Apache-2.0
#include "tools/calibrate/plan.hpp"

#include <algorithm>
#include <cmath>

namespace ppsim::calibrate {
namespace {

// F, I and W of a linear layer with `in` x `out` weights over `tokens` tokens (see plan.hpp).
void add_linear(std::vector<PlannedGemm>& out, const std::string& label, std::int64_t tokens, std::int64_t in,
                std::int64_t width_out) {
  out.push_back({label, Pass::kForward, GemmShape{.m = tokens, .n = width_out, .k = in}, false});
  out.push_back({label, Pass::kInputGrad, GemmShape{.m = tokens, .n = in, .k = width_out, .transpose_b = true}, false});
  out.push_back(
      {label, Pass::kWeightGrad, GemmShape{.m = in, .n = width_out, .k = tokens, .transpose_a = true}, false});
}

std::vector<std::int64_t> geometric(std::int64_t first, std::int64_t factor, int count) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t size = first; static_cast<int>(sizes.size()) < count; size *= factor) sizes.push_back(size);
  return sizes;
}

std::vector<double> as_doubles(const std::vector<std::int64_t>& values) { return {values.begin(), values.end()}; }

}  // namespace

std::string_view pass_name(Pass pass) {
  switch (pass) {
    case Pass::kForward:
      return "F";
    case Pass::kInputGrad:
      return "I";
    case Pass::kWeightGrad:
      return "W";
  }
  return "?";
}

std::string check_layout(const Architecture& arch, const LayerLayout& layout) {
  if (layout.seq < 1) return "the sequence length must be >= 1";
  if (layout.micro_batch < 1) return "the micro-batch size must be >= 1";
  const int t = layout.tensor_parallel;
  if (t < 1) return "tensor parallelism must be >= 1";
  const std::string who = " of " + arch.name;
  // The plan measures a dense layer's GEMM shapes; an MoE layer's grouped expert GEMMs and router are
  // not planned yet, and a profile measured at the dense shapes would time them at the wrong sizes.
  if (has_experts(arch)) return "the mixture-of-experts layers" + who + " are not planned yet (dense models only)";
  if (!attention_matches_hidden(arch)) return "heads wider than hidden / heads" + who + " are not planned yet";
  if (arch.heads % t != 0) {
    return "tensor parallelism " + std::to_string(t) + " does not divide the " + std::to_string(arch.heads) +
           " attention heads" + who;
  }
  if (arch.kv_heads % t != 0) {
    return "tensor parallelism " + std::to_string(t) + " does not divide the " + std::to_string(arch.kv_heads) +
           " key/value heads" + who;
  }
  if (arch.ffn_hidden % t != 0) {
    return "tensor parallelism " + std::to_string(t) + " does not divide the MLP width " +
           std::to_string(arch.ffn_hidden) + who;
  }
  return {};
}

std::vector<PlannedGemm> plan_attention_gemms(std::int64_t heads, std::int64_t seq, std::int64_t head_dim) {
  const std::int64_t s = seq, d = head_dim;
  auto product = [&](const char* label, Pass pass, std::int64_t m, std::int64_t n, std::int64_t k, bool ta, bool tb) {
    return PlannedGemm{label, pass,
                       GemmShape{.m = m, .n = n, .k = k, .transpose_a = ta, .transpose_b = tb, .batch = heads}, true};
  };
  return {
      product("scores", Pass::kForward, s, s, d, false, true),        // S = Q . K^T
      product("context", Pass::kForward, s, d, s, false, false),      // O = P . V
      product("grad_probs", Pass::kInputGrad, s, s, d, false, true),  // dP = dO . V^T
      product("grad_v", Pass::kInputGrad, s, d, s, true, false),      // dV = P^T . dO
      product("grad_q", Pass::kInputGrad, s, d, s, false, false),     // dQ = dS . K
      product("grad_k", Pass::kInputGrad, s, d, s, true, false),      // dK = dS^T . Q
  };
}

std::vector<PlannedGemm> plan_layer_gemms(const Architecture& arch, const LayerLayout& layout) {
  const std::int64_t t = layout.tensor_parallel;
  const std::int64_t tokens = layout.seq * layout.micro_batch;
  const std::int64_t h = arch.hidden;
  const std::int64_t d = head_size(arch);
  const std::int64_t q_width = std::int64_t{arch.heads} / t * d;
  const std::int64_t kv_width = std::int64_t{arch.kv_heads} / t * d;
  const std::int64_t f = arch.ffn_hidden / t;

  std::vector<PlannedGemm> gemms;
  add_linear(gemms, "qkv", tokens, h, q_width + 2 * kv_width);  // column parallel
  add_linear(gemms, "attention_out", tokens, q_width, h);       // row parallel
  add_linear(gemms, "mlp_up_gate", tokens, h, (arch.gated_mlp ? 2 : 1) * f);
  add_linear(gemms, "mlp_down", tokens, f, h);
  for (PlannedGemm& g : plan_attention_gemms(layout.micro_batch * arch.heads / t, layout.seq, d)) {
    gemms.push_back(std::move(g));
  }
  return gemms;
}

std::vector<PlannedGemm> plan_lm_head_gemms(const Architecture& arch, const LayerLayout& layout) {
  const std::int64_t t = layout.tensor_parallel;
  std::vector<PlannedGemm> gemms;
  add_linear(gemms, "lm_head", layout.seq * layout.micro_batch, arch.hidden, (arch.vocab + t - 1) / t);
  return gemms;
}

std::vector<PlannedGemm> plan_grid_gemms(const std::vector<std::int64_t>& dims) {
  std::vector<PlannedGemm> gemms;
  for (const std::int64_t size : dims) add_linear(gemms, "grid", size, size, size);
  return gemms;
}

PlanScale plan_scale(std::string_view backend, bool quick) {
  PlanScale s;
  if (quick) {
    // Small enough for a test on a loaded two-core machine: a few milliseconds per kernel.
    s.gemm_dims = {32, 64, 128};
    s.memory_bytes = as_doubles(geometric(16 << 10, 4, 4));  // 16 KiB .. 1 MiB
    s.link_bytes = geometric(4 << 10, 4, 5);                 // 4 KiB .. 1 MiB
    s.attention_heads = 2;
    s.attention_head_dim = 32;
    s.attention_max_seq = 128;
    s.default_norm_width = 256;
    return s;
  }
  s.link_bytes = geometric(4 << 10, 4, 10);  // 4 KiB .. 1 GiB
  if (backend == "cuda") {
    // From launch-bound to compute-bound: 256^3 (34 MFLOP) to 16384^3 (8.8 TFLOP) GEMMs.
    s.gemm_dims = {256, 512, 1024, 2048, 4096, 8192, 16384};
    s.memory_bytes = as_doubles(geometric(64 << 10, 4, 8));  // 64 KiB .. 1 GiB
    s.attention_heads = 16;
    s.attention_head_dim = 128;
    s.attention_max_seq = 8192;
    s.default_norm_width = 8192;
  } else {
    // One CPU thread runs ~1000x fewer FLOP/s than a GPU: the grid stops where one GEMM takes a
    // fraction of a second.
    s.gemm_dims = {64, 128, 256, 512, 1024};
    s.memory_bytes = as_doubles(geometric(64 << 10, 4, 7));  // 64 KiB .. 256 MiB
    s.attention_heads = 4;
    s.attention_head_dim = 64;
    s.attention_max_seq = 1024;
    s.default_norm_width = 4096;
  }
  return s;
}

std::vector<PlannedMemory> plan_memory_sweep(const std::vector<double>& target_bytes, std::int64_t norm_width,
                                             std::int64_t softmax_width, int element_bytes) {
  std::vector<PlannedMemory> planned;
  for (const double target : target_bytes) {
    for (const MemoryKernel kernel : kAllMemoryKernels) {
      const double per_element = memory_kernel_bytes(kernel, MemoryShape{1, 1}, element_bytes);
      const std::int64_t elements = std::max<std::int64_t>(1, std::llround(target / per_element));
      std::int64_t width = elements;  // elementwise kernels: one flat row
      if (kernel == MemoryKernel::kRmsNorm || kernel == MemoryKernel::kLayerNorm) width = norm_width;
      if (kernel == MemoryKernel::kSoftmaxForward || kernel == MemoryKernel::kSoftmaxBackward) width = softmax_width;
      width = std::clamp<std::int64_t>(width, 1, elements);
      planned.push_back({kernel, MemoryShape{elements / width, width}, "sweep", target});
    }
  }
  return planned;
}

std::vector<PlannedMemory> plan_layer_memory(const Architecture& arch, const LayerLayout& layout, int element_bytes) {
  const std::int64_t t = layout.tensor_parallel;
  const std::int64_t tokens = layout.seq * layout.micro_batch;
  std::vector<PlannedMemory> planned;
  auto add = [&](MemoryKernel kernel, MemoryShape shape) {
    planned.push_back({kernel, shape, "layer", memory_kernel_bytes(kernel, shape, element_bytes)});
  };
  add(arch.norm == Architecture::kRmsNorm ? MemoryKernel::kRmsNorm : MemoryKernel::kLayerNorm, {tokens, arch.hidden});
  add(arch.gated_mlp ? MemoryKernel::kSwiglu : MemoryKernel::kGelu, {tokens, arch.ffn_hidden / t});
  const MemoryShape scores{layout.micro_batch * arch.heads / t * layout.seq, layout.seq};
  add(MemoryKernel::kSoftmaxForward, scores);
  add(MemoryKernel::kSoftmaxBackward, scores);
  add(MemoryKernel::kAdam, {1, layer_parameter_count(arch) / t});
  return planned;
}

CalibrationPlan make_plan(const std::optional<Architecture>& model, const LayerLayout& layout,
                          const std::vector<Precision>& precisions, const PlanScale& scale, int element_bytes) {
  CalibrationPlan plan;
  plan.precisions = precisions;
  plan.link_bytes = scale.link_bytes;
  if (model) {
    plan.gemms = plan_layer_gemms(*model, layout);
    for (PlannedGemm& g : plan_lm_head_gemms(*model, layout)) plan.gemms.push_back(std::move(g));
    plan.memory = plan_memory_sweep(scale.memory_bytes, model->hidden, layout.seq, element_bytes);
    for (PlannedMemory& m : plan_layer_memory(*model, layout, element_bytes)) plan.memory.push_back(m);
  } else {
    const std::int64_t seq = std::min(layout.seq, scale.attention_max_seq);
    plan.gemms = plan_grid_gemms(scale.gemm_dims);
    for (PlannedGemm& g :
         plan_attention_gemms(scale.attention_heads * layout.micro_batch, seq, scale.attention_head_dim)) {
      plan.gemms.push_back(std::move(g));
    }
    plan.memory = plan_memory_sweep(scale.memory_bytes, scale.default_norm_width, seq, element_bytes);
  }
  return plan;
}

}  // namespace ppsim::calibrate
