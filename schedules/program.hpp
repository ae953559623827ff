// SPDX-License-Identifier: Apache-2.0
#pragma once
// A schedule as data: which device holds each stage, and each device's ordered action list.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "schedules/action.hpp"
#include "schedules/comm_action.hpp"

namespace ppsim {

// The size of a schedule request: p devices, m micro-batches, v chunks (stages) per device.
struct ScheduleParams {
  int p = 4;
  int m = 8;
  int v = 1;
  // Megatron-LM's microbatch_group_size_per_vp_stage for interleaved-1f1b: how many micro-batches
  // pass through one chunk before the next chunk's turn. 0: the schedule's default (torch's rounds).
  int microbatch_group = 0;
  // Seq1F1B's sequence slices per micro-batch (thunlp/Seq1F1B's --pipe-sp-splits): each slice is a
  // schedulable unit. 0: the schedule's default; only seq1f1b takes it.
  int sequence_splits = 0;
};

// Independent pipelines side by side in one program: stages [k*S, (k+1)*S) form pipeline k, S being
// the stages over the pipelines. Each pipeline's first stage reads its own micro-batches and its last
// owns their loss; nothing flows between pipelines. DualPipe's two directions are two pipelines over
// the same S layer stages: stage k*S + j is a replica of stage j's layers (its logical stage), on
// another device, and the replicas' gradients are summed at the end of the step.
struct PipelineShape {
  int stages = 0;
  int pipelines = 1;

  int length() const { return stages / pipelines; }
  bool first(int stage) const { return stage % length() == 0; }
  bool last(int stage) const { return (stage + 1) % length() == 0; }
  int logical(int stage) const { return stage % length(); }
};

struct Program {
  int num_devices = 0;
  // Per pipeline: every stage runs micro-batches 0..num_microbatches-1, so a step of a program with
  // two pipelines carries twice as many (microbatches_per_step).
  int num_microbatches = 0;
  int num_pipelines = 1;
  // How an overlapped pair holds memory. false: its forward's stash is allocated when the pair starts
  // and its backward's freed when it ends, as torch's runtime runs OVERLAP_F_B's halves one after the
  // other and DualPipe's memory table counts it (PP + 1 stashes). true: the halves interleave layer
  // by layer, the backward freeing each layer as the forward fills one (Megatron's combined 1F1B,
  // model_chunk_schedule_plan.py), so the pair frees the backward's stash before it adds the
  // forward's.
  bool layerwise_pairs = false;
  // Schedulable units per micro-batch: Seq1F1B's k sequence slices, each a program micro-batch
  // (num_microbatches counts units), each costing 1/k of a micro-batch.
  int units_per_microbatch = 1;
  std::vector<int> stage_device;             // stage -> device that computes it
  std::vector<std::vector<Action>> actions;  // device -> actions in execution order
  // torch's lowered format: device -> its communication and FSDP actions in order, each before the
  // compute action at its `before` (== size: after the last). Empty for a compute-only program;
  // validate_comm_actions checks them, and the engine honours sends and receives as ordering points.
  std::vector<std::vector<CommAction>> comms;

  int num_stages() const { return static_cast<int>(stage_device.size()); }
  int microbatches_per_step() const { return num_microbatches * num_pipelines / units_per_microbatch; }
  PipelineShape pipeline_shape() const { return {num_stages(), num_pipelines}; }
  std::size_t num_ops() const;
};

// A program of `p` devices and `m` micro-batches on `stage_device`, whose device d's list is filled by
// fill(d, list); each list reserves `ops_per_device`. The shell every schedule's constructor shares.
template <typename Fill>
Program make_program(int p, int m, std::vector<int> stage_device, std::size_t ops_per_device, Fill fill) {
  Program program;
  program.num_devices = p;
  program.num_microbatches = m;
  program.stage_device = std::move(stage_device);
  program.actions.resize(static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d) {
    auto& list = program.actions[static_cast<std::size_t>(d)];
    list.reserve(ops_per_device);
    fill(d, list);
  }
  return program;
}

// Stage s on device s % p (Megatron-LM's interleaved placement; v = 1 is plain pipelining).
std::vector<int> loop_stage_mapping(int p, int v);

// Device d holds stages d and 2p-1-d, so the first and last stage share device 0 (ZB-V, DualPipeV).
std::vector<int> v_stage_mapping(int p);

// Two pipelines over p stages each in opposite directions (DualPipe, Chimera): stage j of the first
// on device j, stage j of the second (program stage p + j) on device p-1-j.
std::vector<int> bidirectional_stage_mapping(int p);

}  // namespace ppsim
