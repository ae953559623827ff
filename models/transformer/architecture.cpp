// SPDX-License-Identifier: Apache-2.0
#include "models/transformer/architecture.hpp"

#include <algorithm>
#include <array>
#include <cassert>

namespace ppsim {

std::int64_t head_size(const Architecture& arch) {
  if (has_mla(arch)) return arch.mla.qk_nope_head_dim + arch.mla.qk_rope_head_dim;
  if (arch.head_dim > 0) return arch.head_dim;
  assert(arch.heads > 0 && arch.hidden % arch.heads == 0);
  return arch.hidden / arch.heads;
}

bool attention_matches_hidden(const Architecture& arch) {
  return arch.heads > 0 && std::int64_t{arch.heads} * head_size(arch) == arch.hidden;
}

bool has_experts(const Architecture& arch) { return arch.moe.experts > 0; }

bool has_mla(const Architecture& arch) { return arch.mla.kv_lora_rank > 0; }

std::int64_t value_width(const Architecture& arch) {
  return std::int64_t{arch.heads} * (has_mla(arch) ? arch.mla.v_head_dim : head_size(arch));
}

bool is_windowed_layer(const Architecture& arch, int index) {
  if (arch.sliding_window <= 0) return false;
  return arch.window_skip_freq <= 0 || (index + 1) % arch.window_skip_freq != 0;
}

LayerKinds layer_kinds(const Architecture& arch, int first, int count) {
  LayerKinds kinds;
  for (int i = first; i < first + count; ++i) {
    const bool moe = is_moe_layer(arch, i);
    if (is_windowed_layer(arch, i)) {
      (moe ? kinds.windowed_moe : kinds.windowed_dense) += 1;
    } else {
      (moe ? kinds.moe : kinds.dense) += 1;
    }
  }
  return kinds;
}

std::int64_t attention_weight_count(const Architecture& arch) {
  const std::int64_t h = arch.hidden;
  const std::int64_t q = std::int64_t{arch.heads} * head_size(arch);
  if (has_mla(arch)) {
    // MLA (megatron/core/transformer/multi_latent_attention.py; DeepSeek's inference/model.py, MLA):
    // q down (h x q_lora) and up (q_lora x heads (nope + rope)), or one h x q; kv down to the latent
    // and the shared rope key (h x (kv_lora + rope)), kv up (kv_lora x heads (nope + v)), O.
    const Architecture::Mla& m = arch.mla;
    const std::int64_t queries = m.q_lora_rank > 0 ? m.q_lora_rank * (h + q) : h * q;
    const std::int64_t keys_values =
        h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank * arch.heads * (m.qk_nope_head_dim + m.v_head_dim);
    return queries + keys_values + value_width(arch) * h;
  }
  const std::int64_t kv = std::int64_t{arch.kv_heads} * head_size(arch);  // K and V output width
  return h * q + 2 * h * kv + q * h;
}

bool is_moe_layer(const Architecture& arch, int index) {
  return has_experts(arch) && index >= arch.moe.dense_layers && arch.moe.layer_freq > 0 &&
         index % arch.moe.layer_freq == 0;
}

int moe_layer_count(const Architecture& arch) {
  int count = 0;
  for (int i = 0; i < arch.layers; ++i) count += is_moe_layer(arch, i) ? 1 : 0;
  return count;
}

namespace {

// One MLP of inner width f: gated has gate and up (h x f each) and down (f x h); plain has up and
// down. Biases, when the model has them, on each output.
std::int64_t mlp_parameter_count(const Architecture& arch, std::int64_t f, bool biases) {
  const std::int64_t h = arch.hidden;
  std::int64_t count = (arch.gated_mlp ? 3 : 2) * h * f;
  if (biases) count += (arch.gated_mlp ? 2 * f : f) + h;
  return count;
}

// Attention and the two norms, which dense and MoE layers share.
std::int64_t attention_and_norm_parameter_count(const Architecture& arch) {
  const std::int64_t h = arch.hidden;
  const std::int64_t q = std::int64_t{arch.heads} * head_size(arch);        // query and output width
  const std::int64_t kv = std::int64_t{arch.kv_heads} * head_size(arch);  // K and V output width
  std::int64_t count = attention_weight_count(arch);
  if (arch.linear_biases) {
    count += q + 2 * kv + h;  // Q, K, V, O biases
  } else if (arch.qkv_bias) {
    count += q + 2 * kv;  // Q, K, V biases
  }
  if (arch.qk_norm) count += 2 * head_size(arch);
  if (has_mla(arch)) count += arch.mla.q_lora_rank + arch.mla.kv_lora_rank;  // the latents' RMSNorms
  if (arch.attention_sinks) count += arch.heads;
  // Two norms per layer (before attention and before the MLP): LayerNorm has scale and bias.
  count += 2 * (arch.norm == Architecture::kLayerNorm ? 2 * h : h);
  return count;
}

std::int64_t model_parameter_count(const Architecture& arch, bool active) {
  const std::int64_t h = arch.hidden;
  std::int64_t count = arch.vocab * h + arch.learned_positions * h;
  const int moe_layers = moe_layer_count(arch);
  count += std::int64_t{arch.layers - moe_layers} * layer_parameter_count(arch);
  count += std::int64_t{moe_layers} * moe_layer_parameter_count(arch, active);
  count += arch.norm == Architecture::kLayerNorm ? 2 * h : h;  // final norm
  if (!arch.tied_embeddings) count += arch.vocab * h;          // separate LM head
  return count;
}

}  // namespace

std::int64_t expert_parameter_count(const Architecture& arch) {
  return std::int64_t{arch.moe.experts} * mlp_parameter_count(arch, arch.moe.expert_ffn_hidden, arch.linear_biases);
}

std::int64_t layer_linear_weight_count(const Architecture& arch) {
  return attention_weight_count(arch) + mlp_parameter_count(arch, arch.ffn_hidden, false);
}

std::int64_t shared_expert_width(const Architecture& arch) {
  return std::int64_t{arch.moe.shared_experts} * arch.moe.shared_expert_ffn_hidden;
}

double layer_linear_weight_count(const Architecture& arch, bool moe, int tensor_parallel, int expert_parallel,
                                 int expert_tensor_parallel) {
  const double t = std::max(1, tensor_parallel);
  if (!moe) return static_cast<double>(layer_linear_weight_count(arch)) / t;
  const double attention =
      static_cast<double>(layer_linear_weight_count(arch) - mlp_parameter_count(arch, arch.ffn_hidden, false));
  const double experts = static_cast<double>(arch.moe.experts / std::max(1, expert_parallel)) *
                         static_cast<double>(mlp_parameter_count(arch, arch.moe.expert_ffn_hidden, false)) /
                         std::max(1, expert_tensor_parallel);
  const double shared =
      static_cast<double>(arch.moe.shared_experts) *
      static_cast<double>(mlp_parameter_count(arch, arch.moe.shared_expert_ffn_hidden, false));
  return (attention + shared) / t + experts;
}

int moe_layers_in(const Architecture& arch, int first, int count) {
  int moe = 0;
  for (int i = first; i < first + count; ++i) moe += is_moe_layer(arch, i) ? 1 : 0;
  return moe;
}

std::int64_t layer_parameter_count(const Architecture& arch) {
  return attention_and_norm_parameter_count(arch) + mlp_parameter_count(arch, arch.ffn_hidden, arch.linear_biases);
}

std::int64_t moe_layer_parameter_count(const Architecture& arch, bool active) {
  const Architecture::Moe& moe = arch.moe;
  const std::int64_t routed = active ? moe.top_k : moe.experts;
  const std::int64_t router = (arch.hidden + (arch.linear_biases ? 1 : 0)) * moe.experts;
  return attention_and_norm_parameter_count(arch) + router +
         routed * mlp_parameter_count(arch, moe.expert_ffn_hidden, arch.linear_biases) +
         std::int64_t{moe.shared_experts} * mlp_parameter_count(arch, moe.shared_expert_ffn_hidden, arch.linear_biases);
}

std::int64_t parameter_count(const Architecture& arch) { return model_parameter_count(arch, false); }

std::int64_t mtp_parameter_count(const Architecture& arch) {
  if (arch.mtp_layers <= 0) return 0;
  const std::int64_t h = arch.hidden;
  const bool moe = is_moe_layer(arch, arch.layers - 1);
  const std::int64_t layer = moe ? moe_layer_parameter_count(arch) : layer_parameter_count(arch);
  const std::int64_t norms = 2 * (arch.norm == Architecture::kLayerNorm ? 2 * h : h);
  return std::int64_t{arch.mtp_layers} * (2 * h * h + norms + layer);
}

std::int64_t mtp_expert_parameter_count(const Architecture& arch) {
  if (arch.mtp_layers <= 0 || !is_moe_layer(arch, arch.layers - 1)) return 0;
  return std::int64_t{arch.mtp_layers} * expert_parameter_count(arch);
}

std::int64_t active_parameter_count(const Architecture& arch) { return model_parameter_count(arch, true); }

namespace {

// A GPT-2/3-style model (Radford et al. 2019; Brown et al. 2020): MHA, 4h GeLU MLP, LayerNorm,
// biases, learned positions, LM head tied to the embedding.
Architecture gpt(const char* name, int layers, std::int64_t hidden, int heads, std::int64_t vocab,
                 std::int64_t positions, const char* source) {
  return Architecture{.name = name,
                      .layers = layers,
                      .hidden = hidden,
                      .heads = heads,
                      .kv_heads = heads,
                      .ffn_hidden = 4 * hidden,
                      .gated_mlp = false,
                      .vocab = vocab,
                      .tied_embeddings = true,
                      .norm = Architecture::kLayerNorm,
                      .linear_biases = true,
                      .learned_positions = positions,
                      .dropout = 0.1,
                      .source = source};
}

// A Llama-style model (Touvron et al. 2023; Llama 3 herd paper 2024): SwiGLU, RMSNorm, no biases,
// RoPE (no position parameters), untied LM head.
Architecture llama(const char* name, int layers, std::int64_t hidden, int heads, int kv_heads, std::int64_t ffn,
                   std::int64_t vocab, const char* source) {
  return Architecture{.name = name,
                      .layers = layers,
                      .hidden = hidden,
                      .heads = heads,
                      .kv_heads = kv_heads,
                      .ffn_hidden = ffn,
                      .gated_mlp = true,
                      .vocab = vocab,
                      .tied_embeddings = false,
                      .norm = Architecture::kRmsNorm,
                      .linear_biases = false,
                      .learned_positions = 0,
                      .dropout = 0,
                      .source = source};
}

// Mixtral (Jiang et al., Mixtral of Experts, 2024): a Mistral-style decoder (GQA, SwiGLU, RMSNorm, no
// biases, RoPE, untied head) whose every MLP is 8 experts of the same shape, 2 per token.
Architecture mixtral(const char* name, int layers, std::int64_t hidden, int heads, std::int64_t ffn,
                     std::int64_t vocab, const char* source) {
  Architecture arch = llama(name, layers, hidden, heads, 8, ffn, vocab, source);
  arch.moe = {.experts = 8, .top_k = 2, .expert_ffn_hidden = ffn};
  return arch;
}

// Qwen3's MoE models (Qwen Team, Qwen3 Technical Report, 2025, Table 2; Hugging Face config.json):
// GQA with 4 KV heads, heads of 128 whatever the hidden size, RMSNorm of queries and keys, 128
// SwiGLU experts of which 8 per token, every layer MoE, no shared experts, untied head, vocabulary
// 151936. ffn_hidden is the config's dense intermediate_size, which no layer uses.
Architecture qwen3_moe(const char* name, int layers, std::int64_t hidden, int heads, std::int64_t dense_ffn,
                       std::int64_t expert_ffn, const char* source) {
  Architecture arch = llama(name, layers, hidden, heads, 4, dense_ffn, 151936, source);
  arch.head_dim = 128;
  arch.qk_norm = true;
  arch.moe = {.experts = 128, .top_k = 8, .expert_ffn_hidden = expert_ffn};
  return arch;
}

// Table 3 gives layers, attention heads, hidden size and sequence length (1024) of the four models;
// the paper does not state the vocabulary. 32000 (a SentencePiece vocabulary, as the tokenizer in the
// authors' public scripts) with the matrix counted once is the only choice we found under which all
// four sizes round to the published 1.5B, 6.2B, 14.6B and 28.3B (GPT-2's 50257 gives 6.25B, 14.74B,
// 28.41B); the test pins that rounding.
constexpr const char* kZeroBubbleSource =
    "Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024, Table 3 (layers, attention heads, "
    "hidden size, sequence length 1024); vocabulary 32000 counted once (tied) and learned positions "
    "= sequence length are assumptions that reproduce the published sizes";

// DeepSeek-V3 (DeepSeek-V3 Technical Report, arXiv 2412.19437; Hugging Face deepseek-ai/DeepSeek-V3
// config.json): MLA with 128 heads, 61 layers of which the first 3 dense (FFN 18432), the rest 256
// routed experts of 2048 (8 per token) and one shared expert of 2048, one MTP module. The router's
// score-correction bias is a buffer in Megatron (router.py, expert_bias), not a parameter: uncounted,
// which gives 671,026,404,352 (671B); the MTP module is counted apart.
Architecture deepseek_v3() {
  Architecture arch = llama("deepseek-v3", 61, 7168, 128, 128, 18432, 129280,
                            "DeepSeek-V3 Technical Report (arXiv 2412.19437), 2.1 and 4.2; Hugging Face "
                            "deepseek-ai/DeepSeek-V3 config.json (hidden 7168, 61 layers, first_k_dense_replace 3, "
                            "intermediate 18432, 256 routed experts of 2048, 8 per token, 1 shared, 128 heads, "
                            "q_lora_rank 1536, kv_lora_rank 512, qk_nope/rope 128/64, v 128, vocab 129280, 1 MTP "
                            "module); README (671B main model, 37B activated, 14B MTP)");
  arch.moe = {.experts = 256, .top_k = 8, .expert_ffn_hidden = 2048, .shared_experts = 1,
              .shared_expert_ffn_hidden = 2048, .dense_layers = 3};
  arch.mla = {.q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64,
              .v_head_dim = 128};
  arch.mtp_layers = 1;
  return arch;
}

// GPT-OSS-120B (OpenAI, gpt-oss-120b & gpt-oss-20b Model Card, arXiv 2508.10925, 2.2 and Table 1;
// openai/gpt-oss gpt_oss/torch/model.py): 36 MoE layers of 128 experts of 2880 (4 per token), biases
// on the attention, router and experts, 64 heads of 64 with 8 KV heads, a 128-token window on every
// other layer from the first, one sink logit per head, untied head. Its gated activation is a clamped
// SwiGLU variant, timed as SwiGLU.
Architecture gpt_oss_120b() {
  Architecture arch = llama("gpt-oss-120b", 36, 2880, 64, 8, 2880, 201088,
                            "OpenAI, gpt-oss-120b & gpt-oss-20b Model Card (arXiv 2508.10925), 2.2 and Table 1 "
                            "(116.83B parameters, 5.13B active without the embedding); Hugging Face "
                            "openai/gpt-oss-120b config.json (36 layers, hidden 2880, 64 heads of 64, 8 KV heads, "
                            "128 experts of 2880, 4 per token, sliding window 128 on alternate layers, vocab 201088)");
  arch.head_dim = 64;
  arch.linear_biases = true;
  arch.moe = {.experts = 128, .top_k = 4, .expert_ffn_hidden = 2880};
  arch.sliding_window = 128;
  arch.window_skip_freq = 2;
  arch.attention_sinks = true;
  return arch;
}

// Qwen2.5 (Qwen Team, Qwen2.5 Technical Report, arXiv 2412.15115; Hugging Face config.json): a
// Llama-style decoder with biases on Q, K and V only (transformers' Qwen2Attention), vocabulary
// 152064, untied from 7B up.
Architecture qwen2_5(const char* name, int layers, std::int64_t hidden, int heads, int kv_heads, std::int64_t ffn,
                     const char* source) {
  Architecture arch = llama(name, layers, hidden, heads, kv_heads, ffn, 152064, source);
  arch.qkv_bias = true;
  return arch;
}

// Qwen3's dense models (Qwen3 Technical Report, arXiv 2505.09388; Hugging Face config.json): heads
// of 128 whatever the hidden size, RMSNorm of queries and keys, no biases, vocabulary 151936.
Architecture qwen3_dense(const char* name, int layers, std::int64_t hidden, int heads, std::int64_t ffn,
                         const char* source) {
  Architecture arch = llama(name, layers, hidden, heads, 8, ffn, 151936, source);
  if (hidden != std::int64_t{heads} * 128) arch.head_dim = 128;
  arch.qk_norm = true;
  return arch;
}

// Mistral's dense models (Mistral AI model cards; Hugging Face config.json, model_type mistral):
// GQA with 8 KV heads, SwiGLU, RMSNorm, no biases, untied; heads of 128 (set apart where heads x 128
// is not the hidden size: Nemo, Small 3).
Architecture mistral(const char* name, int layers, std::int64_t hidden, int heads, std::int64_t ffn,
                     std::int64_t vocab, const char* source) {
  Architecture arch = llama(name, layers, hidden, heads, 8, ffn, vocab, source);
  if (hidden != std::int64_t{heads} * 128) arch.head_dim = 128;
  return arch;
}

const std::array<Architecture, 28>& presets() {
  static const std::array<Architecture, 28> table = {
      gpt("gpt3-175b", 96, 12288, 96, 50257, 2048,
          "Brown et al., Language Models are Few-Shot Learners, 2020, Table 2.1 (175.0B; n_layers 96, "
          "d_model 12288, n_heads 96, context 2048); GPT-2 BPE vocabulary 50257"),
      llama("llama2-7b", 32, 4096, 32, 32, 11008, 32000,
            "Touvron et al., Llama 2, 2023, Table 1; Hugging Face meta-llama/Llama-2-7b-hf "
            "config.json (6,738,415,616 parameters)"),
      llama("llama2-70b", 80, 8192, 64, 8, 28672, 32000,
            "Touvron et al., Llama 2, 2023, Table 1 (GQA); Hugging Face meta-llama/Llama-2-70b-hf "
            "config.json (68,976,648,192 parameters)"),
      llama("llama3.1-8b", 32, 4096, 32, 8, 14336, 128256,
            "Llama 3 Herd of Models, 2024, Table 3; Hugging Face meta-llama/Llama-3.1-8B config.json "
            "(8,030,261,248 parameters)"),
      llama("llama3.1-70b", 80, 8192, 64, 8, 28672, 128256,
            "Llama 3 Herd of Models, 2024, Table 3; Hugging Face meta-llama/Llama-3.1-70B "
            "config.json (70,553,706,496 parameters)"),
      llama("llama3.1-405b", 126, 16384, 128, 8, 53248, 128256,
            "Llama 3 Herd of Models, 2024, Table 3; Hugging Face meta-llama/Llama-3.1-405B "
            "config.json (405,853,388,800 parameters)"),
      llama("llama3.3-70b", 80, 8192, 64, 8, 28672, 128256,
            "Hugging Face meta-llama/Llama-3.3-70B-Instruct config.json and model card (the Llama 3.1 70B "
            "architecture: 80 layers, hidden 8192, 64 heads, 8 KV heads, MLP 28672, vocab 128256, untied; "
            "70,553,706,496 parameters)"),
      qwen2_5("qwen2.5-7b", 28, 3584, 28, 4, 18944,
              "Hugging Face Qwen/Qwen2.5-7B config.json (28 layers, hidden 3584, 28 heads, 4 KV heads, "
              "intermediate 18944, vocab 152064, untied) and model card (7.61B; QKV bias); safetensors index "
              "15,231,233,024 bytes in bf16 = 7,615,616,512 parameters"),
      qwen2_5("qwen2.5-14b", 48, 5120, 40, 8, 13824,
              "Hugging Face Qwen/Qwen2.5-14B config.json (48 layers, hidden 5120, 40 heads, 8 KV heads, "
              "intermediate 13824, vocab 152064) and model card (14.7B; QKV bias): 14,770,033,664 parameters"),
      qwen2_5("qwen2.5-32b", 64, 5120, 40, 8, 27648,
              "Hugging Face Qwen/Qwen2.5-32B config.json (64 layers, hidden 5120, 40 heads, 8 KV heads, "
              "intermediate 27648, vocab 152064); safetensors index 65,527,752,704 bytes in bf16 = "
              "32,763,876,352 parameters (the model card rounds to 32.5B)"),
      qwen2_5("qwen2.5-72b", 80, 8192, 64, 8, 29568,
              "Hugging Face Qwen/Qwen2.5-72B config.json (80 layers, hidden 8192, 64 heads, 8 KV heads, "
              "intermediate 29568, vocab 152064) and model card (72.7B; QKV bias): 72,706,203,648 parameters"),
      qwen3_dense("qwen3-8b", 36, 4096, 32, 12288,
                  "Hugging Face Qwen/Qwen3-8B config.json (36 layers, hidden 4096, 32 heads of 128, 8 KV heads, "
                  "intermediate 12288, vocab 151936, q/k norm) and model card (8.2B): 8,190,735,360 parameters"),
      qwen3_dense("qwen3-14b", 40, 5120, 40, 17408,
                  "Hugging Face Qwen/Qwen3-14B config.json (40 layers, hidden 5120, 40 heads of 128, 8 KV heads, "
                  "intermediate 17408, vocab 151936, q/k norm) and model card (14.8B): 14,768,307,200 parameters"),
      qwen3_dense("qwen3-32b", 64, 5120, 64, 25600,
                  "Hugging Face Qwen/Qwen3-32B config.json (64 layers, hidden 5120, 64 heads of 128, 8 KV heads, "
                  "intermediate 25600, vocab 151936, q/k norm) and model card (32.8B): 32,762,123,264 parameters"),
      mistral("mistral-7b-v0.3", 32, 4096, 32, 14336, 32768,
              "Hugging Face mistralai/Mistral-7B-v0.3 config.json (32 layers, hidden 4096, 32 heads, 8 KV heads, "
              "intermediate 14336, vocab 32768, no sliding window); safetensors index 14,496,047,104 bytes in "
              "bf16 = 7,248,023,552 parameters"),
      mistral("mistral-nemo-12b", 40, 5120, 32, 14336, 131072,
              "Hugging Face mistralai/Mistral-Nemo-Base-2407 config.json (40 layers, hidden 5120, 32 heads of "
              "head_dim 128, 8 KV heads, intermediate 14336, vocab 131072); safetensors index 24,495,564,800 "
              "bytes in bf16 = 12,247,782,400 parameters"),
      mistral("mistral-small-24b", 40, 5120, 32, 32768, 131072,
              "Hugging Face mistralai/Mistral-Small-24B-Base-2501 config.json (40 layers, hidden 5120, 32 "
              "heads of head_dim 128, 8 KV heads, intermediate 32768, vocab 131072) and model card (24B); "
              "23,572,403,200 parameters by this count (the index total was not found)"),
      mistral("mistral-large-2407", 88, 12288, 96, 28672, 32768,
              "Hugging Face mistralai/Mistral-Large-Instruct-2407 config.json (88 layers, hidden 12288, 96 "
              "heads, 8 KV heads, intermediate 28672, vocab 32768) and model card (123B); 122,610,069,504 "
              "parameters by this count (the index total was not found)"),
      mixtral("mixtral-8x7b", 32, 4096, 32, 14336, 32000,
              "Jiang et al., Mixtral of Experts, 2024, Table 1 (dim 4096, 32 layers, 32 heads, 8 KV heads, "
              "hidden_dim 14336, vocab 32000, 8 experts, top 2); Hugging Face mistralai/Mixtral-8x7B-v0.1 "
              "config.json (46.7B parameters, 12.9B active)"),
      mixtral("mixtral-8x22b", 56, 6144, 48, 16384, 32000,
              "Hugging Face Mixtral-8x22B-v0.1 config.json (hidden 6144, 56 layers, 48 heads, 8 KV heads, "
              "intermediate 16384, vocab 32000, 8 local experts, 2 per token); Mistral AI, Cheaper, Better, "
              "Faster, Stronger, 2024 (141B parameters, 39B active)"),
      qwen3_moe("qwen3-30b-a3b", 48, 2048, 32, 6144, 768,
                "Hugging Face Qwen/Qwen3-30B-A3B config.json (hidden 2048, 48 layers, 32 heads of 128, 4 KV heads, "
                "128 experts of 768, 8 per token, vocab 151936) and model card (30.5B parameters, 3.3B activated)"),
      qwen3_moe("qwen3-235b-a22b", 94, 4096, 64, 12288, 1536,
                "Hugging Face Qwen/Qwen3-235B-A22B config.json (hidden 4096, 94 layers, 64 heads of 128, 4 KV "
                "heads, 128 experts of 1536, 8 per token, vocab 151936) and model card (235B parameters, 22B "
                "activated)"),
      deepseek_v3(),
      gpt_oss_120b(),
      gpt("zb-gpt-1.5b", 22, 2304, 24, 32000, 1024, kZeroBubbleSource),
      gpt("zb-gpt-6.2b", 30, 4096, 32, 32000, 1024, kZeroBubbleSource),
      gpt("zb-gpt-14.6b", 46, 5120, 40, 32000, 1024, kZeroBubbleSource),
      gpt("zb-gpt-28.3b", 62, 6144, 48, 32000, 1024, kZeroBubbleSource),
  };
  return table;
}

}  // namespace

std::span<const Architecture> architecture_presets() { return presets(); }

const Architecture* find_architecture_preset(std::string_view name) {
  for (const Architecture& arch : presets()) {
    if (arch.name == name) return &arch;
  }
  return nullptr;
}

}  // namespace ppsim
