// Launch-shape maths of the replay kernels (replay/launch_shape.hpp), checked by hand: the grid
// covers the work or fills the device, never more; config chunks fit the scratch budget.
#include "ncclbot/replay/launch_shape.hpp"

#include <gtest/gtest.h>

using namespace ncclbot;

TEST(LaunchShape, SmallJobsLaunchOnlyTheBlocksTheyNeed) {
  const DeviceShape h200{132, 8};  // 132 SMs, 8 resident blocks of the kernel per SM
  // 1000 items / 128 per block = 7.8 -> 8 blocks
  EXPECT_EQ(grid_stride_shape(1000, 128, h200).grid, 8);
  EXPECT_EQ(grid_stride_shape(1000, 128, h200).block, 128);
  EXPECT_EQ(grid_stride_shape(1024, 128, h200).grid, 8);
  EXPECT_EQ(grid_stride_shape(1025, 128, h200).grid, 9);
  EXPECT_EQ(grid_stride_shape(1, 128, h200).grid, 1);
  EXPECT_EQ(grid_stride_shape(0, 128, h200).grid, 1);  // a launch always has a block
}

TEST(LaunchShape, LargeJobsArePersistentAtFullOccupancy) {
  const DeviceShape h200{132, 8};
  // 10^9 items would need 7812500 blocks; the device keeps 132 * 8 = 1056 resident.
  const LaunchShape s = grid_stride_shape(1000000000, 128, h200);
  EXPECT_EQ(s.grid, 1056);
  EXPECT_EQ(s.threads(), 1056 * 128);
  // Occupancy 0 (a kernel too big for one block per SM) still launches one block per SM.
  EXPECT_EQ(grid_stride_shape(1000000000, 256, DeviceShape{132, 0}).grid, 132);
  // A 64-bit item count beyond 2^31 blocks does not overflow the grid.
  EXPECT_EQ(grid_stride_shape(int64_t(1) << 45, 32, DeviceShape{2, 3}).grid, 6);
}

TEST(LaunchShape, ConfigsPerLaunchFitTheBudget) {
  // 5 seeds x 100 contexts = 500 replays of 20 bytes = 10000 bytes per config.
  EXPECT_EQ(configs_per_launch(7, 500, 20, 35000), 3);  // floor(35000 / 10000)
  EXPECT_EQ(configs_per_launch(7, 500, 20, 1 << 30), 7);
  EXPECT_EQ(configs_per_launch(7, 500, 20, 1), 1);  // always at least one config
  EXPECT_EQ(configs_per_launch(1, 500, 20, 1 << 30), 1);
}

// The block is cut to what the kernel's registers allow, in whole warps, and only then.
TEST(LaunchShape, TheBlockFitsTheKernelsThreadLimitInWholeWarps) {
  // Delayed RandomPolicy on sm_90: 72 registers per thread allow 896 threads per block, not 1,024.
  EXPECT_EQ(block_within_kernel_limit(1024, 896), 896);
  EXPECT_EQ(block_within_kernel_limit(1024, 910), 896);  // a limit off the warp grid: whole warps
  EXPECT_EQ(block_within_kernel_limit(128, 896), 128);   // a block within the limit is kept as asked
  EXPECT_EQ(block_within_kernel_limit(100, 896), 100);   // even one of partial warps
  EXPECT_EQ(block_within_kernel_limit(1024, 1024), 1024);
  EXPECT_EQ(block_within_kernel_limit(64, 20), 20);  // under one warp: the limit itself, never 0
}
