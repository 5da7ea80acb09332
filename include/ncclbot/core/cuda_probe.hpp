#pragma once
// Whether a CUDA device can actually run ncclbot's kernels here. Built from kernels/ when nvcc was
// found (it launches a one-thread kernel and checks its result), from a CPU-only file otherwise.
#include <string>

namespace ncclbot {

struct CudaProbe {
  int usable_devices = 0;
  std::string reason;  // why no device is usable ("built without CUDA", the CUDA error text, ...)
  std::string device_name;
};

CudaProbe probe_cuda();

}  // namespace ncclbot
