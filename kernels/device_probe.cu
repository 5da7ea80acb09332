// A device is "usable" only if a kernel launched on it runs and writes back the expected value;
// cudaGetDeviceCount alone succeeds on machines whose driver cannot run sm_90 code.
#include <cuda_runtime.h>

#include "ncclbot/core/cuda_probe.hpp"

namespace ncclbot {
namespace {

__global__ void write_marker(int* out) {
  *out = 0x6e63636c;
}

std::string error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

}  // namespace

CudaProbe probe_cuda() {
  CudaProbe probe;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    probe.reason = error_text(e);
    return probe;
  }
  if (count == 0) {
    probe.reason = "no CUDA device found";
    return probe;
  }
  int* marker = nullptr;
  if ((e = cudaMalloc(&marker, sizeof(int))) != cudaSuccess) {
    probe.reason = error_text(e);
    return probe;
  }
  write_marker<<<1, 1>>>(marker);
  int host = 0;
  e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaMemcpy(&host, marker, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(marker);
  if (e != cudaSuccess || host != 0x6e63636c) {
    probe.reason = e != cudaSuccess ? error_text(e) : "test kernel did not run";
    return probe;
  }
  cudaDeviceProp prop{};
  int current = 0;
  if (cudaGetDevice(&current) == cudaSuccess && cudaGetDeviceProperties(&prop, current) == cudaSuccess) {
    probe.device_name = prop.name;
    probe.multiprocessors = prop.multiProcessorCount;
    probe.compute_capability = prop.major * 10 + prop.minor;
  }
  probe.usable_devices = count;
  return probe;
}

int select_cuda_device(int local_rank) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return -1;
  const int device = device_for_local_rank(local_rank, count);
  return cudaSetDevice(device) == cudaSuccess ? device : -1;
}

}  // namespace ncclbot
