// SPDX-License-Identifier: Apache-2.0
#pragma once
// torch.distributed.pipelining's lowering of a compute-only schedule into the schedule its runtime
// runs (_PipelineScheduleRuntime._prepare_schedule_with_comms with format "compute_only", in
// torch/distributed/pipelining/schedules.py), so that `ppsim export --lowered` writes what torch's
// _dump_csv writes by default and _load_csv(format="compute_comms") reads:
//   1. per device, _add_unshard_reshard (max_active_stages = 3): before each action, UNSHARD the
//      next three distinct stages the device will compute that are not yet unsharded, after a
//      RESHARD of each unsharded stage not among them; RESHARD what is left at the end;
//   2. per device, _add_reduce_grad: REDUCE_GRAD of a stage right after the action that completes
//      its m-th B or W;
//   3. over all devices, _add_send_recv: devices are visited in turn (0, 1, ..., p-1, again), each
//      taking its next action once its input is there (its RECV, or the producing op on the same
//      device); an F or B/I whose output crosses devices is followed by its SEND, and its RECV is
//      appended to the receiving device's list at that moment.
// Where several stages are resharded at one step, torch lists them in its Python set's order; here
// in ascending order, which is the same whenever the stages involved are numbered below 8 (small
// integers sit in a set's table at their own value).

#include "schedules/program.hpp"

namespace ppsim {

// `program` must be compute-only and valid (validate_program). Its compute lists stay as they are;
// the result's comms hold what the passes add. Throws std::runtime_error when no device can take its
// next action (torch's "Malformed compute schedule, can't schedule sends/recvs").
Program lower_like_torch(const Program& program);

}  // namespace ppsim
