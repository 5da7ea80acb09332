#pragma once
// Device memory and the stream it is ordered on, for the replay engine's calls (kernels/replay.cu):
//   - DeviceStream: one non-blocking stream per call; every copy, kernel, Thrust and CUB call of
//     that call is issued on it (nothing on the legacy default stream, so calls on several host
//     threads do not serialise on it);
//   - DeviceBuffer: a stream-ordered allocation (cudaMallocAsync / cudaFreeAsync) from the
//     device's default memory pool, which keeps freed memory for the next call instead of
//     returning it to the driver (pool_memory_between_calls), so a study's many small replay calls
//     stop paying cudaMalloc and cudaFree;
//   - StreamAllocator: Thrust's temporary storage from the same pool on the same stream;
//   - DeviceEvent: a point on a stream, for other streams to wait on or for timing.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <utility>

#include "cuda_try.hpp"

namespace ncclbot {

// The current device's default pool keeps what is freed (release threshold: never), once per device.
inline void pool_memory_between_calls() {
  static std::mutex mu;
  static std::set<int> done;
  int device = 0;
  NCCLBOT_CUDA_TRY(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  if (done.count(device)) return;
  cudaMemPool_t pool;
  NCCLBOT_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t keep = UINT64_MAX;
  NCCLBOT_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  done.insert(device);
}

class DeviceStream {
 public:
  DeviceStream() {
    pool_memory_between_calls();
    NCCLBOT_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;
  ~DeviceStream() {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  cudaStream_t get() const { return stream_; }
  void synchronize() const { NCCLBOT_CUDA_TRY(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// An event recorded on a stream when constructed: the point other streams wait for, or one end of a
// timed span (cudaEventElapsedTime).
class DeviceEvent {
 public:
  explicit DeviceEvent(cudaStream_t stream) {
    NCCLBOT_CUDA_TRY(cudaEventCreate(&event_));
    NCCLBOT_CUDA_TRY(cudaEventRecord(event_, stream));
  }
  DeviceEvent(const DeviceEvent&) = delete;
  DeviceEvent& operator=(const DeviceEvent&) = delete;
  ~DeviceEvent() { cudaEventDestroy(event_); }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// One stream-ordered allocation of `count` elements; freed on its stream, which must outlive it.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer(size_t count, cudaStream_t stream) : count_(count), stream_(stream) {
    if (count > 0)
      NCCLBOT_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&ptr_), count * sizeof(T), stream));
  }
  // A copy of `count` host elements (the host array may be reused once this returns).
  DeviceBuffer(const T* host, size_t count, cudaStream_t stream) : DeviceBuffer(count, stream) {
    if (count > 0)
      NCCLBOT_CUDA_TRY(cudaMemcpyAsync(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_) cudaFreeAsync(ptr_, stream_);
  }
  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  // Copies `count` elements from offset `first` back into host memory, once the stream's earlier
  // work is done.
  void copy_to_host(T* host, size_t count, size_t first = 0) const {
    if (count == 0) return;
    NCCLBOT_CUDA_TRY(cudaMemcpyAsync(host, ptr_ + first, count * sizeof(T), cudaMemcpyDeviceToHost, stream_));
    NCCLBOT_CUDA_TRY(cudaStreamSynchronize(stream_));
  }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
  cudaStream_t stream_ = nullptr;
};

// Thrust's temporary storage (thrust::cuda::par_nosync(allocator).on(stream)) from the pool.
struct StreamAllocator {
  using value_type = char;
  cudaStream_t stream;
  char* allocate(std::ptrdiff_t bytes) {
    void* p = nullptr;
    NCCLBOT_CUDA_TRY(cudaMallocAsync(&p, size_t(bytes), stream));
    return static_cast<char*>(p);
  }
  void deallocate(char* p, size_t) { cudaFreeAsync(p, stream); }
};

}  // namespace ncclbot
