// SPDX-License-Identifier: Apache-2.0
#include "study/input/config.hpp"

#include <algorithm>
#include <initializer_list>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <unordered_set>

#include "models/json/json_document.hpp"
#include "models/json/json_fields.hpp"
#include "models/transformer/data_parallel.hpp"
#include "models/transformer/static_memory.hpp"
#include "schedules/registry.hpp"
#include "study/common/errors.hpp"
#include "study/input/preset_family.hpp"
#include "study/input/setting_aliases.hpp"
#include "study/input/variability_settings.hpp"

namespace ppsim {
namespace {

constexpr std::array<SettingInfo, 76> kSettings = {{
    {"schedule", "-s,--schedule", "NAME[,NAME...]", "schedule(s) from `ppsim schedules`"},
    {"schedule-file", "--schedule-file", "FILE",
     "the actions of schedule custom: torch's _dump_csv CSV, or JSON (implies -s custom)"},
    {"comm-actions", "--comm-actions", "WHAT",
     "a lowered schedule file's SEND/RECV: honor (default, as torch runs them: a send leaves where it stands, a "
     "receive is waited for by its op), wait-at-recv (a device waits at each RECV) or ignore (the compute only)"},
    {"p", "-p", "N", "pipeline devices (default 4)"},
    {"m", "-m", "N", "micro-batches per step (default 8)"},
    {"v", "-v", "N", "chunks (stages) per device (default 1)"},
    {"microbatch-group-size", "--microbatch-group-size", "N",
     "interleaved-1f1b: micro-batches per chunk before the next chunk's turn, Megatron-LM's "
     "microbatch_group_size_per_vp_stage (default p, or torch's m / max(1, m/p))"},
    {"sequence-splits", "--sequence-splits", "K",
     "seq1f1b: sequence slices per micro-batch, each a unit of the schedule costing 1/K of it, thunlp/Seq1F1B's "
     "--pipe-sp-splits (default 4)"},
    {"forward", "--forward", "T[,T...]", "forward time F, one value or one per stage (default 1)"},
    {"backward", "--backward", "T[,T...]", "full backward time B = I + W (default 2)"},
    {"weight", "--weight", "T[,T...]", "weight-gradient time W, for schedules that split B (default B/2)"},
    {"overlap", "--overlap", "T",
     "time of one overlapped forward-and-backward op (OVERLAP_F_B, DualPipe's F&B); default F + B, no gain"},
    {"costs-per", "--costs-per", "WHAT",
     "device (default): F, B, W and stashes are a device's share, split over its v chunks; chunk: each stage's own"},
    {"latency", "--latency", "T", "per-message link latency (default 0)"},
    {"bandwidth", "--bandwidth", "R", "link bandwidth, bytes per time unit or e.g. '400 Gb/s' (default unlimited)"},
    {"message-bytes", "--message-bytes", "B[,B...]",
     "bytes sent between adjacent stages, one value or one per boundary (default 0)"},
    {"activation-bytes", "--activation-bytes", "B[,B...]",
     "bytes one micro-batch stashes on a stage, one value or one per stage (default 0)"},
    {"static-bytes", "--static-bytes", "B[,B...]",
     "parameters + gradients + optimizer bytes, one value or one per device (default 0)"},
    {"weight-stash-fraction", "--weight-stash-fraction", "X",
     "share of a stash W still needs after I, 0..1 (default 0.5)"},
    {"comm", "--comm", "MODE",
     "overlap (default), blocking or paired (Megatron's batched send and receive) point-to-point messages"},
    {"format", "--format", "FORMAT", "table (default), json or csv"},
    {"timeline", "--timeline", "", "print the ASCII timeline (JSON: add spans and memory samples)"},
    // A transformer study: the model, the hardware and the layout derive every cost above.
    {"model", "--model", "NAME|FILE",
     "transformer architecture, a preset (`ppsim models`) or a JSON file: derives F, B, W, memory and links"},
    {"hardware", "--hardware", "NAME|FILE", "hardware profile, a preset or a JSON file (default h100-sxm5-80gb)"},
    {"seq", "--seq", "N", "sequence length in tokens (default 2048)"},
    {"micro-batch", "-b,--micro-batch", "N",
     "sequences per micro-batch (default 1); without --model, what a sweep's throughput counts: m * b / makespan"},
    {"global-batch", "--global-batch", "N", "sequences per optimizer step; m = global batch / (b * d)"},
    {"t", "-t,--tensor-parallel", "N", "tensor-parallel degree (default 1)"},
    {"d", "-d,--data-parallel", "N", "data-parallel degree (default 1)"},
    {"context-parallel", "--context-parallel", "N",
     "context-parallel degree (Megatron's --context-parallel-size): each sequence split over N ranks, which "
     "exchange keys and values in every layer's attention (default 1)"},
    {"cp-comm", "--cp-comm", "p2p|a2a|allgather|a2a+p2p",
     "how context-parallel ranks exchange keys and values (Megatron's --cp-comm-type): a ring beside the attention "
     "(default), Ulysses all-to-alls, Llama 3's all-gather, or all-to-all inside groups and a ring across them"},
    {"hierarchical-context-parallel-sizes", "--hierarchical-context-parallel-sizes", "A,P",
     "with --cp-comm a2a+p2p: the all-to-all group's size and the ring's, A * P = --context-parallel"},
    {"e", "-e,--expert-parallel", "N",
     "expert-parallel degree of an MoE model, folded out of d: each rank holds experts/e of them (default 1)"},
    {"expert-tensor-parallel", "--expert-tensor-parallel", "N",
     "ranks each expert splits over (Megatron's MoE parallel folding, independent of t); they gather each other's "
     "routed tokens around the experts (default 1, as Megatron-Bridge's MoE recipes set it; Megatron-LM's is t)"},
    {"moe-dispatcher", "--moe-dispatcher", "alltoall|allgather|deepep",
     "how tokens reach their experts with -e: NCCL all-to-all (default, as Megatron-LM's MoE README recommends), "
     "all-gather and reduce-scatter (Megatron-LM's flag default), or DeepEP/HybridEP (once per node across nodes)"},
    {"moe-imbalance", "--moe-imbalance", "X",
     "tokens the busiest expert rank receives over the balanced share, >= 1 (default 1: balanced)"},
    {"sequence-parallel", "--sequence-parallel", "", "shard the norms and residuals over the sequence (t > 1)"},
    {"recompute", "--recompute", "MODE", "activation recomputation: none (default), selective or full"},
    {"recompute-modules", "--recompute-modules", "LIST",
     "what selective recomputation re-runs, Megatron-LM's names: core_attn (its default), layernorm, moe_act, mlp, "
     "moe, shared_experts, mla_up_proj; implies --recompute selective"},
    {"flash-attention", "--flash-attention", "", "fused attention without s x s tensors (default; --no-flash-attention)"},
    {"distributed-optimizer", "--distributed-optimizer", "", "shard master weights and Adam state over d (ZeRO-1)"},
    {"data-parallel-replicate", "--data-parallel-replicate", "R",
     "with --fsdp, HSDP: the d ranks form R replicas of d/R shards (torchtitan's data_parallel_replicate_degree); "
     "shards gather and reduce-scatter among themselves, replicas all-reduce their shards (default 1)"},
    {"fsdp", "--fsdp", "",
     "stages are torch FSDP2 (fully_shard) modules over d: schedules run lowered as torch does, UNSHARD, RESHARD "
     "and REDUCE_GRAD cost their all-gathers, reduce-scatters and unsharded buffers"},
    {"fsdp-unit", "--fsdp-unit", "block|stage",
     "with --fsdp, what one fully_shard wraps: each transformer block, the embedding and the head (block, default, as "
     "torchtitan), gathered unit by unit beside the compute; or the whole stage, gathered by UNSHARD (stage)"},
    {"reshard-after-forward", "--reshard-after-forward", "default|always|never",
     "with --fsdp, torchtitan's reshard_after_forward_policy: free each block after its forward (always), keep it "
     "(never), or free it only without pipeline parallelism (default)"},
    {"fsdp-float8-all-gather", "--fsdp-float8-all-gather", "",
     "with --fsdp and --precision fp8, all-gather the linear weights in FP8 (torchtitan's "
     "float8.enable_fsdp_float8_all_gather)"},
    {"precision", "--precision", "P", "GEMM precision: bf16 (default), fp16 or fp8"},
    {"grad-reduce-dtype", "--grad-reduce-dtype", "fp32|bf16|fp16",
     "gradient buffer and data-parallel reduction dtype (default as Megatron-LM: fp32 with bf16 and fp8, fp16 with "
     "fp16)"},
    {"grad-compression", "--grad-compression", "none|fp8|1bit",
     "what-if: data-parallel gradients compressed on the wire, FP8 (FP8-LM) or 1-bit Adam's signs, with their "
     "kernels and 1-bit Adam's error feedback (default none)"},
    {"fp8-param-gather", "--fp8-param-gather", "",
     "with --precision fp8: the linear weights are FP8 parameters, no bf16 copy, gathered in FP8 (off by "
     "default, as in Megatron-LM; NeMo's FP8 recipes turn it on)"},
    {"layers-per-stage", "--layers-per-stage", "N[,N...]|auto",
     "layers of each of the p*v stages (default: even split); auto: the split the schedule runs fastest that fits, "
     "found by simulation"},
    {"overlap-grad-reduce", "--overlap-grad-reduce", "",
     "reduce gradient buckets as the last backward produces them, beside the compute (default; "
     "--no-overlap-grad-reduce)"},
    {"bucket-size", "--bucket-size", "N",
     "parameters per gradient bucket, Megatron's --ddp-bucket-size (default max(40M, 1M * d))"},
    {"tp-comm-overlap", "--tp-comm-overlap", "",
     "overlap the tensor-parallel collectives with their GEMMs (needs --sequence-parallel; off by default)"},
    {"dropout", "--dropout", "P", "hidden and attention dropout probability, over the model's (0 Llama, 0.1 GPT)"},
    {"overlap-param-gather", "--overlap-param-gather", "",
     "with --distributed-optimizer: gather parameters during the next step's forwards (off by default)"},
    {"overlap-p2p-comm", "--overlap-p2p-comm", "",
     "pipeline sends asynchronous beside the compute (--comm overlap) instead of Megatron's blocking paired "
     "send and receive (--comm paired); default as Megatron: off for 1f1b, on for interleaved-1f1b and the rest"},
    {"workspace", "--workspace", "B", "memory per device beyond parameters, optimizer and activations (default 2 GiB)"},
    {"memory-headroom", "--memory-headroom", "R",
     "share of each GPU's memory to keep free: a layout fits only within (1 - R) of it (default 0)"},
    // Costs measured from a real run (study/input/calibrated_costs.hpp).
    {"calibrated-from", "--calibrated-from", "TRACE[,TRACE...]",
     "costs measured from a real run: torch.profiler traces (one per rank, or their directory), ppsim's --trace, a "
     "Megatron-LM timer log or `ppsim trace --calibrate`'s file; its F, B, W and links, and unless given its p, m "
     "and schedule"},
    // Noise and stragglers over Monte-Carlo steps (variability_settings.cpp).
    {"jitter", "--jitter", "CV|K:CV,...|measured",
     "compute-op time variation: one coefficient of variation, one per op kind (F:0.03,B:0.05,W:0.05; B "
     "covers I unless I is given), or measured (the hardware profile's variability table)"},
    {"jitter-dist", "--jitter-dist", "DIST", "lognormal (default), gamma or normal (truncated at zero)"},
    {"link-jitter", "--link-jitter", "CV", "message time variation (time on the link and latency alike)"},
    {"straggler", "--straggler", "D:FACTOR", "device D computes FACTOR times slower in every step (repeatable)",
     true},
    {"straggler-prob", "--straggler-prob", "P:FACTOR",
     "in each sample, each device is FACTOR times slower with probability P"},
    {"samples", "--samples", "N", "Monte-Carlo steps beside the deterministic one: percentiles, critical path"},
    {"seed", "--seed", "S", "seed of the samples' random streams (default 0)"},
    // Failures and checkpoints of a training run (with --model).
    {"mtbf", "--mtbf", "T", "mean time between failures of one GPU: the reliability figures (with --model)"},
    {"train-time", "--train-time", "T", "wall time of the training run (or --train-steps)"},
    {"train-steps", "--train-steps", "N", "steps of the training run (or --train-time)"},
    {"checkpoint-time", "--checkpoint-time", "T",
     "blocking time of one checkpoint (default: its bytes over --storage-bandwidth)"},
    {"storage-bandwidth", "--storage-bandwidth", "R", "checkpoint write rate per GPU (default 125 MB/s: Llama 3's 2 TB/s over 16,384 GPUs)"},
    {"async-checkpoint", "--async-checkpoint", "",
     "only the snapshot to host memory blocks; the write overlaps training"},
    {"checksum", "--checksum", "none|crc32", "checksum the checkpoint at the profile's measured CRC32 rate"},
    {"restart-time", "--restart-time", "T", "detection, restart and reload after a failure (default 10 min)"},
    {"checkpoint-every", "--checkpoint-every", "auto|N", "steps between checkpoints (default auto: Daly's optimum)"},
}};

[[noreturn]] void fail(const std::string& source, const std::string& what) { throw InputError(source + ": " + what); }

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return parts;
}

std::string quote(std::string_view text) { return quoted_excerpt(text); }

// Sizes beyond this are refused before anything is built; the op limit in study.cpp bounds the product.
constexpr long long kMaxCount = 1'000'000'000;

int parse_count(std::string_view text, const std::string& source) {
  long long value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != text.data() + text.size()) {
    fail(source, "must be a positive integer, got " + quote(text));
  }
  if (ec == std::errc::result_out_of_range || value > kMaxCount) {
    fail(source, "is absurdly large (" + excerpt(text) + "; at most " + std::to_string(kMaxCount) + ")");
  }
  if (value <= 0) fail(source, "must be a positive integer, got " + excerpt(text));
  return static_cast<int>(value);
}

int count_from_json(const nlohmann::json& value, const std::string& source) {
  if (value.is_number_integer()) return parse_count(std::to_string(value.get<long long>()), source);
  if (value.is_number_unsigned()) return parse_count(std::to_string(value.get<unsigned long long>()), source);
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (std::isfinite(number) && number == std::floor(number) && std::fabs(number) < 1e18) {
      return parse_count(std::to_string(static_cast<long long>(number)), source);
    }
    fail(source, "must be a positive integer, got " + json_excerpt(value));
  }
  fail(source, "must be a positive integer, got " + json_excerpt(value));
}

template <typename T>
T checked(const Parsed<T>& parsed, const std::string& source) {
  if (!parsed.ok) fail(source, parsed.error);
  return parsed.value;
}

// One element of a list setting: a JSON number, or text with an optional unit.
template <typename T>
using TextParser = Parsed<T> (*)(std::string_view);
template <typename T>
using NumberParser = Parsed<T> (*)(double);

template <typename T>
T element_from_json(const nlohmann::json& value, const std::string& source, TextParser<T> text, NumberParser<T> number,
                    std::string_view expected) {
  if (value.is_number()) return checked(number(value.get<double>()), source);
  if (value.is_string()) return checked(text(value.get_ref<const std::string&>()), source);
  fail(source, "must be " + std::string(expected) + ", got " + json_excerpt(value));
}

template <typename T>
std::vector<T> list_from_json(const nlohmann::json& value, const std::string& source, TextParser<T> text,
                              NumberParser<T> number, std::string_view expected) {
  std::vector<T> values;
  if (value.is_array()) {
    if (value.empty()) fail(source, "must not be an empty list");
    for (std::size_t i = 0; i < value.size(); ++i) {
      values.push_back(element_from_json(value[i], source + "[" + std::to_string(i) + "]", text, number, expected));
    }
    return values;
  }
  if (value.is_string()) {
    // The parts view this string: it must outlive them (a temporary here was a use-after-free).
    const std::string& text_value = value.get_ref<const std::string&>();
    const auto parts = split_commas(text_value);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      values.push_back(
          checked(text(parts[i]), parts.size() > 1 ? source + " (value " + std::to_string(i + 1) + ")" : source));
    }
    return values;
  }
  values.push_back(element_from_json(value, source, text, number, expected));
  return values;
}

template <typename T>
std::vector<T> list_from_text(std::string_view text, const std::string& source, TextParser<T> parse) {
  std::vector<T> values;
  const auto parts = split_commas(text);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    values.push_back(
        checked(parse(parts[i]), parts.size() > 1 ? source + " (value " + std::to_string(i + 1) + ")" : source));
  }
  return values;
}

// The registry's name for what was typed (GPipe, ZBVZeroBubble, interleaved, ...), or the text
// itself, which check_scenario then refuses with a suggestion.
std::string schedule_name(std::string_view typed) {
  const ScheduleInfo* info = resolve_schedule(typed);
  return info != nullptr ? std::string(info->name) : std::string(typed);
}

std::vector<std::string> schedule_list(std::string_view text, const std::string& source) {
  std::vector<std::string> names;
  for (std::string_view part : split_commas(text)) {
    if (part.empty()) fail(source, "has an empty schedule name in " + quote(text));
    names.push_back(schedule_name(part));
  }
  return names;
}

// A preset named by its family resolves to the preset, and the scenario notes the choice for the
// front end to show; anything else stays as typed, for the exact lookup to accept or refuse.
std::string preset_name(std::string_view typed, const std::optional<std::string>& family, const std::string& source,
                        Scenario& scenario) {
  if (!family) return std::string(typed);
  scenario.notes.push_back(source + ": " + quote(typed) + " is the preset " + *family);
  return *family;
}

CommMode comm_from_text(std::string_view text, const std::string& source) {
  if (text == "overlap") return CommMode::kOverlap;
  if (text == "blocking") return CommMode::kBlocking;
  if (text == "paired") return CommMode::kPaired;
  fail(source, "must be overlap, blocking or paired, got " + quote(text));
}

Scenario::CommActions comm_actions_from_text(std::string_view text, const std::string& source) {
  if (text == "honor") return Scenario::CommActions::kHonor;
  if (text == "wait-at-recv") return Scenario::CommActions::kWaitAtRecv;
  if (text == "ignore") return Scenario::CommActions::kIgnore;
  fail(source, "must be honor, wait-at-recv or ignore, got " + quote(text));
}

bool costs_per_from_text(std::string_view text, const std::string& source) {
  if (text == "device") return false;
  if (text == "chunk") return true;
  fail(source, "must be device or chunk, got " + quote(text));
}

OutputFormat format_from_text(std::string_view text, const std::string& source) {
  OutputFormat format{};
  if (!parse_output_format(text, format)) fail(source, "must be table, json or csv, got " + quote(text));
  return format;
}

double fraction_from_number(double value, const std::string& source) {
  if (!std::isfinite(value) || value < 0 || value > 1) {
    std::ostringstream shown;
    shown << value;
    fail(source, "must be a fraction between 0 and 1, got " + shown.str());
  }
  return value;
}

// A share of the memory to keep free: below a half (keeping more free is a smaller GPU, not headroom).
double headroom_from_number(double value, const std::string& source) {
  if (value >= 0.5) {
    std::ostringstream shown;
    shown << value;
    fail(source, "must be a share of the memory below 0.5, got " + shown.str());
  }
  return value;
}

// The whole of `text` as a number, else refused: "must be WHAT, got 'x'".
double number_from_text(std::string_view text, const std::string& source, const char* what) {
  std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size()) fail(source, std::string("must be ") + what + ", got " + quote(text));
  return value;
}

double fraction_from_text(std::string_view text, const std::string& source) {
  return fraction_from_number(number_from_text(text, source, "a number between 0 and 1"), source);
}

// Megatron-LM's recompute_modules that ppsim models (transformer_config.py lists a few more, for
// attention variants it does not: gdn_norm_out, gdp_in_proj, gdp_qkv, mhc).
constexpr const char* kRecomputeModuleNames = "core_attn, layernorm, moe_act, mlp, moe, shared_experts and mla_up_proj";

RecomputeModules recompute_modules_from_text(std::string_view text, const std::string& source) {
  RecomputeModules modules{.core_attn = false};
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view name = text.substr(start, comma - start);
    if (name == "core_attn") {
      modules.core_attn = true;
    } else if (name == "layernorm") {
      modules.layernorm = true;
    } else if (name == "moe_act") {
      modules.moe_act = true;
    } else if (name == "mlp") {
      modules.mlp = true;
    } else if (name == "moe") {
      modules.moe = true;
    } else if (name == "shared_experts") {
      modules.shared_experts = true;
    } else if (name == "mla_up_proj") {
      modules.mla_up_proj = true;
    } else {
      fail(source, "must be a comma-separated list of " + std::string(kRecomputeModuleNames) + ", got " + quote(text));
    }
    start = comma + 1;
  }
  return modules;
}

std::string recompute_modules_text(const RecomputeModules& modules) {
  std::string text;
  for (const auto& [on, name] :
       {std::pair{modules.core_attn, "core_attn"}, std::pair{modules.layernorm, "layernorm"},
        std::pair{modules.moe_act, "moe_act"}, std::pair{modules.mlp, "mlp"}, std::pair{modules.moe, "moe"},
        std::pair{modules.shared_experts, "shared_experts"}, std::pair{modules.mla_up_proj, "mla_up_proj"}}) {
    if (on) text += (text.empty() ? "" : ",") + std::string(name);
  }
  return text;
}

Recompute recompute_from_text(std::string_view text, const std::string& source) {
  if (text == "none") return Recompute::kNone;
  if (text == "selective") return Recompute::kSelective;
  if (text == "full") return Recompute::kFull;
  fail(source, "must be none, selective or full, got " + quote(text));
}

// `text` when it is one of `names`, else refused: "must be a, b or c, got 'x'".
std::string one_of(std::string_view text, std::initializer_list<std::string_view> names, const std::string& source) {
  if (std::find(names.begin(), names.end(), text) != names.end()) return std::string(text);
  std::string list;
  std::size_t k = 0;
  for (const std::string_view name : names) {
    list += (k == 0 ? "" : k + 1 == names.size() ? " or " : ", ") + std::string(name);
    ++k;
  }
  fail(source, "must be " + list + ", got " + quote(text));
}

std::string precision_from_text(std::string_view text, const std::string& source) {
  return one_of(text, {"bf16", "fp16", "fp8"}, source);
}

// Layer counts may be 0: a stage can hold only the embedding or only the LM head.
int layer_count_from_text(std::string_view text, const std::string& source) {
  if (text == "0") return 0;
  return parse_count(text, source);
}

std::vector<int> layer_list_from_text(std::string_view text, const std::string& source) {
  std::vector<int> counts;
  const auto parts = split_commas(text);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    counts.push_back(layer_count_from_text(parts[i], parts.size() > 1 ? source + " (value " + std::to_string(i + 1) + ")" : source));
  }
  return counts;
}

// Megatron's --hierarchical-context-parallel-sizes for a2a+p2p: two sizes, the all-to-all group's and
// the ring's.
std::vector<int> hierarchical_sizes_from_text(std::string_view text, const std::string& source) {
  const auto parts = split_commas(text);
  if (parts.size() != 2) fail(source, "must be two sizes A,P (the all-to-all group's and the ring's), got " + quote(text));
  return {parse_count(parts[0], source + " (value 1)"), parse_count(parts[1], source + " (value 2)")};
}

double dropout_from_number(double value, const std::string& source) {
  if (value >= 1) fail(source, "must be a probability below 1, got 1");
  return value;
}

// The busiest expert rank's tokens over the balanced share: 1 (balanced) up to 1000.
double imbalance_from_number(double value, const std::string& source) {
  if (!std::isfinite(value) || value < 1 || value > 1000) {
    std::ostringstream shown;
    shown << value;
    fail(source, "must be a factor from 1 (balanced) to 1000, got " + shown.str());
  }
  return value;
}

double imbalance_from_text(std::string_view text, const std::string& source) {
  return imbalance_from_number(number_from_text(text, source, "a factor from 1 (balanced) to 1000"), source);
}

bool bool_from_text(std::string_view text, const std::string& source) {
  if (text == "true") return true;
  if (text == "false") return false;
  fail(source, "must be true or false, got " + quote(text));
}


}  // namespace

std::span<const SettingInfo> scenario_settings() { return kSettings; }

std::string nearest_name(std::string_view unknown, std::span<const std::string_view> candidates) {
  return closest_name(unknown, std::vector<std::string_view>(candidates.begin(), candidates.end()));
}

std::string nearest_key(std::string_view unknown) {
  std::vector<std::string_view> keys;
  for (const auto& setting : kSettings) keys.push_back(setting.key);
  return nearest_name(unknown, keys);
}

namespace {

// Settings whose values are names from a fixed list (or true and false): any case is the same name
// (`--precision FP8`, `"recompute": "Full"`), as Megatron's and torchtitan's own spellings vary.
bool takes_a_named_value(std::string_view key) {
  static const std::unordered_set<std::string_view> kNamed = {
      "comm-actions", "costs-per", "comm", "format", "timeline", "cp-comm", "moe-dispatcher", "sequence-parallel",
      "recompute", "recompute-modules", "flash-attention", "distributed-optimizer", "fsdp", "fsdp-unit",
      "reshard-after-forward", "fsdp-float8-all-gather", "precision", "grad-compression", "fp8-param-gather",
      "grad-reduce-dtype", "layers-per-stage", "overlap-grad-reduce", "tp-comm-overlap", "overlap-param-gather",
      "overlap-p2p-comm", "jitter-dist", "checksum", "async-checkpoint", "checkpoint-every"};
  return kNamed.contains(key);
}

// "a.json,b.json": the files of one run.
std::vector<std::string> split_paths(std::string_view text, const std::string& source) {
  std::vector<std::string> paths;
  while (!text.empty()) {
    const std::size_t comma = std::min(text.find(','), text.size());
    if (comma > 0) paths.emplace_back(text.substr(0, comma));
    text.remove_prefix(std::min(comma + 1, text.size()));
  }
  if (paths.empty()) fail(source, "needs a trace's path");
  if (paths.size() > 4096) fail(source, "more than 4096 files");
  return paths;
}

void set_calibrated_from(std::vector<std::string> paths, const std::string& source, Scenario& scenario) {
  scenario.calibrated_from = std::move(paths);
  scenario.calibration.reset();
  scenario.notes.push_back(source + ": costs measured from " + excerpt(scenario.calibrated_from.front()) +
                           (scenario.calibrated_from.size() > 1 ? " and " + std::to_string(scenario.calibrated_from.size() - 1) + " more" : "") +
                           " (F, B, W and links; p, m and the schedule unless given)");
}

}  // namespace

void apply_setting_text(std::string_view key, std::string_view given, const std::string& source, Scenario& scenario) {
  scenario.sources[std::string(key)] = source;
  const std::string lowered = takes_a_named_value(key) ? lower_case(given) : std::string();
  const std::string_view text = takes_a_named_value(key) ? std::string_view(lowered) : given;
  if (key == "schedule")
    scenario.schedules = schedule_list(text, source);
  else if (key == "schedule-file")
    scenario.schedule_file = std::string(text);
  else if (key == "p")
    scenario.params.p = parse_count(text, source);
  else if (key == "m")
    scenario.params.m = parse_count(text, source);
  else if (key == "v")
    scenario.params.v = parse_count(text, source);
  else if (key == "microbatch-group-size")
    scenario.params.microbatch_group = parse_count(text, source);
  else if (key == "sequence-splits")
    scenario.params.sequence_splits = parse_count(text, source);
  else if (key == "forward")
    scenario.forward = list_from_text<Duration>(text, source, parse_duration);
  else if (key == "backward")
    scenario.backward = list_from_text<Duration>(text, source, parse_duration);
  else if (key == "weight")
    scenario.weight = list_from_text<Duration>(text, source, parse_duration);
  else if (key == "overlap")
    scenario.overlap = checked(parse_duration(text), source);
  else if (key == "comm-actions")
    scenario.comm_actions = comm_actions_from_text(text, source);
  else if (key == "costs-per")
    scenario.costs_per_chunk = costs_per_from_text(text, source);
  else if (key == "latency")
    scenario.latency = checked(parse_duration(text), source);
  else if (key == "bandwidth")
    scenario.bandwidth = checked(parse_bandwidth(text), source);
  else if (key == "message-bytes")
    scenario.message_bytes = list_from_text<ByteCount>(text, source, parse_bytes);
  else if (key == "activation-bytes")
    scenario.activation_bytes = list_from_text<ByteCount>(text, source, parse_bytes);
  else if (key == "static-bytes")
    scenario.static_bytes = list_from_text<ByteCount>(text, source, parse_bytes);
  else if (key == "weight-stash-fraction")
    scenario.weight_stash_fraction = fraction_from_text(text, source);
  else if (key == "comm")
    scenario.comm = comm_from_text(text, source);
  else if (key == "format")
    scenario.format = format_from_text(text, source);
  else if (key == "timeline")
    scenario.timeline = bool_from_text(text, source);
  else if (key == "model")
    scenario.model = preset_name(text, model_by_family(text), source, scenario);
  else if (key == "hardware")
    scenario.hardware = preset_name(text, hardware_by_family(text), source, scenario);
  else if (key == "seq")
    scenario.layout.seq = parse_count(text, source);
  else if (key == "micro-batch")
    scenario.layout.micro_batch = parse_count(text, source);
  else if (key == "global-batch")
    scenario.layout.global_batch = parse_count(text, source);
  else if (key == "t")
    scenario.layout.tensor_parallel = parse_count(text, source);
  else if (key == "d")
    scenario.layout.data_parallel = parse_count(text, source);
  else if (key == "e")
    scenario.layout.expert_parallel = parse_count(text, source);
  else if (key == "data-parallel-replicate")
    scenario.layout.data_parallel_replicate = parse_count(text, source);
  else if (key == "context-parallel")
    scenario.layout.context_parallel = parse_count(text, source);
  else if (key == "cp-comm")
    scenario.layout.cp_comm = one_of(text, {"p2p", "a2a", "allgather", "a2a+p2p"}, source);
  else if (key == "hierarchical-context-parallel-sizes")
    scenario.layout.hierarchical_cp = hierarchical_sizes_from_text(text, source);
  else if (key == "expert-tensor-parallel")
    scenario.layout.expert_tensor_parallel = parse_count(text, source);
  else if (key == "moe-dispatcher")
    scenario.layout.moe_dispatcher = one_of(text, {"alltoall", "allgather", "deepep"}, source);
  else if (key == "moe-imbalance")
    scenario.layout.moe_imbalance = imbalance_from_text(text, source);
  else if (key == "sequence-parallel")
    scenario.layout.sequence_parallel = bool_from_text(text, source);
  else if (key == "recompute")
    scenario.layout.recompute = recompute_from_text(text, source);
  else if (key == "recompute-modules")
    scenario.layout.recompute_modules = recompute_modules_from_text(text, source);
  else if (key == "flash-attention")
    scenario.layout.flash_attention = bool_from_text(text, source);
  else if (key == "distributed-optimizer")
    scenario.layout.distributed_optimizer = bool_from_text(text, source);
  else if (key == "fsdp")
    scenario.layout.fsdp = bool_from_text(text, source);
  else if (key == "fsdp-unit")
    scenario.layout.fsdp_unit = one_of(text, {"block", "stage"}, source);
  else if (key == "reshard-after-forward")
    scenario.layout.reshard_after_forward = one_of(text, {"default", "always", "never"}, source);
  else if (key == "fsdp-float8-all-gather")
    scenario.layout.fsdp_float8_all_gather = bool_from_text(text, source);
  else if (key == "precision")
    scenario.layout.precision = precision_from_text(text, source);
  else if (key == "grad-compression")
    scenario.layout.grad_compression = one_of(text, {"none", "fp8", "1bit"}, source);
  else if (key == "fp8-param-gather")
    scenario.layout.fp8_param_gather = bool_from_text(text, source);
  else if (key == "grad-reduce-dtype")
    scenario.layout.grad_reduce_dtype = one_of(text, {"fp32", "bf16", "fp16"}, source);
  else if (key == "layers-per-stage") {
    scenario.auto_layer_split = text == "auto";
    scenario.layout.layers_per_stage = scenario.auto_layer_split ? std::vector<int>{} : layer_list_from_text(text, source);
  }
  else if (key == "overlap-grad-reduce")
    scenario.layout.overlap_grad_reduce = bool_from_text(text, source);
  else if (key == "tp-comm-overlap")
    scenario.layout.tp_comm_overlap = bool_from_text(text, source);
  else if (key == "dropout")
    scenario.layout.dropout = dropout_from_number(fraction_from_text(text, source), source);
  else if (key == "calibrated-from")
    set_calibrated_from(split_paths(text, source), source, scenario);
  else if (key == "memory-headroom")
    scenario.layout.memory_headroom = headroom_from_number(fraction_from_text(text, source), source);
  else if (key == "bucket-size")
    scenario.layout.bucket_parameters = parse_count(text, source);
  else if (key == "overlap-param-gather")
    scenario.layout.overlap_param_gather = bool_from_text(text, source);
  else if (key == "overlap-p2p-comm")
    scenario.overlap_p2p_comm = bool_from_text(text, source);
  else if (key == "workspace")
    scenario.layout.workspace_bytes = checked(parse_bytes(text), source).value;
  else if (!apply_variability_text(key, text, source, scenario))
    fail(source, "unknown setting");
}

namespace {

// One key of a config file by any of its names (setting_aliases.hpp); `section` is the torchtitan
// section it is in, or "".
// Returns ppsim's key for it.
std::string apply_named_setting(const std::string& name, const nlohmann::json& value, const std::string& source,
                                std::string_view section, Scenario& scenario) {
  // torchtitan's [activation_checkpoint] mode: none, selective or full, as ppsim's recompute.
  const bool checkpoint_mode = section == "activation_checkpoint" && name == "mode";
  const std::optional<SettingAlias> alias = checkpoint_mode ? SettingAlias{"recompute", {}} : setting_alias(name);
  if (!alias) {
    const std::string suggestion = nearest_key(name);
    fail(source, "unknown key" + (suggestion.empty() ? std::string(" (see ppsim run --help for the keys)")
                                                     : " (did you mean \"" + suggestion + "\"?)"));
  }
  if (alias->key.empty()) fail(source, alias->explanation);
  apply_config_setting(alias->key, value, source, scenario);
  return alias->key;
}

}  // namespace

void apply_config_json(const nlohmann::json& config, const std::string& origin, Scenario& scenario) {
  if (!config.is_object()) {
    fail(origin, "$: must be a JSON object of settings, got " + std::string(config.type_name()));
  }
  std::map<std::string, std::string> given;  // ppsim's key -> where this object set it
  for (const auto& item : config.items()) {
    // Named, not a structured binding: clang 14 cannot capture a structured binding in a lambda.
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    const std::string source = origin + ": $." + excerpt(key);
    // One setting under two of its names ("t" and "tensor-parallel") would leave the second silently
    // in force: refused, naming both.
    const auto once = [&](const std::string& setting, const std::string& where) {
      const auto [at, fresh] = given.emplace(setting, where);
      if (!fresh) fail(where, "sets \"" + setting + "\" again, as " + at->second.substr(origin.size() + 2) + " did");
    };
    if (is_torchtitan_section(key) && value.is_object()) {
      for (const auto& inner : value.items()) {
        const std::string where = source + "." + excerpt(inner.key());
        once(apply_named_setting(inner.key(), inner.value(), where, key, scenario), where);
      }
      continue;
    }
    once(apply_named_setting(key, value, source, "", scenario), source);
  }
}

void apply_config_setting(const std::string& key, const nlohmann::json& value, const std::string& source,
                          Scenario& scenario) {
  scenario.sources[key] = source;
  if (key == "schedule") {
    if (value.is_string()) {
      scenario.schedules = schedule_list(value.get<std::string>(), source);
    } else if (value.is_array() && !value.empty()) {
      scenario.schedules.clear();
      for (std::size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string()) fail(source + "[" + std::to_string(i) + "]", "must be a schedule name (a string)");
        scenario.schedules.push_back(schedule_name(value[i].get<std::string>()));
      }
    } else {
      fail(source, "must be a schedule name or a non-empty list of names, got " + json_excerpt(value));
    }
  } else if (key == "p" || key == "m" || key == "v") {
    (key == "p"   ? scenario.params.p
     : key == "m" ? scenario.params.m
                  : scenario.params.v) = count_from_json(value, source);
  } else if (key == "forward" || key == "backward" || key == "weight") {
    auto& target = key == "forward" ? scenario.forward : key == "backward" ? scenario.backward : scenario.weight;
    target =
        list_from_json<Duration>(value, source, parse_duration, duration_from_number, "a time or a list of times");
  } else if (key == "overlap") {
    scenario.overlap.reset();
    if (!value.is_null()) {
      scenario.overlap = element_from_json<Duration>(value, source, parse_duration, duration_from_number, "a time");
    }
  } else if (key == "latency") {
    scenario.latency = element_from_json<Duration>(value, source, parse_duration, duration_from_number, "a time");
  } else if (key == "bandwidth") {
    // null: unlimited, as the scenario's JSON writes it (a number or null, like "overlap").
    scenario.bandwidth = value.is_null() ? Bandwidth{std::numeric_limits<double>::infinity()}
                                         : element_from_json<Bandwidth>(value, source, parse_bandwidth,
                                                                        bandwidth_from_number, "a bandwidth");
  } else if (key == "message-bytes" || key == "activation-bytes" || key == "static-bytes") {
    auto& target = key == "message-bytes"      ? scenario.message_bytes
                   : key == "activation-bytes" ? scenario.activation_bytes
                                               : scenario.static_bytes;
    target = list_from_json<ByteCount>(value, source, parse_bytes, bytes_from_number, "a size or a list of sizes");
  } else if (key == "calibrated-from") {
    std::vector<std::string> paths;
    if (value.is_string()) {
      paths = split_paths(value.get<std::string>(), source);
    } else if (value.is_array() && !value.empty() && value.size() <= 4096) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string() || value[i].get<std::string>().empty()) {
          fail(source + "[" + std::to_string(i) + "]", "must be a file's path");
        }
        paths.push_back(value[i].get<std::string>());
      }
    } else {
      fail(source, "must be a trace's path or a list of paths, got " + json_excerpt(value));
    }
    set_calibrated_from(std::move(paths), source, scenario);
  } else if (key == "memory-headroom") {
    if (!value.is_number()) fail(source, "must be a share of the memory below 0.5, got " + json_excerpt(value));
    scenario.layout.memory_headroom = headroom_from_number(fraction_from_number(value.get<double>(), source), source);
  } else if (key == "dropout") {
    if (!value.is_number()) fail(source, "must be a probability below 1, got " + json_excerpt(value));
    scenario.layout.dropout = dropout_from_number(fraction_from_number(value.get<double>(), source), source);
  } else if (key == "weight-stash-fraction") {
    if (!value.is_number()) fail(source, "must be a number between 0 and 1, got " + json_excerpt(value));
    scenario.weight_stash_fraction = fraction_from_number(value.get<double>(), source);
  } else if (key == "timeline" || key == "sequence-parallel" || key == "flash-attention" ||
             key == "distributed-optimizer" || key == "fsdp" || key == "fsdp-float8-all-gather" ||
             key == "overlap-grad-reduce" ||
             key == "overlap-param-gather" || key == "fp8-param-gather" ||
             (key == "overlap-p2p-comm" && !value.is_null()) ||
             key == "tp-comm-overlap") {
    if (!value.is_boolean()) fail(source, "must be true or false, got " + json_excerpt(value));
    apply_setting_text(key, value.get<bool>() ? "true" : "false", source, scenario);
  } else if (key == "moe-imbalance") {
    if (!value.is_number()) fail(source, "must be a factor from 1 (balanced) to 1000, got " + json_excerpt(value));
    scenario.layout.moe_imbalance = imbalance_from_number(value.get<double>(), source);
  } else if (key == "seq" || key == "micro-batch" || key == "global-batch" || key == "t" || key == "d" ||
             key == "e" || key == "expert-tensor-parallel" || key == "context-parallel" ||
             key == "data-parallel-replicate" || key == "bucket-size" ||
             key == "microbatch-group-size" || key == "sequence-splits") {
    apply_setting_text(key, std::to_string(count_from_json(value, source)), source, scenario);
  } else if (key == "overlap-p2p-comm") {  // null: Megatron's default, as a report's scenario writes it
    scenario.overlap_p2p_comm.reset();
  } else if (key == "layers-per-stage") {
    scenario.auto_layer_split = false;
    if (value.is_string()) {
      apply_setting_text(key, value.get<std::string>(), source, scenario);
    } else if (value.is_array() && value.empty()) {
      scenario.layout.layers_per_stage.clear();  // the even split, as a report's scenario writes it
    } else if (value.is_array()) {
      scenario.layout.layers_per_stage.clear();
      for (std::size_t i = 0; i < value.size(); ++i) {
        const std::string element = source + "[" + std::to_string(i) + "]";
        scenario.layout.layers_per_stage.push_back(
            value[i] == 0 ? 0 : count_from_json(value[i], element));
      }
    } else {
      fail(source, "must be a list of layer counts, got " + json_excerpt(value));
    }
  } else if (key == "workspace") {
    scenario.layout.workspace_bytes =
        element_from_json<ByteCount>(value, source, parse_bytes, bytes_from_number, "a size").value;
  } else if (apply_variability_json(key, value, source, scenario)) {
  } else {  // comm, format, schedule-file, model, hardware, recompute, precision: strings
    if (!value.is_string()) fail(source, "must be a string, got " + json_excerpt(value));
    apply_setting_text(key, value.get<std::string>(), source, scenario);
  }
}

nlohmann::json read_config_file(const std::string& path) {
  try {
    return parse_json_text(read_bounded_file(path, kMaxJsonFileBytes, "config file"), path);
  } catch (const JsonInputError& error) {
    throw InputError(error.what());
  }
}

void apply_config_file(const std::string& path, Scenario& scenario) { apply_config_read(read_config_file(path), path, scenario); }

void apply_config_read(const nlohmann::json& config, const std::string& path, Scenario& scenario) {
  const std::string before = scenario.schedule_file;
  const std::string model_before = scenario.model;
  const std::string hardware_before = scenario.hardware;
  apply_config_json(config, path, scenario);
  // A model or hardware file named in a config is found beside the config; a preset name (no
  // ".json") is not a path.
  auto beside_config = [&](std::string& named, const std::string& previous) {
    if (named != previous && named.ends_with(".json") && std::filesystem::path(named).is_relative()) {
      named = (std::filesystem::path(path).parent_path() / named).string();
    }
  };
  beside_config(scenario.model, model_before);
  beside_config(scenario.hardware, hardware_before);
  // A schedule file named in a config is found beside the config, wherever ppsim runs from.
  if (scenario.schedule_file != before && !scenario.schedule_file.empty() &&
      std::filesystem::path(scenario.schedule_file).is_relative()) {
    scenario.schedule_file = (std::filesystem::path(path).parent_path() / scenario.schedule_file).string();
  }
}

nlohmann::ordered_json scenario_to_json(const Scenario& scenario, std::string_view schedule) {
  auto numbers = [](const auto& list) {
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (const auto& item : list) values.push_back(item.value);
    return list.size() == 1 ? values[0] : values;
  };
  nlohmann::ordered_json out;
  out["schedule"] = schedule;
  out["p"] = scenario.params.p;
  out["m"] = scenario.params.m;
  out["v"] = scenario.params.v;
  if (scenario.params.microbatch_group > 0) out["microbatch-group-size"] = scenario.params.microbatch_group;
  if (scenario.params.sequence_splits > 0) out["sequence-splits"] = scenario.params.sequence_splits;
  // A custom schedule's actions come from its file, which a baseline must name to be re-run.
  if (!scenario.schedule_file.empty()) out["schedule-file"] = scenario.schedule_file;
  if (!scenario.model.empty()) {
    // The model derives every cost; its inputs are the scenario.
    const TrainingLayout& layout = scenario.layout;
    out["model"] = scenario.model;
    out["hardware"] = scenario.hardware;
    out["seq"] = layout.seq;
    out["micro-batch"] = layout.micro_batch;
    out["global-batch"] = layout.global_batch;
    out["t"] = layout.tensor_parallel;
    out["d"] = layout.data_parallel;
    out["e"] = layout.expert_parallel;
    // Context parallelism only where it is used, so that every other scenario keeps its keys.
    if (layout.context_parallel > 1) {
      out["context-parallel"] = layout.context_parallel;
      out["cp-comm"] = layout.cp_comm;
      if (!layout.hierarchical_cp.empty()) {
        out["hierarchical-context-parallel-sizes"] =
            std::to_string(layout.hierarchical_cp[0]) + "," + std::to_string(layout.hierarchical_cp[1]);
      }
    }
    out["expert-tensor-parallel"] = layout.expert_tensor_parallel;
    out["moe-dispatcher"] = layout.moe_dispatcher;
    out["moe-imbalance"] = layout.moe_imbalance;
    out["sequence-parallel"] = layout.sequence_parallel;
    out["recompute"] = recompute_name(layout.recompute);
    if (layout.recompute_modules != RecomputeModules{}) {
      out["recompute-modules"] = recompute_modules_text(layout.recompute_modules);
    }
    out["flash-attention"] = layout.flash_attention;
    out["distributed-optimizer"] = layout.distributed_optimizer;
    out["fsdp"] = layout.fsdp;
    if (layout.data_parallel_replicate > 1) out["data-parallel-replicate"] = layout.data_parallel_replicate;
    if (layout.fsdp) {
      out["fsdp-unit"] = layout.fsdp_unit;
      out["reshard-after-forward"] = layout.reshard_after_forward;
      out["fsdp-float8-all-gather"] = layout.fsdp_float8_all_gather;
    }
    out["precision"] = layout.precision;
    out["grad-reduce-dtype"] = grad_reduce_dtype(layout);
    out["fp8-param-gather"] = layout.fp8_param_gather;
    out["grad-compression"] = layout.grad_compression;
    out["layers-per-stage"] = layout.layers_per_stage;
    out["overlap-grad-reduce"] = layout.overlap_grad_reduce;
    out["bucket-size"] = layout.bucket_parameters > 0 ? static_cast<double>(layout.bucket_parameters)
                                                      : default_bucket_parameters(layout.data_parallel);
    out["overlap-param-gather"] = layout.overlap_param_gather;
    out["tp-comm-overlap"] = layout.tp_comm_overlap;
    if (layout.dropout >= 0) {
      out["dropout"] = layout.dropout;
    } else if (scenario.resolved_model) {
      out["dropout"] = scenario.resolved_model->dropout;
    } else {
      out["dropout"] = nullptr;  // the model's own
    }
    out["workspace"] = layout.workspace_bytes;
    out["memory-headroom"] = layout.memory_headroom;
    // null: Megatron's default for the schedule (on with interleaving); "comm" says what ran.
    // As given here (null: Megatron's default for the schedule); the report replaces it with what ran.
    out["overlap-p2p-comm"] =
        scenario.overlap_p2p_comm ? nlohmann::ordered_json(*scenario.overlap_p2p_comm) : nlohmann::ordered_json(nullptr);
    out["comm"] = comm_mode_name(scenario.comm);
    variability_to_json(scenario, out);
    return out;
  }
  out["forward"] = numbers(scenario.forward);
  out["backward"] = numbers(scenario.backward);
  out["weight"] = numbers(resolved_weight(scenario));
  // null: the default, F + B of the two halves (a config may say so too).
  out["overlap"] = scenario.overlap ? nlohmann::ordered_json(scenario.overlap->value) : nlohmann::ordered_json(nullptr);
  // The costs above as this schedule ran them: a device's share already split over v > 1 chunks.
  if (scenario.params.v > 1) out["costs-per"] = scenario.costs_per_chunk ? "chunk" : "device";
  out["latency"] = scenario.latency.value;
  // null: unlimited. Every value here is a number, a list of numbers or null, so that JSON readers
  // see one type per key (and the scenario reads back as a config).
  out["bandwidth"] = std::isinf(scenario.bandwidth.value) ? nlohmann::ordered_json(nullptr)
                                                          : nlohmann::ordered_json(scenario.bandwidth.value);
  out["message-bytes"] = numbers(scenario.message_bytes);
  out["activation-bytes"] = numbers(scenario.activation_bytes);
  out["static-bytes"] = numbers(scenario.static_bytes);
  out["weight-stash-fraction"] = scenario.weight_stash_fraction;
  out["comm"] = comm_mode_name(scenario.comm);
  variability_to_json(scenario, out);
  return out;
}

}  // namespace ppsim
