// SPDX-License-Identifier: Apache-2.0
#include "study/plan/plan_space.hpp"

#include <algorithm>
#include <cctype>

#include "schedules/registry.hpp"
#include "study/common/errors.hpp"
#include "study/run/transformer_study.hpp"

namespace ppsim {
namespace {

// Context parallelism up to 32 ranks: Llama 3 trained its longest sequences at CP 16 (Llama 3
// paper, 3.3.1), and beyond 32 each rank's share of an 8k-128k sequence is too short to hide the ring.
constexpr int kMaxContextParallel = 32;
// Virtual stages per device up to 20: Megatron-Bridge's and NeMo's recipes use 2-20 (Llama 2 70B at
// VP 20 with p = 4); more only shortens each chunk below what its messages cost.
constexpr int kMaxVirtualStages = 20;
constexpr std::int64_t kMicroBatches[] = {1, 2, 4, 8};

std::vector<int> divisors(std::int64_t n, std::int64_t at_most) {
  std::vector<int> out;
  for (std::int64_t k = 1; k <= std::min(n, at_most); ++k) {
    if (n % k == 0) out.push_back(static_cast<int>(k));
  }
  return out;
}

// The rule of an error line with its numbers elided, so that the refusals tally by rule.
std::string rule_of(const std::string& message) {
  std::string rule;
  bool in_number = false;
  for (const char c : message) {
    const bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0 || (in_number && c == '.');
    if (digit) {
      if (!in_number) rule += 'N';
    } else {
      rule += c;
    }
    in_number = digit;
  }
  return rule;
}

// Megatron-LM runs these three (megatron/core/pipeline_parallel/schedules.py, combined_1f1b.py).
bool megatron_runs(std::string_view schedule) {
  return schedule == "1f1b" || schedule == "interleaved-1f1b" || schedule == "combined-1f1b";
}

// torchtitan's pipeline_parallel_schedule choices (torch.distributed.pipelining's classes).
bool torchtitan_runs(std::string_view schedule) {
  return schedule == "gpipe" || schedule == "1f1b" || schedule == "interleaved-1f1b" || schedule == "looped-bfs" ||
         schedule == "interleaved-zb" || schedule == "zbv" || schedule == "dualpipev";
}

}  // namespace

std::vector<int> accounted_split(int layers, int stages) {
  if (stages < 3 || (layers + 2) % stages != 0 || (layers + 2) / stages < 2) return {};
  std::vector<int> split(static_cast<std::size_t>(stages), (layers + 2) / stages);
  --split.front();
  --split.back();
  return split;
}

std::string PlanLayout::label() const {
  std::string out = "t" + std::to_string(t);
  if (c > 1) out += " c" + std::to_string(c);
  if (e > 1) out += " e" + std::to_string(e);
  if (etp > 1) out += " etp" + std::to_string(etp);
  out += " p" + std::to_string(p);
  if (v > 1) out += " v" + std::to_string(v);
  out += " d" + std::to_string(d) + " b" + std::to_string(b) + " " + recompute_name(recompute);
  if (fsdp) {
    out += replicate > 1 ? " hsdp" + std::to_string(replicate) : " fsdp";
  } else if (distributed_optimizer) {
    out += " dist-opt";
  }
  return out + " " + schedule;
}

Scenario layout_scenario(const Scenario& base, const PlanLayout& layout) {
  Scenario scenario = base;
  // Each layout's refusals name the flags, wherever the plan's settings came from (a file, Python), so
  // that they tally by rule alone.
  for (auto& [key, source] : scenario.sources) source = key.size() == 1 ? "-" + key : "--" + key;
  scenario.schedules = {layout.schedule};
  scenario.params.p = layout.p;
  scenario.params.v = layout.v;
  // Given, as far as the run is concerned: a schedule otherwise runs at its own default v.
  scenario.sources.emplace("p", "-p");
  scenario.sources.emplace("v", "-v");
  // m follows from the global batch for each layout (the resolved base keeps the m of its own d).
  scenario.sources.erase("m");
  TrainingLayout& training = scenario.layout;
  training.tensor_parallel = layout.t;
  training.context_parallel = layout.c;
  training.expert_parallel = layout.e;
  training.expert_tensor_parallel = layout.etp;
  training.data_parallel = layout.d;
  training.micro_batch = layout.b;
  training.recompute = layout.recompute;
  training.distributed_optimizer = layout.distributed_optimizer;
  training.fsdp = layout.fsdp;
  training.data_parallel_replicate = layout.replicate;
  training.layers_per_stage = layout.layers_per_stage;
  // Sequence parallelism wherever there is tensor parallelism, as every Megatron-Bridge and
  // torchtitan recipe runs it (Megatron requires it with MoE), unless the user said otherwise.
  if (base.sources.count("sequence-parallel") == 0) training.sequence_parallel = layout.t > 1;
  if (base.sources.count("recompute-modules") == 0) training.recompute_modules = RecomputeModules{};
  scenario.auto_layer_split = false;
  return scenario;
}

PlanSpace enumerate_layouts(const Scenario& base, const PlanAxes& axes) {
  PlanSpace space;
  const Architecture& arch = *base.resolved_model;
  const HardwareProfile& hardware = *base.resolved_hardware;
  const TrainingLayout& given = base.layout;
  const std::int64_t n = axes.gpus;
  auto pinned = [&](std::string_view key) { return base.sources.count(key) > 0; };
  auto axis = [&](std::string_view key, int value, std::vector<int> open) {
    return pinned(key) ? std::vector<int>{value} : open;
  };
  const int node = std::max(1, hardware.devices_per_node);
  const std::vector<int> ts = axis("t", given.tensor_parallel, divisors(node, node));
  std::vector<int> cs;
  for (int c = 1; c <= kMaxContextParallel; c *= 2) cs.push_back(c);
  cs = axis("context-parallel", given.context_parallel, cs);
  const bool moe = has_experts(arch);
  const std::vector<int> es = axis("e", given.expert_parallel, moe ? divisors(arch.moe.experts, n) : std::vector<int>{1});
  const std::vector<int> etps =
      axis("expert-tensor-parallel", given.expert_tensor_parallel, moe ? divisors(node, node) : std::vector<int>{1});
  std::vector<std::string> schedules;
  if (pinned("schedule")) {
    schedules = base.schedules;
  } else {
    schedules = {"1f1b", "interleaved-1f1b", "zbv", "interleaved-zb", "dualpipev"};
    if (moe) schedules.push_back("combined-1f1b");
  }
  std::vector<std::int64_t> bs(std::begin(kMicroBatches), std::end(kMicroBatches));
  if (pinned("micro-batch")) bs = {given.micro_batch};
  std::vector<Recompute> recomputes{Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  if (pinned("recompute") || pinned("recompute-modules")) recomputes = {given.recompute};

  for (const int t : ts) {
    for (const int c : cs) {
      if (n % (std::int64_t{t} * c) != 0) continue;
      const std::int64_t pd = n / (std::int64_t{t} * c);
      for (const int p : axis("p", base.params.p, divisors(pd, arch.layers))) {
        if (pd % p != 0) continue;
        const int d = static_cast<int>(pd / p);
        if (pinned("d") && d != given.data_parallel) continue;
        for (const int e : es) {
          for (const int etp : etps) {
            if (!moe && (e > 1 || etp > 1)) continue;
            for (const std::string& schedule : schedules) {
              const ScheduleInfo* info = find_schedule(schedule);
              if (info == nullptr || !info->generated()) continue;
              const bool by_megatron = megatron_runs(schedule) || !torchtitan_runs(schedule);
              const int most_v = std::max(1, std::min(kMaxVirtualStages, arch.layers / p));
              std::vector<int> vs;
              for (int v = 1; v <= most_v; ++v) {
                // The schedule's own rule on v, at an m every schedule accepts (a multiple of 2p), and
                // a split the frameworks make without a layout: p v stages of equal layers, or with
                // the embedding and the loss each counted as a layer (accounted_split).
                if (info->check(ScheduleParams{p, 2 * p, v})) continue;
                // Virtual stages interleave a pipeline; on one device they only cut the model finer.
                if (p == 1 && v > 1) continue;
                if (arch.layers % (p * v) == 0 || !accounted_split(arch.layers, p * v).empty()) vs.push_back(v);
              }
              if (pinned("v")) vs = std::find(vs.begin(), vs.end(), base.params.v) != vs.end()
                                        ? std::vector<int>{base.params.v}
                                        : std::vector<int>{};
              // Without pipelining every schedule is the same single stage, one of them standing for
              // all, except combined 1F1B, which overlaps two micro-batches' MoE all-to-alls there.
              if (p == 1 && schedule != schedules.front() && schedule != "combined-1f1b" && !pinned("schedule")) {
                continue;
              }
              for (const int v : vs) {
                for (const std::int64_t b : bs) {
                  for (const Recompute recompute : recomputes) {
                    // The optimizer's sharding: Megatron's DDP or distributed optimizer, torchtitan's
                    // FSDP over d * c or HSDP with each shard group filling one node.
                    struct Sharding {
                      bool distributed_optimizer;
                      bool fsdp;
                      int replicate;
                    };
                    std::vector<Sharding> shardings;
                    const bool fsdp_pinned = pinned("fsdp");
                    if (axes.megatron && (!fsdp_pinned || !given.fsdp) && by_megatron) {
                      for (const bool distributed : {true, false}) {
                        if (pinned("distributed-optimizer") && distributed != given.distributed_optimizer) continue;
                        shardings.push_back({distributed, false, 1});
                      }
                    }
                    if (axes.torchtitan && (!fsdp_pinned || given.fsdp) && torchtitan_runs(schedule) &&
                        !pinned("distributed-optimizer")) {
                      std::vector<int> replicas{1};
                      const std::int64_t per_node = node / std::min(node, t);
                      // HSDP's replicas split d (torchtitan's dp_replicate x dp_shard = d); the shard
                      // group, d / R x c ranks, fills one node.
                      const std::int64_t ranks = std::int64_t{d} * c;
                      if (ranks > per_node && ranks % per_node == 0 && d % (ranks / per_node) == 0) {
                        replicas.push_back(static_cast<int>(ranks / per_node));
                      }
                      if (pinned("data-parallel-replicate")) replicas = {given.data_parallel_replicate};
                      for (const int replicate : replicas) shardings.push_back({false, true, replicate});
                    }
                    for (const Sharding& sharding : shardings) {
                      PlanLayout layout;
                      layout.t = t;
                      layout.c = c;
                      layout.e = e;
                      layout.etp = etp;
                      layout.p = p;
                      layout.v = v;
                      layout.d = d;
                      layout.b = b;
                      layout.recompute = recompute;
                      layout.distributed_optimizer = sharding.distributed_optimizer;
                      layout.fsdp = sharding.fsdp;
                      layout.replicate = sharding.replicate;
                      layout.schedule = schedule;
                      if (arch.layers % (p * v) != 0) layout.layers_per_stage = accounted_split(arch.layers, p * v);
                      ++space.enumerated;
                      try {
                        const Scenario scenario = resolve_transformer_scenario_with(
                            layout_scenario(base, layout), base.resolved_model, base.resolved_hardware);
                        if (auto why = info->check(scenario.params)) {
                          throw InputError("--schedule: " + schedule + " " + *why);
                        }
                        if (scenario.layout.layers_per_stage.empty() && arch.layers < p * v) {
                          throw InputError("--layers-per-stage: fewer layers than stages");
                        }
                        space.layouts.push_back(std::move(layout));
                      } catch (const InputError& error) {
                        ++space.refused;
                        ++space.refusals[rule_of(error.what())];
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return space;
}

}  // namespace ppsim
