// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the engine asks of a cost model: op times, stash and message sizes, static memory and links.
// Cost models answer queries and hold no simulation state; the engine reads each answer once per
// stage before a run, so implementations need not be fast.

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
  double gather_time = 0;             // UNSHARD's all-gather of the stage's parameters
  double reduce_time = 0;             // REDUCE_GRAD's reduce-scatter of its accumulated gradients
  std::int64_t parameter_bytes = 0;   // unsharded parameters, held from UNSHARD to RESHARD
  std::int64_t gradient_bytes = 0;    // unsharded gradients, from the first B or W to REDUCE_GRAD
  bool any() const { return gather_time != 0 || reduce_time != 0 || parameter_bytes != 0 || gradient_bytes != 0; }
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
