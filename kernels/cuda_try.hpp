#pragma once
// Host-side CUDA error handling for the kernels (cuCollections' CUCO_CUDA_TRY idiom): a failed
// runtime call throws std::runtime_error naming the call, the CUDA error and the file and line;
// the CLI reports it as one line with exit code 1.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace ncclbot {

inline void cuda_check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                             " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

#define NCCLBOT_CUDA_TRY(call) ::ncclbot::cuda_check((call), #call, __FILE__, __LINE__)

}  // namespace ncclbot
