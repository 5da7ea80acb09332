// The replay kernels of every registered policy on knob sweeps (kKnobReplayArms arms per context),
// their state in local memory (replay_kernel.cuh).
#include "replay_kernel.cuh"

namespace ncclbot::replay_kernels {

void enqueue_knob_replays(PolicyKind kind, const ReplayKernelArgs& a, const PolicyConfig* configs, int first,
                          int count, int block, int max_grid, cudaStream_t stream, LaunchShape* shape) {
  enqueue_replays_at<kKnobReplayArms>(kind, a, configs, first, count, block, max_grid, stream, shape);
}

}  // namespace ncclbot::replay_kernels
