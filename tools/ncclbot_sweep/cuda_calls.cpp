#include "cuda_calls.hpp"

namespace ncclbot::sweep_tool::cuda {

cudaError_t set_device(int device) {
  return cudaSetDevice(device);
}
cudaError_t stream_create(cudaStream_t* stream) {
  return cudaStreamCreate(stream);
}
cudaError_t stream_destroy(cudaStream_t stream) {
  return cudaStreamDestroy(stream);
}
cudaError_t event_create(cudaEvent_t* event) {
  return cudaEventCreate(event);
}
cudaError_t event_destroy(cudaEvent_t event) {
  return cudaEventDestroy(event);
}
cudaError_t event_record(cudaEvent_t event, cudaStream_t stream) {
  return cudaEventRecord(event, stream);
}
cudaError_t event_synchronize(cudaEvent_t event) {
  return cudaEventSynchronize(event);
}
cudaError_t event_elapsed_ms(float* ms, cudaEvent_t start, cudaEvent_t end) {
  return cudaEventElapsedTime(ms, start, end);
}
cudaError_t device_malloc(void** pointer, size_t bytes) {
  return cudaMalloc(pointer, bytes);
}
cudaError_t device_free(void* pointer) {
  return cudaFree(pointer);
}
cudaError_t copy(void* to, const void* from, size_t bytes, cudaMemcpyKind kind) {
  return cudaMemcpy(to, from, bytes, kind);
}
cudaError_t fill_bytes(void* pointer, int value, size_t bytes) {
  return cudaMemset(pointer, value, bytes);
}
const char* error_string(cudaError_t error) {
  return cudaGetErrorString(error);
}

}  // namespace ncclbot::sweep_tool::cuda
