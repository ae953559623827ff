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
};

struct Program {
  int num_devices = 0;
  int num_microbatches = 0;
  std::vector<int> stage_device;             // stage -> device that computes it
  std::vector<std::vector<Action>> actions;  // device -> actions in execution order
  // torch's lowered format: device -> its communication and FSDP actions in order, each before the
  // compute action at its `before` (== size: after the last). Empty for a compute-only program;
  // validate_comm_actions checks them, and the engine honours sends and receives as ordering points.
  std::vector<std::vector<CommAction>> comms;

  int num_stages() const { return static_cast<int>(stage_device.size()); }
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

}  // namespace ppsim
