#pragma once
// Host-side CUDA error handling for the kernels (cuCollections' CUCO_CUDA_TRY idiom): a failed
// runtime call throws std::runtime_error naming the call, the CUDA error and the file and line;
// the CLI reports it as one line with exit code 1. DeviceBuffer owns one cudaMalloc allocation.
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace ncclbot {

inline void cuda_check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                             " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

#define NCCLBOT_CUDA_TRY(call) ::ncclbot::cuda_check((call), #call, __FILE__, __LINE__)

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count > 0) NCCLBOT_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
  }
  DeviceBuffer(const T* host, size_t count) : DeviceBuffer(count) {
    if (count > 0) NCCLBOT_CUDA_TRY(cudaMemcpy(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) { o.ptr_ = nullptr, o.count_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  // Copies `count` elements from offset `first` back into host memory.
  void copy_to_host(T* host, size_t count, size_t first = 0) const {
    if (count > 0)
      NCCLBOT_CUDA_TRY(cudaMemcpy(host, ptr_ + first, count * sizeof(T), cudaMemcpyDeviceToHost));
  }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

}  // namespace ncclbot
