// SPDX-License-Identifier: Apache-2.0
#pragma once
// NCCL collectives among the GPUs of this node, timed for the profile's "collectives" tables
// (models/hardware/collectives.hpp). One process drives every GPU, as nccl-tests' single-process
// mode does: ncclCommInitAll over the first n GPUs, one stream and one pair of buffers per GPU, the
// n ranks' calls in one ncclGroupStart/ncclGroupEnd. A run is timed on the host from the group's
// launch to every stream having finished, which is how nccl-tests reports its times too. All-to-all
// is NCCL's grouped ncclSend/ncclRecv to every peer (NCCL has no all-to-all call of its own).
// Data are fp32; a collective's bus bandwidth does not depend on the element type.
//
// Built only where CMake finds nccl.h and libnccl beside the CUDA toolkit (PPSIM_CALIBRATE_HAVE_NCCL).

#include <cstdint>
#include <map>
#include <memory>

#include "models/hardware/collectives.hpp"
#include "tools/calibrate/backend.hpp"

namespace ppsim::calibrate {

class NcclCollectives {
 public:
  explicit NcclCollectives(const MeasureOptions& options);
  ~NcclCollectives();
  NcclCollectives(const NcclCollectives&) = delete;
  NcclCollectives& operator=(const NcclCollectives&) = delete;

  // One collective on a `bytes` tensor among GPUs 0 .. ranks - 1 (bytes a multiple of 4 * ranks).
  Spread time(Collective op, int ranks, std::int64_t bytes);
  static int version();  // ncclGetVersion, e.g. 22105 for 2.21.5

 private:
  struct Group;
  Group& group(int ranks);
  MeasureOptions options_;
  std::map<int, std::unique_ptr<Group>> groups_;
};

}  // namespace ppsim::calibrate
