// SPDX-License-Identifier: Apache-2.0
#pragma once
// Status checks for every CUDA runtime and cuBLAS call: a failure throws std::runtime_error naming
// the call as written in the source, and the library's name and text for the status.

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace ppsim::calibrate::cuda {

inline void check_cuda(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                           cudaGetErrorString(status) + ")");
}

inline void check_cublas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw std::runtime_error(std::string(call) + " failed: " + cublasGetStatusName(status) + " (" +
                           cublasGetStatusString(status) + ")");
}

// A kernel launch reports a bad configuration through cudaGetLastError.
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

}  // namespace ppsim::calibrate::cuda

// The call's text is the message, so it must be spelled out at the call site: hence macros.
#define PPSIM_CUDA(call) ::ppsim::calibrate::cuda::check_cuda((call), #call)
#define PPSIM_CUBLAS(call) ::ppsim::calibrate::cuda::check_cublas((call), #call)
