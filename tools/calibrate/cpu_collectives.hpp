// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CPU backend's stand-in for NCCL: ring collectives among `ranks` threads over shared memory,
// each thread one "device" with its own buffer. They are real collectives, timed like NCCL's, so the
// path from a measured collective to a profile's "collectives" table to the cost model runs in CI;
// the figures describe this CPU's memory system and thread synchronisation, not a GPU network.
//
// Algorithms (the ring ones NCCL uses inside a node; n ranks, the tensor in n chunks):
//   reduce-scatter: n - 1 steps; at step k rank r adds its left neighbour's chunk (r - k - 1) mod n
//     into its own copy of that chunk; rank r ends with the sum of chunk (r + 1) mod n.
//   all-gather: n - 1 steps; rank r starts owning chunk (r + 1) mod n and at step k copies chunk
//     (r - k) mod n from its left neighbour.
//   all-reduce: reduce-scatter, then all-gather.
//   all-to-all: rank r copies chunk r of every rank's input into slot j of its output.
// Between steps the threads meet at a barrier, so no rank reads a chunk its neighbour is writing.

#include <barrier>
#include <cstdint>
#include <thread>
#include <vector>

#include "models/hardware/collectives.hpp"

namespace ppsim::calibrate {

class CpuCollectiveGroup {
 public:
  // `ranks` >= 2 worker threads with buffers of `elements` floats each (a multiple of ranks).
  CpuCollectiveGroup(int ranks, std::int64_t elements);
  ~CpuCollectiveGroup();
  CpuCollectiveGroup(const CpuCollectiveGroup&) = delete;
  CpuCollectiveGroup& operator=(const CpuCollectiveGroup&) = delete;

  // Seconds of one collective, from releasing the workers to the last of them finishing.
  double run(Collective op);

  // Rank r's buffer (the all-to-all's output for kAllToAll), for tests of the algorithms.
  const std::vector<float>& data(int rank) const { return data_[static_cast<std::size_t>(rank)]; }
  const std::vector<float>& output(int rank) const { return output_[static_cast<std::size_t>(rank)]; }
  void fill(int rank, float first);  // rank's buffer := first, first + 1, ...

 private:
  void worker(int rank);
  void reduce_scatter(int rank);
  void all_gather(int rank);
  void all_to_all(int rank);

  int ranks_;
  std::int64_t chunk_;
  std::vector<std::vector<float>> data_;
  std::vector<std::vector<float>> output_;
  Collective op_ = Collective::kAllReduce;
  bool stop_ = false;
  std::barrier<> start_;  // the workers and the caller: a run begins
  std::barrier<> step_;   // the workers: a ring step is done everywhere
  std::barrier<> done_;   // the workers and the caller: the run is over
  std::vector<std::thread> threads_;
};

}  // namespace ppsim::calibrate
