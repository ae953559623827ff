// SPDX-License-Identifier: Apache-2.0
#include "tools/calibrate/backend.hpp"

namespace ppsim::calibrate {

std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp32:
      return "fp32";
  }
  return "?";
}

std::optional<Precision> parse_precision(std::string_view text) {
  for (Precision p : {Precision::kBf16, Precision::kFp16, Precision::kTf32, Precision::kFp32}) {
    if (text == precision_name(p)) return p;
  }
  return std::nullopt;
}

std::string_view memory_kernel_name(MemoryKernel kernel) {
  switch (kernel) {
    case MemoryKernel::kCopy:
      return "copy";
    case MemoryKernel::kRmsNorm:
      return "rmsnorm";
    case MemoryKernel::kLayerNorm:
      return "layernorm";
    case MemoryKernel::kGelu:
      return "gelu";
    case MemoryKernel::kSwiglu:
      return "swiglu";
    case MemoryKernel::kSoftmaxForward:
      return "softmax_forward";
    case MemoryKernel::kSoftmaxBackward:
      return "softmax_backward";
    case MemoryKernel::kAdam:
      return "adam";
  }
  return "?";
}

double memory_kernel_bytes(MemoryKernel kernel, const MemoryShape& shape, int element_bytes) {
  const double n = static_cast<double>(shape.elements());
  const double e = element_bytes;
  switch (kernel) {
    case MemoryKernel::kCopy:
    case MemoryKernel::kRmsNorm:
    case MemoryKernel::kLayerNorm:
    case MemoryKernel::kGelu:
    case MemoryKernel::kSoftmaxForward:
      return 2 * n * e;  // read x, write y
    case MemoryKernel::kSwiglu:
      return 3 * n * e;  // read gate and up, write y; n counts outputs
    case MemoryKernel::kSoftmaxBackward:
      return 3 * n * e;  // read y and dy, write dx
    case MemoryKernel::kAdam:
      return 28 * n;  // FP32: read param, grad, m, v; write param, m, v
  }
  return 0;
}

}  // namespace ppsim::calibrate
