#pragma once
// The CUDA runtime calls of ncclbot-sweep, one function each, so the tests can put a CPU stand-in in
// their place (tests/ncclbot_sweep/standin_cuda.cpp) without clashing with the CUDA runtime that the
// library's kernels link. cuda_calls.cpp passes each straight to the runtime.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace ncclbot::sweep_tool::cuda {

cudaError_t set_device(int device);
cudaError_t stream_create(cudaStream_t* stream);
cudaError_t stream_destroy(cudaStream_t stream);
cudaError_t event_create(cudaEvent_t* event);
cudaError_t event_destroy(cudaEvent_t event);
cudaError_t event_record(cudaEvent_t event, cudaStream_t stream);
cudaError_t event_synchronize(cudaEvent_t event);
cudaError_t event_elapsed_ms(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t device_malloc(void** pointer, size_t bytes);
cudaError_t device_free(void* pointer);
cudaError_t copy(void* to, const void* from, size_t bytes, cudaMemcpyKind kind);
cudaError_t fill_bytes(void* pointer, int value, size_t bytes);
const char* error_string(cudaError_t error);

}  // namespace ncclbot::sweep_tool::cuda
