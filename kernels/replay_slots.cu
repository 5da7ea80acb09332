// The replay kernels of every registered policy with one arm per algorithm and protocol slot
// (kNumArms), their state in shared memory (replay_kernel.cuh).
#include "replay_kernel.cuh"

namespace ncclbot::replay_kernels {

void enqueue_slot_replays(PolicyKind kind, const ReplayKernelArgs& a, const PolicyConfig* configs, int first,
                          int count, int block, int max_grid, cudaStream_t stream, LaunchShape* shape) {
  enqueue_replays_at<kNumArms>(kind, a, configs, first, count, block, max_grid, stream, shape);
}

}  // namespace ncclbot::replay_kernels
