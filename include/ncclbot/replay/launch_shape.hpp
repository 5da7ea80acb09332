#pragma once
// Launch shapes of the replay kernels, as plain maths on the device's properties so the host can
// test them without a GPU (CUB-style tuning as plain data). A replay kernel is a grid-stride loop:
// each thread takes work items i, i + grid * block, ... until all are done. The grid is capped at
// what the device keeps resident at once (SMs x resident blocks per SM, from the occupancy
// calculator), so a launch is "persistent": no block waits for another to retire, and small jobs
// launch only the blocks they need. Results never depend on the shape (each item writes only its
// own outputs), only the speed does.
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ncclbot {

inline constexpr size_t kWarpThreads = 32;

struct DeviceShape {
  int multiprocessors = 0;         // cudaDevAttrMultiProcessorCount (H200: 132)
  int resident_blocks_per_sm = 0;  // cudaOccupancyMaxActiveBlocksPerMultiprocessor for the kernel
};

struct LaunchShape {
  int grid = 1;   // blocks
  int block = 1;  // threads per block
  int64_t threads() const { return int64_t(grid) * block; }
};

// Grid-stride shape for `items` independent work items with `block` threads per block.
// grid = min(ceil(items / block), multiprocessors * max(1, resident_blocks_per_sm)), at least 1.
inline LaunchShape grid_stride_shape(int64_t items, int block, const DeviceShape& device) {
  LaunchShape s;
  s.block = std::max(1, block);
  const int64_t needed = std::max<int64_t>(1, (std::max<int64_t>(0, items) + s.block - 1) / s.block);
  const int64_t resident =
      int64_t(std::max(1, device.multiprocessors)) * std::max(1, device.resident_blocks_per_sm);
  s.grid = int(std::min(needed, resident));
  return s;
}

// The threads per block a kernel can be launched with: `requested` when the kernel allows that many
// (cudaFuncAttributes::maxThreadsPerBlock, which its registers set: 65,536 per block on sm_90, so a
// kernel of 72 registers per thread, the delayed RandomPolicy's, allows 896, not 1,024), else the
// limit rounded down to whole warps (a partial warp would only idle lanes). Never more than the
// limit, and at least 1 when the limit is.
inline int block_within_kernel_limit(int requested, int max_threads_per_block) {
  if (requested <= max_threads_per_block) return requested;
  const int warp = int(kWarpThreads);
  return max_threads_per_block >= warp ? max_threads_per_block / warp * warp : max_threads_per_block;
}

// How many configs one launch replays so that its per-replay outputs (bytes_per_replay for each of
// the replays_per_config replays of a config) fit in `budget_bytes`; at least one config, at most
// `configs`. Larger jobs run as several launches, each aggregated before the next.
inline int configs_per_launch(int configs, int64_t replays_per_config, int64_t bytes_per_replay,
                              int64_t budget_bytes) {
  const int64_t per_config =
      std::max<int64_t>(1, replays_per_config) * std::max<int64_t>(1, bytes_per_replay);
  const int64_t fit = std::max<int64_t>(1, budget_bytes / per_config);
  return int(std::min<int64_t>(std::max(1, configs), fit));
}

}  // namespace ncclbot
