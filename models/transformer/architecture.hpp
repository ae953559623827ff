// SPDX-License-Identifier: Apache-2.0
#pragma once
// The shape of a decoder-only transformer, as model cards and papers state it, and the parameter
// count that follows from it. Pure data and pure functions: reading configs/models/*.json belongs to
// the config layer, so models/ stays free of JSON (tests keep the two in step, see
// tests/transformer_test.cpp).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ppsim {

struct Architecture {
  enum Norm { kLayerNorm, kRmsNorm };

  std::string name;
  int layers = 0;
  std::int64_t hidden = 0;      // h, the residual width
  int heads = 0;                // a, query heads; head size is hidden / heads
  int kv_heads = 0;             // grouped-query attention (Ainslie et al. 2023); == heads for MHA
  std::int64_t ffn_hidden = 0;  // inner MLP width (4h for GPT, e.g. 11008 for Llama-2 7B)
  bool gated_mlp = false;       // SwiGLU-style: gate and up projections, then down (3 matrices)
  std::int64_t vocab = 0;
  bool tied_embeddings = false;  // LM head shares the input embedding matrix
  Norm norm = kLayerNorm;        // LayerNorm has a scale and a bias, RMSNorm only a scale
  // Two fields beyond the brief's list, because GPT-style and Llama-style models differ there and the
  // parameter count needs them: GPT-2/3 and Megatron GPT have biases on every linear layer and
  // learned absolute position embeddings; Llama has neither (RoPE has no parameters).
  bool linear_biases = false;
  // Biases on the Q, K and V projections only (Qwen2 and Qwen2.5; Megatron-LM's --add-qkv-bias), not
  // on the output projection or the MLP. Implied by linear_biases.
  bool qkv_bias = false;
  std::int64_t learned_positions = 0;  // rows of the learned position table; 0 for RoPE
  // Hidden and attention dropout probability the model trains with: 0 for Llama (Meta's training
  // recipe), 0.1 for the GPT-3-era models (Megatron-LM's default --hidden-dropout and
  // --attention-dropout). It adds the mask kernels and, above 0, the masks in the stash.
  double dropout = 0;
  // The width of one attention head where the model card gives it apart from hidden / heads (Qwen3:
  // 128 with hidden 2048 and 32 heads, so queries are 4096 wide); 0: hidden / heads.
  std::int64_t head_dim = 0;
  // RMSNorm over each head's queries and keys before the rotary embedding (Qwen3's q_norm and
  // k_norm): one head_dim-wide scale each, shared by the heads.
  bool qk_norm = false;

  // Mixture-of-experts MLPs (Shazeer et al. 2017; Fedus et al., Switch Transformers, 2022): a router
  // (an h x experts linear layer, no bias) sends each token to top_k of the layer's routed experts,
  // each an MLP of expert_ffn_hidden (gated as the dense MLP is), and through every shared expert.
  // No experts: a dense model.
  struct Moe {
    int experts = 0;
    int top_k = 0;
    std::int64_t expert_ffn_hidden = 0;
    int shared_experts = 0;  // always-on experts (DeepSeek-V3: 1)
    std::int64_t shared_expert_ffn_hidden = 0;
    // Which layers are MoE: layer i (from 0) when i >= dense_layers and i % layer_freq == 0, the rest
    // keep the dense MLP of ffn_hidden. dense_layers is Hugging Face's first_k_dense_replace
    // (DeepSeek-V3: 3); layer_freq is Megatron-LM's integer --moe-layer-freq (1: every layer).
    int dense_layers = 0;
    int layer_freq = 1;

    bool operator==(const Moe&) const = default;
  } moe;

  // Multi-head latent attention (DeepSeek-V2 and V3; DeepSeek-V3 Technical Report, section 2.1.1):
  // queries through a q_lora_rank-wide bottleneck (none when 0: one h x heads (nope + rope)
  // projection), keys and values from one kv_lora_rank-wide latent plus a rope-wide key shared by
  // the heads; each head's query and key are nope + rope wide, its value v_head_dim. RMSNorm on both
  // latents, no biases. No MLA: kv_lora_rank 0.
  struct Mla {
    std::int64_t q_lora_rank = 0;
    std::int64_t kv_lora_rank = 0;
    std::int64_t qk_nope_head_dim = 0;
    std::int64_t qk_rope_head_dim = 0;
    std::int64_t v_head_dim = 0;

    bool operator==(const Mla&) const = default;
  } mla;

  // Multi-token prediction modules after the last layer (DeepSeek-V3 report, section 2.2; Megatron's
  // --mtp-num-layers): each projects [RMSNorm(h); RMSNorm(embedding of the next token)] from 2h to h
  // and runs one transformer layer of the last layer's kind, then the shared LM head and a loss. They
  // share the embedding and the head, and sit on the last pipeline stage. Not in parameter_count (the
  // model cards count them apart: DeepSeek-V3's 671B excludes its 14B).
  int mtp_layers = 0;

  // Sliding-window attention (GPT-OSS, Mistral): each query attends to the last `sliding_window`
  // tokens; every window_skip_freq-th layer (Megatron's window_attn_skip_freq: layer i with
  // (i + 1) % freq == 0) keeps full attention, 0 none. No window: 0.
  std::int64_t sliding_window = 0;
  int window_skip_freq = 0;
  // A learned per-head logit in the softmax's denominator (GPT-OSS's attention sinks): one parameter
  // per head per layer.
  bool attention_sinks = false;

  std::string source;                  // where the numbers come from (paper table, model card)

  bool operator==(const Architecture&) const = default;
};

// Whether the model has mixture-of-experts layers, and whether layer `index` (from 0) is one.
bool has_experts(const Architecture& arch);
bool is_moe_layer(const Architecture& arch, int index);
int moe_layer_count(const Architecture& arch);

// Width of one attention head: head_dim when the model sets it, else hidden / heads (under MLA, a
// query's and key's: nope + rope).
std::int64_t head_size(const Architecture& arch);

bool has_mla(const Architecture& arch);
// Width of all heads' values, the attention output projection's input: heads x v_head_dim under MLA,
// heads x head size otherwise.
std::int64_t value_width(const Architecture& arch);
// Whether layer `index` (from 0) attends through a sliding window.
bool is_windowed_layer(const Architecture& arch, int index);
// The `count` layers from `first` by kind: dense or MoE, with full or windowed attention.
struct LayerKinds {
  int dense = 0, moe = 0, windowed_dense = 0, windowed_moe = 0;
  int windowed() const { return windowed_dense + windowed_moe; }
};
LayerKinds layer_kinds(const Architecture& arch, int first, int count);
// The weights of the attention's linear layers: Q, K, V and O, or MLA's down and up projections and O.
std::int64_t attention_weight_count(const Architecture& arch);
// Parameters of the multi-token prediction modules: each one's 2h x h projection, its two RMSNorms
// and one layer of the last layer's kind (the embedding and the head are shared, not counted).
std::int64_t mtp_parameter_count(const Architecture& arch);
// Of those, the routed experts' (split by expert parallelism as the main model's are).
std::int64_t mtp_expert_parameter_count(const Architecture& arch);

// Whether the queries are as wide as the residual stream (heads x head size == hidden); not Qwen3's.
// ppsim-calibrate's plan of a layer's GEMMs assumes it.
bool attention_matches_hidden(const Architecture& arch);

// Parameters of one transformer layer with a dense MLP: attention (Q and O are h x q with q = heads *
// head_size, h for most models; K and V are h x (kv_heads * head_size), which is the GQA saving),
// MLP (3 h f gated, 2 h f plain), two norms, the QK norms, and biases when the model has them.
std::int64_t layer_parameter_count(const Architecture& arch);

// Parameters of one MoE layer: the same attention and norms, the router (h x experts), every routed
// and shared expert, with biases when the model has them. With `active`, only what one token goes
// through: top_k routed experts, the shared ones and the router.
std::int64_t moe_layer_parameter_count(const Architecture& arch, bool active = false);

// Of those, the weights of the layer's linear layers (Q, K, V, O and the MLP's two or three
// matrices): no biases, no norms.
std::int64_t layer_linear_weight_count(const Architecture& arch);
// On one of `tensor_parallel` ranks of an MoE layer under expert parallelism over `expert_parallel`
// ranks: the attention's and the shared experts' weights split t ways and that rank's experts
// (experts / e of them), each split over `expert_tensor_parallel` ranks; the router is not among them
// (Megatron runs it outside Transformer Engine, in 16 bits). A dense layer's weights all split t ways.
double layer_linear_weight_count(const Architecture& arch, bool moe, int tensor_parallel, int expert_parallel,
                                 int expert_tensor_parallel = 1);

// The inner width of an MoE layer's shared experts taken together (shared_experts x their width):
// Megatron runs them as one MLP of that width (--moe-shared-expert-intermediate-size is the total,
// megatron/core/transformer/moe/shared_experts.py). 0 without shared experts.
std::int64_t shared_expert_width(const Architecture& arch);

// The routed experts' parameters in one MoE layer (every expert's MLP, with biases when the model
// has them): what expert parallelism splits and the expert data-parallel group reduces.
std::int64_t expert_parameter_count(const Architecture& arch);

// The MoE layers among the `count` layers from `first` (a pipeline stage's run of layers).
int moe_layers_in(const Architecture& arch, int first, int count);

// Whole model: token embedding, learned positions, all layers, the final norm, and a separate LM
// head (vocab x h) unless it is tied to the embedding.
std::int64_t parameter_count(const Architecture& arch);

// The parameters one token goes through, as MoE model cards count "activated" parameters: the
// whole model but only top_k routed experts in each MoE layer (embedding and LM head included).
// Equal to parameter_count for a dense model.
std::int64_t active_parameter_count(const Architecture& arch);

// Built-in presets; configs/models/<name>.json holds the same data (a test checks they agree).
std::span<const Architecture> architecture_presets();

// The preset with this name, or nullptr.
const Architecture* find_architecture_preset(std::string_view name);

}  // namespace ppsim
