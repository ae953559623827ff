// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the engine asks of a cost model: op times, stash and message sizes, static memory and links.
// Cost models answer queries and hold no simulation state; the engine reads each answer once per
// stage before a run, so implementations need not be fast.

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "models/exchange.hpp"
#include "schedules/action.hpp"

namespace ppsim {

// What torch's FSDP (fully_shard) costs for one stage, for a lowered program's UNSHARD, RESHARD and
// REDUCE_GRAD (schedules/comm_action.hpp). All zero, the default, is a stage that is not sharded:
// torch's runtime then skips those actions (`stage_uses_fsdp` in _PipelineScheduleRuntime).
struct ShardingCosts {
  double gather_time = 0;             // UNSHARD's all-gather of the stage's parameters (per block: its first unit's)
  double reduce_time = 0;             // REDUCE_GRAD's reduce-scatter of its accumulated gradients
  std::int64_t parameter_bytes = 0;   // unsharded parameters, held from UNSHARD to RESHARD
  std::int64_t gradient_bytes = 0;    // unsharded gradients, from the first B or W to REDUCE_GRAD
  // FSDP per block (fully_shard on each transformer block): the stage is gathered unit by unit inside
  // the ops that use it, each unit's all-gather beside the previous unit's compute. What each op adds
  // to its compute is the cost model's; the engine decides which ops gather.
  bool per_block = false;
  // Every forward gathers the stage again (reshard_after_forward), and so does every backward when
  // the stage runs alone; inside a pipeline torch keeps a stage gathered from its first backward on
  // (backward_maybe_with_nosync: reshard_after_backward off until REDUCE_GRAD).
  bool regather = false;
  // The stage runs alone, outside torch's pipelining runtime (torchtitan without PP): every B and W
  // reduce-scatters its units as it goes, and REDUCE_GRAD waits only for the last unit's.
  bool reduce_per_op = false;
  std::array<double, 4> gather_extra{};  // by op (F, B, I, W): it gathers, its first unit already there
  double cold_forward_extra = 0;         // a forward that must gather its first unit too
  std::array<double, 4> reduce_extra{};  // by op, with reduce_per_op: its reduce-scatters' exposed share
  double unit_gathers = 0;               // every unit's all-gather once (for the step's totals)
  double unit_reduces = 0;               // every unit's reduce-scatter once
  bool any() const { return gather_time != 0 || reduce_time != 0 || parameter_bytes != 0 || gradient_bytes != 0; }

  // Per block, the one rule for which ops gather and reduce (the engine's times and the step's
  // totals both follow it): whether `op` gathers the stage's units, given `gathered`, whether they
  // all are now, which it updates to after the op.
  bool gathers_in(Op op, std::uint8_t& gathered) const {
    if (gathered != 0) return false;
    if (op == Op::kForward) {
      gathered = regather ? 0 : 1;
      return true;
    }
    if (op == Op::kBackwardWeight || !regather) return false;  // W needs activations and gradients only
    if (!reduce_per_op) gathered = 1;  // torch's pipelining keeps it gathered until REDUCE_GRAD
    return true;
  }
  // Whether `op` reduce-scatters its units' gradients as it goes (a stage alone).
  bool reduces_in(Op op) const { return reduce_per_op && (op == Op::kBackward || op == Op::kBackwardWeight); }
};

struct LinkParams {
  double latency = 0;                                          // time a message spends after leaving the link
  double bandwidth = std::numeric_limits<double>::infinity();  // bytes per time unit
};

class CostModel {
 public:
  virtual ~CostModel() = default;

  // Time of one op on one stage. I is B - W; implementations keep I + W == B.
  virtual double compute_time(Op op, int stage) const = 0;
  // Bytes a forward stashes for its backward (one micro-batch on one stage).
  virtual std::int64_t activation_bytes(int stage) const = 0;
  // The part of that stash W still needs after I has run; I frees the rest.
  virtual std::int64_t weight_stash_bytes(int stage) const = 0;
  // The stash fraction W keeps (the same on every stage), for peak_stashed in micro-batch units.
  virtual double weight_stash_fraction() const = 0;
  // Bytes sent between adjacent stages (the activation forward, its gradient backward).
  virtual std::int64_t message_bytes(int from_stage, int to_stage) const = 0;
  // Parameters, gradients and optimizer state resident on a device for the whole step.
  virtual std::int64_t static_bytes(int device) const = 0;
  virtual LinkParams link(int src_device, int dst_device) const = 0;

  // FSDP's collectives and unsharded buffers of a stage; by default none (not sharded).
  virtual ShardingCosts sharding(int /*stage*/) const { return {}; }

  // Time of an overlapped forward-and-backward op (OVERLAP_F_B): by default no gain, the sum of its
  // halves; a model may set a shorter time for kernels that really overlap (DualPipe's F&B).
  virtual double overlap_time(int forward_stage, Op backward_op, int backward_stage) const {
    return compute_time(Op::kForward, forward_stage) + compute_time(backward_op, backward_stage);
  }

  // Where the expert all-to-alls of an op fall inside it, for timelines (`partner`: the backward
  // half of an overlapped pair, else null): appended to `out` in order of start. Only asked for when
  // has_exchanges() says some op has any; by default none.
  virtual bool has_exchanges() const { return false; }
  virtual void exchanges(const Action& /*action*/, const Action* /*partner*/, std::vector<Exchange>& /*out*/) const {}
};

}  // namespace ppsim
