// Device side of curand_stream.hpp: cuRAND's documented API (curand_init, curand, curand4), not
// ncclbot's header, so the test compares two independent paths to the same stream.
#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <stdexcept>
#include <string>

#include "curand_stream.hpp"

namespace ncclbot::test {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <typename T>
T* to_device(const std::vector<T>& host) {
  T* d = nullptr;
  check(cudaMalloc(&d, host.size() * sizeof(T) + 1), "cudaMalloc");
  check(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

template <typename T>
std::vector<T> to_host(T* d, size_t n) {
  std::vector<T> host(n);
  check(cudaDeviceSynchronize(), "kernel");
  check(cudaMemcpy(host.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(d);
  return host;
}

__global__ void words_kernel(uint64_t seed, uint64_t subsequence, uint64_t offset, int count, uint32_t* out) {
  curandStatePhilox4_32_10_t state;
  curand_init(seed, subsequence, offset, &state);
  for (int i = 0; i < count; ++i) out[i] = curand(&state);
}

__global__ void blocks_kernel(uint64_t seed, const uint64_t* subsequences, const uint64_t* offsets, int n,
                              Philox4x32* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, subsequences[i], offsets[i], &state);
  const uint4 w = curand4(&state);
  out[i] = Philox4x32{{w.x, w.y, w.z, w.w}};
}

__global__ void philox_kernel(const Philox4x32* counters, const uint64_t* keys, int n, Philox4x32* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = philox4x32_10(counters[i], uint32_t(keys[i]), uint32_t(keys[i] >> 32));
}

}  // namespace

std::vector<uint32_t> curand_words(uint64_t seed, uint64_t subsequence, uint64_t offset, int count) {
  uint32_t* d = to_device(std::vector<uint32_t>(size_t(count)));
  words_kernel<<<1, 1>>>(seed, subsequence, offset, count, d);
  check(cudaGetLastError(), "words_kernel");
  return to_host(d, size_t(count));
}

std::vector<Philox4x32> curand4_blocks(uint64_t seed, const std::vector<uint64_t>& subsequences,
                                       const std::vector<uint64_t>& offsets) {
  const int n = int(subsequences.size());
  uint64_t* s = to_device(subsequences);
  uint64_t* o = to_device(offsets);
  Philox4x32* d = to_device(std::vector<Philox4x32>(size_t(n)));
  blocks_kernel<<<(n + 127) / 128, 128>>>(seed, s, o, n, d);
  check(cudaGetLastError(), "blocks_kernel");
  auto out = to_host(d, size_t(n));
  cudaFree(s);
  cudaFree(o);
  return out;
}

std::vector<Philox4x32> device_philox(const std::vector<Philox4x32>& counters,
                                      const std::vector<uint64_t>& keys) {
  const int n = int(counters.size());
  Philox4x32* c = to_device(counters);
  uint64_t* k = to_device(keys);
  Philox4x32* d = to_device(std::vector<Philox4x32>(size_t(n)));
  philox_kernel<<<(n + 127) / 128, 128>>>(c, k, n, d);
  check(cudaGetLastError(), "philox_kernel");
  auto out = to_host(d, size_t(n));
  cudaFree(c);
  cudaFree(k);
  return out;
}

}  // namespace ncclbot::test
