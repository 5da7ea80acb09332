// One rank per GPU: which device a node-local rank takes (hand-computed cases).
#include <gtest/gtest.h>

#include "ncclbot/core/cuda_probe.hpp"

using namespace ncclbot;

TEST(DeviceForLocalRank, OneRankPerDeviceThenRoundRobin) {
  // 8 GPUs on the node: ranks 0..7 take devices 0..7, rank 9 shares device 1.
  for (int r = 0; r < 8; ++r) EXPECT_EQ(device_for_local_rank(r, 8), r);
  EXPECT_EQ(device_for_local_rank(9, 8), 1);
  // CUDA_VISIBLE_DEVICES narrowed to one device per rank (srun --gpus-per-task=1): always 0.
  EXPECT_EQ(device_for_local_rank(5, 1), 0);
  // No device, or a nonsensical rank: device 0 (the probe then reports what is missing).
  EXPECT_EQ(device_for_local_rank(3, 0), 0);
  EXPECT_EQ(device_for_local_rank(-1, 4), 0);
}

TEST(DeviceForLocalRank, WithoutAUsableDeviceNothingIsSelected) {
  // This machine (and every CPU-only build) has no CUDA device: select_cuda_device says so.
  if (probe_cuda().usable_devices > 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(select_cuda_device(0), -1);
}
