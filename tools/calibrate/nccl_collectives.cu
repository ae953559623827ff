// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/calibrate/cuda_check.cuh"
#include "tools/calibrate/measure.hpp"
#include "tools/calibrate/nccl_collectives.cuh"

namespace ppsim::calibrate {
namespace {

void check_nccl(ncclResult_t status, const char* call) {
  if (status == ncclSuccess) return;
  throw std::runtime_error(std::string(call) + " failed: " + ncclGetErrorString(status));
}

#define PPSIM_NCCL(call) check_nccl((call), #call)

}  // namespace

// The communicators, streams and buffers of one group size, kept for the whole run: creating a
// communicator costs far more than any collective it times.
struct NcclCollectives::Group {
  int ranks = 0;
  std::vector<ncclComm_t> comms;     // null until created
  std::vector<cudaStream_t> streams;  // null until created
  std::vector<void*> send;
  std::vector<void*> recv;
  std::size_t capacity = 0;  // bytes of each buffer

  explicit Group(int n) : ranks(n), comms(static_cast<std::size_t>(n)), streams(static_cast<std::size_t>(n)),
                          send(static_cast<std::size_t>(n), nullptr), recv(static_cast<std::size_t>(n), nullptr) {
    std::vector<int> devices(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) devices[static_cast<std::size_t>(i)] = i;
    PPSIM_NCCL(ncclCommInitAll(comms.data(), n, devices.data()));
    try {
      for (int i = 0; i < n; ++i) {
        PPSIM_CUDA(cudaSetDevice(i));
        PPSIM_CUDA(cudaStreamCreateWithFlags(&streams[static_cast<std::size_t>(i)], cudaStreamNonBlocking));
      }
      PPSIM_CUDA(cudaSetDevice(0));
    } catch (...) {
      destroy();  // a constructor that throws runs no destructor
      throw;
    }
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ~Group() { destroy(); }

  void destroy() {
    release();
    for (int i = 0; i < ranks; ++i) {
      cudaSetDevice(i);
      if (streams[static_cast<std::size_t>(i)] != nullptr) cudaStreamDestroy(streams[static_cast<std::size_t>(i)]);
      if (comms[static_cast<std::size_t>(i)] != nullptr) ncclCommDestroy(comms[static_cast<std::size_t>(i)]);
      streams[static_cast<std::size_t>(i)] = nullptr;
      comms[static_cast<std::size_t>(i)] = nullptr;
    }
    cudaSetDevice(0);
  }

  void release() {
    for (int i = 0; i < ranks; ++i) {
      cudaSetDevice(i);
      if (send[static_cast<std::size_t>(i)] != nullptr) cudaFree(send[static_cast<std::size_t>(i)]);
      if (recv[static_cast<std::size_t>(i)] != nullptr) cudaFree(recv[static_cast<std::size_t>(i)]);
      send[static_cast<std::size_t>(i)] = recv[static_cast<std::size_t>(i)] = nullptr;
    }
    capacity = 0;
  }

  // Buffers of at least `bytes` on every GPU, filled with non-zero bytes.
  void reserve(std::size_t bytes) {
    if (bytes <= capacity) return;
    release();
    for (int i = 0; i < ranks; ++i) {
      PPSIM_CUDA(cudaSetDevice(i));
      PPSIM_CUDA(cudaMalloc(&send[static_cast<std::size_t>(i)], bytes));
      PPSIM_CUDA(cudaMalloc(&recv[static_cast<std::size_t>(i)], bytes));
      PPSIM_CUDA(cudaMemset(send[static_cast<std::size_t>(i)], 0x3c, bytes));  // fp32 ~0.0115, finite
      PPSIM_CUDA(cudaMemset(recv[static_cast<std::size_t>(i)], 0x3c, bytes));
      PPSIM_CUDA(cudaDeviceSynchronize());
    }
    PPSIM_CUDA(cudaSetDevice(0));
    capacity = bytes;
  }

  // Launches one collective on every rank and waits for all of them; returns the host's seconds.
  double run(Collective op, std::int64_t bytes) {
    const auto count = static_cast<std::size_t>(bytes / 4);  // fp32 elements of the whole tensor
    const std::size_t share = count / static_cast<std::size_t>(ranks);
    const auto begin = std::chrono::steady_clock::now();
    PPSIM_NCCL(ncclGroupStart());
    try {
      enqueue(op, count, share);
    } catch (...) {
      ncclGroupEnd();  // leave no group open behind a failed call
      throw;
    }
    PPSIM_NCCL(ncclGroupEnd());
    for (int i = 0; i < ranks; ++i) {
      PPSIM_CUDA(cudaSetDevice(i));
      PPSIM_CUDA(cudaStreamSynchronize(streams[static_cast<std::size_t>(i)]));
    }
    PPSIM_CUDA(cudaSetDevice(0));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  }

  // Every rank's call of one collective, inside the caller's group.
  void enqueue(Collective op, std::size_t count, std::size_t share) {
    for (int i = 0; i < ranks; ++i) {
      const auto r = static_cast<std::size_t>(i);
      switch (op) {
        case Collective::kAllReduce:
          PPSIM_NCCL(ncclAllReduce(send[r], recv[r], count, ncclFloat32, ncclSum, comms[r], streams[r]));
          break;
        case Collective::kReduceScatter:  // the whole tensor in, this rank's share out
          PPSIM_NCCL(ncclReduceScatter(send[r], recv[r], share, ncclFloat32, ncclSum, comms[r], streams[r]));
          break;
        case Collective::kAllGather:  // this rank's share in, the whole tensor out
          PPSIM_NCCL(ncclAllGather(send[r], recv[r], share, ncclFloat32, comms[r], streams[r]));
          break;
        case Collective::kAllToAll:
          for (int peer = 0; peer < ranks; ++peer) {
            const std::size_t offset = static_cast<std::size_t>(peer) * share * 4;
            PPSIM_NCCL(ncclSend(static_cast<char*>(send[r]) + offset, share, ncclFloat32, peer, comms[r], streams[r]));
            PPSIM_NCCL(ncclRecv(static_cast<char*>(recv[r]) + offset, share, ncclFloat32, peer, comms[r], streams[r]));
          }
          break;
      }
    }
  }
};

NcclCollectives::NcclCollectives(const MeasureOptions& options) : options_(options) {}

NcclCollectives::~NcclCollectives() = default;

NcclCollectives::Group& NcclCollectives::group(int ranks) {
  auto& slot = groups_[ranks];
  if (!slot) slot = std::make_unique<Group>(ranks);
  return *slot;
}

Spread NcclCollectives::time(Collective op, int ranks, std::int64_t bytes) {
  // Only one group holds buffers at a time: GPU 0 is in every group, and each keeps two tensors.
  for (auto& [size, other] : groups_) {
    if (size != ranks) other->release();
  }
  Group& g = group(ranks);
  g.reserve(static_cast<std::size_t>(bytes));
  return measure(options_, [&] { return g.run(op, bytes); });
}

int NcclCollectives::version() {
  int value = 0;
  PPSIM_NCCL(ncclGetVersion(&value));
  return value;
}

}  // namespace ppsim::calibrate
