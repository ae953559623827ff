// SPDX-License-Identifier: Apache-2.0
#include "tools/calibrate/cpu_collectives.hpp"

#include <algorithm>
#include <chrono>

namespace ppsim::calibrate {

CpuCollectiveGroup::CpuCollectiveGroup(int ranks, std::int64_t elements)
    : ranks_(ranks),
      chunk_(elements / ranks),
      data_(static_cast<std::size_t>(ranks), std::vector<float>(static_cast<std::size_t>(elements), 1.0f)),
      output_(static_cast<std::size_t>(ranks), std::vector<float>(static_cast<std::size_t>(elements), 0.0f)),
      start_(ranks + 1),
      step_(ranks),
      done_(ranks + 1) {
  for (int r = 0; r < ranks; ++r) threads_.emplace_back([this, r] { worker(r); });
}

CpuCollectiveGroup::~CpuCollectiveGroup() {
  stop_ = true;  // seen by the workers after the barrier below (a barrier orders memory)
  start_.arrive_and_wait();
  for (std::thread& thread : threads_) thread.join();
}

void CpuCollectiveGroup::fill(int rank, float first) {
  std::vector<float>& buffer = data_[static_cast<std::size_t>(rank)];
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = first + static_cast<float>(i);
}

double CpuCollectiveGroup::run(Collective op) {
  op_ = op;
  const auto begin = std::chrono::steady_clock::now();
  start_.arrive_and_wait();
  done_.arrive_and_wait();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

void CpuCollectiveGroup::worker(int rank) {
  while (true) {
    start_.arrive_and_wait();
    if (stop_) return;
    switch (op_) {
      case Collective::kAllReduce:
        reduce_scatter(rank);
        all_gather(rank);
        break;
      case Collective::kReduceScatter:
        reduce_scatter(rank);
        break;
      case Collective::kAllGather:
        all_gather(rank);
        break;
      case Collective::kAllToAll:
        all_to_all(rank);
        break;
    }
    done_.arrive_and_wait();
  }
}

void CpuCollectiveGroup::reduce_scatter(int rank) {
  const int left = (rank + ranks_ - 1) % ranks_;
  float* mine = data_[static_cast<std::size_t>(rank)].data();
  const float* theirs = data_[static_cast<std::size_t>(left)].data();
  for (int k = 0; k + 1 < ranks_; ++k) {
    const std::int64_t at = ((rank - k - 1 + 2 * ranks_) % ranks_) * chunk_;
    for (std::int64_t i = at; i < at + chunk_; ++i) mine[i] += theirs[i];
    step_.arrive_and_wait();
  }
}

void CpuCollectiveGroup::all_gather(int rank) {
  const int left = (rank + ranks_ - 1) % ranks_;
  float* mine = data_[static_cast<std::size_t>(rank)].data();
  const float* theirs = data_[static_cast<std::size_t>(left)].data();
  for (int k = 0; k + 1 < ranks_; ++k) {
    const std::int64_t at = ((rank - k + ranks_) % ranks_) * chunk_;
    std::copy(theirs + at, theirs + at + chunk_, mine + at);
    step_.arrive_and_wait();
  }
}

void CpuCollectiveGroup::all_to_all(int rank) {
  float* out = output_[static_cast<std::size_t>(rank)].data();
  for (int j = 0; j < ranks_; ++j) {
    const float* in = data_[static_cast<std::size_t>(j)].data() + rank * chunk_;
    std::copy(in, in + chunk_, out + j * chunk_);
  }
}

}  // namespace ppsim::calibrate
