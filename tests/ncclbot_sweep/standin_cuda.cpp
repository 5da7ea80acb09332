// A stand-in for ncclbot-sweep's CUDA calls (tools/ncclbot_sweep/cuda_calls.hpp) on the CPU: "device"
// memory is host memory, streams do nothing, and events read the stand-in clock.
#include <cstdlib>
#include <cstring>

#include "cuda_calls.hpp"
#include "standin_clock.hpp"

namespace ncclbot::sweep_standin {

double& clock_us() {
  static double now = 0.0;
  return now;
}

namespace {

struct FakeEvent {
  double at_us = 0.0;
  bool recorded = false;
};

FakeEvent* fake(cudaEvent_t event) {
  return reinterpret_cast<FakeEvent*>(event);
}

}  // namespace
}  // namespace ncclbot::sweep_standin

namespace ncclbot::sweep_tool::cuda {

using sweep_standin::fake;

cudaError_t set_device(int device) {
  return device >= 0 ? cudaSuccess : cudaErrorInvalidDevice;
}
cudaError_t stream_create(cudaStream_t* stream) {
  static char the_stream;  // never dereferenced
  *stream = reinterpret_cast<cudaStream_t>(&the_stream);
  return cudaSuccess;
}
cudaError_t stream_destroy(cudaStream_t) {
  return cudaSuccess;
}
cudaError_t event_create(cudaEvent_t* event) {
  *event = reinterpret_cast<cudaEvent_t>(new sweep_standin::FakeEvent);
  return cudaSuccess;
}
cudaError_t event_destroy(cudaEvent_t event) {
  delete fake(event);
  return cudaSuccess;
}
cudaError_t event_record(cudaEvent_t event, cudaStream_t) {
  fake(event)->at_us = sweep_standin::clock_us();
  fake(event)->recorded = true;
  return cudaSuccess;
}
cudaError_t event_synchronize(cudaEvent_t event) {
  return fake(event)->recorded ? cudaSuccess : cudaErrorInvalidResourceHandle;
}
cudaError_t event_elapsed_ms(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!fake(start)->recorded || !fake(end)->recorded) return cudaErrorInvalidResourceHandle;
  *ms = float((fake(end)->at_us - fake(start)->at_us) / 1000.0);
  return cudaSuccess;
}
cudaError_t device_malloc(void** pointer, size_t bytes) {
  *pointer = std::malloc(bytes > 0 ? bytes : 1);
  return *pointer ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t device_free(void* pointer) {
  std::free(pointer);
  return cudaSuccess;
}
cudaError_t copy(void* to, const void* from, size_t bytes, cudaMemcpyKind) {
  std::memcpy(to, from, bytes);
  return cudaSuccess;
}
cudaError_t fill_bytes(void* pointer, int value, size_t bytes) {
  std::memset(pointer, value, bytes);
  return cudaSuccess;
}
const char* error_string(cudaError_t error) {
  return error == cudaSuccess ? "no error" : "stand-in CUDA error";
}

}  // namespace ncclbot::sweep_tool::cuda
