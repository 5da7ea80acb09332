#pragma once
// Whether a CUDA device can actually run ncclbot's kernels here. Built from kernels/ when nvcc was
// found (it launches a one-thread kernel and checks its result), from a CPU-only file otherwise.
#include <string>

namespace ncclbot {

struct CudaProbe {
  int usable_devices = 0;
  std::string reason;  // why no device is usable ("built without CUDA", the CUDA error text, ...)
  std::string device_name;
  int multiprocessors = 0;     // of the current device (H200: 132); 0 when none is usable
  int compute_capability = 0;  // major * 10 + minor (H200: 90); 0 when none is usable
};

CudaProbe probe_cuda();

// One rank per GPU: the device a process with this node-local rank uses when `devices` are
// visible. Ranks beyond the device count share devices round-robin.
inline int device_for_local_rank(int local_rank, int devices) {
  return devices > 0 ? (local_rank < 0 ? 0 : local_rank) % devices : 0;
}

// Makes device_for_local_rank(local_rank, visible devices) the current CUDA device of this
// process, before any CUDA context exists; returns it, or -1 when there is no CUDA (or no device).
// With CUDA_VISIBLE_DEVICES narrowed to one device per rank (srun --gpus-per-task=1) it is 0.
int select_cuda_device(int local_rank);

}  // namespace ncclbot
