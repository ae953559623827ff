#pragma once
// A schedule as data: which device holds each stage, and each device's ordered action list.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "schedules/action.hpp"

namespace ppsim {

// The size of a schedule request: p devices, m micro-batches, v chunks (stages) per device.
struct ScheduleParams {
  int p = 4;
  int m = 8;
  int v = 1;
};

struct Program {
  int num_devices = 0;
  int num_microbatches = 0;
  std::vector<int> stage_device;             // stage -> device that computes it
  std::vector<std::vector<Action>> actions;  // device -> actions in execution order

  int num_stages() const { return static_cast<int>(stage_device.size()); }
  std::size_t num_ops() const;
};

// Stage s on device s % p (Megatron-LM's interleaved placement; v = 1 is plain pipelining).
std::vector<int> loop_stage_mapping(int p, int v);

// Device d holds stages d and 2p-1-d, so the first and last stage share device 0 (ZB-V, DualPipeV).
std::vector<int> v_stage_mapping(int p);

}  // namespace ppsim
