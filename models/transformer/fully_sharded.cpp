// SPDX-License-Identifier: Apache-2.0
#include "models/transformer/fully_sharded.hpp"

#include <algorithm>
#include <cmath>

#include "models/transformer/static_memory.hpp"

namespace ppsim {

namespace {

// The links FSDP's collectives cross: the shard ranks are t apart (torchtitan's mesh puts tp
// innermost, then cp and dp_shard, then dp_replicate), so their ring leaves the node once
// t * shards GPUs exceed it; the replicas are t * shards apart.
struct ShardGroups {
  int shards = 1;
  int replicas = 1;
  bool shards_cross = false;
  int shards_per_node = 1;
  bool replicas_cross = false;
  int replicas_per_node = 1;
};

ShardGroups shard_groups(const TransformerSetup& setup) {
  const TrainingLayout& layout = setup.layout;
  const std::int64_t node = setup.hardware.devices_per_node;
  const std::int64_t t = std::max(1, layout.tensor_parallel);
  ShardGroups groups;
  groups.shards = layout.fsdp_shards();
  groups.replicas = std::max(1, layout.data_parallel_replicate);
  groups.shards_cross = t * groups.shards > node;
  groups.shards_per_node = static_cast<int>(std::clamp<std::int64_t>(node / t, 1, groups.shards));
  groups.replicas_cross = t * groups.shards * groups.replicas > node;
  groups.replicas_per_node =
      static_cast<int>(std::clamp<std::int64_t>(node / (t * groups.shards), 1, groups.replicas));
  return groups;
}

// FSDP2's foreach_all_gather: each rank contributes its shard, every rank ends with the whole.
double gather_time(const TransformerSetup& setup, const ShardGroups& groups, double bytes) {
  return collective_time(setup.hardware, Collective::kAllGather, bytes, groups.shards, groups.shards_cross,
                         groups.shards_per_node);
}

// foreach_reduce: the unsharded gradients reduce-scattered into each rank's shard; under HSDP the
// replicas then all-reduce that shard (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py,
// foreach_reduce: the all-reduce over the replicate group after the reduce-scatter).
double reduce_time(const TransformerSetup& setup, const ShardGroups& groups, double bytes) {
  double seconds = collective_time(setup.hardware, Collective::kReduceScatter, bytes, groups.shards,
                                   groups.shards_cross, groups.shards_per_node);
  if (groups.replicas > 1) {
    seconds += collective_time(setup.hardware, Collective::kAllReduce, bytes / groups.shards, groups.replicas,
                               groups.replicas_cross, groups.replicas_per_node);
  }
  return seconds;
}

}  // namespace

double fsdp_reduce_dtype_bytes(const TrainingLayout& layout) { return gradient_bytes(layout); }

double fsdp_gather_bytes(const TrainingLayout& layout, double parameters, double fp8_weights) {
  const double element = 2;  // the compute dtype, FSDP's param_dtype: bf16 or fp16
  if (layout.precision == "fp8" && layout.fsdp_float8_all_gather) return 1 * fp8_weights + element * (parameters - fp8_weights);
  return element * parameters;
}

UnitSpan unit_by_unit(const std::vector<UnitStep>& units, bool first_ready) {
  UnitSpan span;
  if (units.empty()) return span;
  double link = first_ready ? 0 : units[0].gather;  // when the link is next free
  double gathered = link;                            // when the current unit's all-gather has ended
  double computed = 0;                               // when the current unit's compute ends
  double compute_sum = 0;
  for (std::size_t u = 0; u < units.size(); ++u) {
    const double start = std::max(computed, gathered);
    if (u + 1 < units.size()) {  // the next unit's all-gather, issued as this one starts computing
      link = std::max(link, start) + units[u + 1].gather;
      gathered = link;
    }
    computed = start + units[u].compute;
    compute_sum += units[u].compute;
    if (units[u].reduce > 0) link = std::max(link, computed) + units[u].reduce;
  }
  span.extra = computed - compute_sum;
  span.reduce_tail = std::max(0.0, link - computed);
  return span;
}

ShardingCosts fully_sharded_stage(const TransformerSetup& setup, double parameters, double fp8_weights) {
  const ShardGroups groups = shard_groups(setup);
  const double gathered = fsdp_gather_bytes(setup.layout, parameters, fp8_weights);
  const double gradients = fsdp_reduce_dtype_bytes(setup.layout) * parameters;
  ShardingCosts costs;
  costs.gather_time = gather_time(setup, groups, gathered);
  costs.reduce_time = reduce_time(setup, groups, gradients);
  costs.parameter_bytes = std::llround(gathered);
  costs.gradient_bytes = std::llround(gradients);
  return costs;
}

ShardingCosts fully_sharded_units(const TransformerSetup& setup, const std::vector<ShardUnit>& units, bool alone) {
  const TrainingLayout& layout = setup.layout;
  const ShardGroups groups = shard_groups(setup);
  ShardingCosts costs;
  if (units.empty()) return costs;
  costs.per_block = true;
  // torchtitan's reshard_after_forward_policy "default": free after the forward without pipeline
  // parallelism, keep the stage gathered with it (parallelize.py, apply_fsdp).
  costs.regather = layout.reshard_after_forward == "always" || (layout.reshard_after_forward == "default" && alone);
  costs.reduce_per_op = alone;
  const double reduce_bytes = fsdp_reduce_dtype_bytes(layout);
  std::vector<double> gathers;
  std::vector<double> gathered_bytes;
  std::vector<double> reduces;
  for (const ShardUnit& unit : units) {
    gathered_bytes.push_back(fsdp_gather_bytes(layout, unit.parameters, unit.fp8_weights));
    gathers.push_back(gather_time(setup, groups, gathered_bytes.back()));
    reduces.push_back(reduce_time(setup, groups, reduce_bytes * unit.parameters));
  }
  // Each op's units in its order: the forward's from the embedding on, the backward's in reverse.
  auto steps = [&](Op op, bool gather, bool reduce) {
    std::vector<UnitStep> out;
    const bool forward = op == Op::kForward;
    for (std::size_t k = 0; k < units.size(); ++k) {
      const std::size_t u = forward ? k : units.size() - 1 - k;
      out.push_back(UnitStep{gather ? gathers[u] : 0, units[u].times.of(op), reduce ? reduces[u] : 0});
    }
    return out;
  };
  for (Op op : {Op::kForward, Op::kBackward, Op::kBackwardInput, Op::kBackwardWeight}) {
    const auto k = static_cast<std::size_t>(op);
    const bool gathers_weights = op != Op::kBackwardWeight;  // W needs activations and gradients only
    const double gathering = gathers_weights ? unit_by_unit(steps(op, true, false), true).extra : 0;
    costs.gather_extra[k] = gathering;
    if (alone && op != Op::kBackwardInput && op != Op::kForward) {
      // Reduce-scatters beside the backward: what they delay its gathers by, and what of them is
      // still running after the op ends beyond the last unit's own (the step waits for that one
      // in REDUCE_GRAD; a later op's compute hides it).
      const bool gather = costs.regather && gathers_weights;
      const UnitSpan both = unit_by_unit(steps(op, gather, true), true);
      const double last = reduces.front();  // the backward ends with the first unit
      costs.reduce_extra[k] = (both.extra - (gather ? gathering : 0)) + std::max(0.0, both.reduce_tail - last);
    }
  }
  costs.cold_forward_extra = unit_by_unit(steps(Op::kForward, true, false), false).extra;
  costs.gather_time = gathers.front();
  double reduce_all = 0;
  for (double r : reduces) reduce_all += r;
  costs.reduce_time = alone ? reduces.front() : reduce_all;
  costs.unit_reduces = reduce_all;
  for (double g : gathers) costs.unit_gathers += g;
  // Memory. Gathered: the whole stage while it stays gathered; with regather alone, two units in
  // flight plus what FSDP keeps after the forward (the last block and the head, torchtitan).
  double whole = 0;
  double pair = 0;
  double parameters = 0;
  double pair_parameters = 0;
  for (std::size_t u = 0; u < units.size(); ++u) {
    whole += gathered_bytes[u];
    parameters += units[u].parameters;
    if (u + 1 < units.size()) {
      pair = std::max(pair, gathered_bytes[u] + gathered_bytes[u + 1]);
      pair_parameters = std::max(pair_parameters, units[u].parameters + units[u + 1].parameters);
    }
  }
  if (units.size() == 1) {
    pair = whole;
    pair_parameters = parameters;
  }
  // Kept: the head unit (when the stage ends with one) and the last block.
  double kept = units.back().block ? 0 : gathered_bytes.back();
  for (std::size_t u = units.size(); u-- > 0;) {
    if (units[u].block) {
      kept += gathered_bytes[u];
      break;
    }
  }
  const bool in_flight_only = costs.regather && alone;
  costs.parameter_bytes = std::llround(in_flight_only ? std::min(whole, pair + kept) : whole);
  // Unsharded gradients: accumulated over the micro-batches inside a pipeline; alone, two units'
  // between their backward and their reduce-scatter.
  costs.gradient_bytes = std::llround(reduce_bytes * (alone ? pair_parameters : parameters));
  return costs;
}

}  // namespace ppsim
