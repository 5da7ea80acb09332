// The CPU-only build's answer to "is there a usable GPU": never, and it says why.
#include "ncclbot/core/cuda_probe.hpp"

#ifndef NCCLBOT_HAVE_CUDA
namespace ncclbot {
CudaProbe probe_cuda() {
  CudaProbe none;
  none.reason = "ncclbot was built without CUDA (nvcc not found at configure time)";
  return none;
}
int select_cuda_device(int) {
  return -1;
}
}  // namespace ncclbot
#endif
