// The knob model against NCCL v2.30.3-1's formulas worked by hand, and its properties: arms NCCL runs
// alike take the same time, NCCL's own setting keeps the simulator's truth, the seed decides all.
#include "ncclbot/sim/knob_model.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace ncclbot::sim {
namespace {

model::Topology h100_topology(int nodes) {
  return topology_for(load_fabric("h100-ib-a"), nodes, 8);
}

TEST(KnobModelNccl, ScheduledChannelsFollowThe32KiBCells) {
  // 1 MiB AllReduce: 2 MiB of traffic over 16 channels, 64 cells of 16 KiB, 4 per channel: 16.
  EXPECT_EQ(scheduled_channels(Collective::kAllReduce, Proto::kSimple, 1 << 20, 16, 16, 16), 16);
  // 4 KiB fits one cell: one channel whatever was asked.
  EXPECT_EQ(scheduled_channels(Collective::kAllReduce, Proto::kSimple, 4096, 16, 16, 16), 1);
  EXPECT_EQ(scheduled_channels(Collective::kAllReduce, Proto::kSimple, 4096, 16, 64, 64), 1);
  // 256 KiB: 512 KiB of traffic is 16 cells of 32 KiB, so 16 channels even when 32 or 64 are asked.
  EXPECT_EQ(scheduled_channels(Collective::kAllReduce, Proto::kSimple, 256 << 10, 16, 64, 64), 16);
  EXPECT_EQ(scheduled_channels(Collective::kAllReduce, Proto::kSimple, 256 << 10, 16, 32, 32), 16);
}

TEST(KnobModelNccl, NcclShrinksChannelsForSmallMessages) {
  const model::Topology t = h100_topology(2);  // 16 ranks, 16 ring channels
  // Ring Simple: nt 512 x threshold 64 = 32 KiB per channel; 100 KiB keeps 3 (3 x 32 KiB <= 100 KiB).
  EXPECT_EQ(nccl_channels(t, Collective::kAllReduce, Algo::kRing, Proto::kSimple, 100 << 10), 3);
  // Ring LL: threshold 8 x 16 ranks, 512 threads: 64 KiB per channel; 100 KiB < 2 x 64 KiB keeps 1.
  EXPECT_EQ(nccl_channels(t, Collective::kAllReduce, Algo::kRing, Proto::kLL, 100 << 10), 1);
  EXPECT_EQ(nccl_channels(t, Collective::kAllReduce, Algo::kRing, Proto::kSimple, 1 << 30), 16);
}

TEST(KnobModelNccl, BufferMaximumChunks) {
  // Simple: 4 MiB / 8 steps x 4 chunk steps on a ring; LL 524288 / 8 / 2; LL128 4915200 / 8 / 16 x 15.
  EXPECT_EQ(buffer_max_chunk_bytes(Collective::kAllReduce, Algo::kRing, Proto::kSimple), 2097152u);
  EXPECT_EQ(buffer_max_chunk_bytes(Collective::kBroadcast, Algo::kRing, Proto::kSimple), 524288u);
  EXPECT_EQ(buffer_max_chunk_bytes(Collective::kAllReduce, Algo::kTree, Proto::kSimple), 524288u);
  EXPECT_EQ(buffer_max_chunk_bytes(Collective::kAllReduce, Algo::kRing, Proto::kLL), 32768u);
  EXPECT_EQ(buffer_max_chunk_bytes(Collective::kAllReduce, Algo::kTree, Proto::kLL128), 576000u);
}

TEST(KnobModelNccl, NvlsTreeChunkIsCappedAt64KiBFromFourNodes) {
  const uint64_t big = uint64_t(1) << 30;
  EXPECT_EQ(nccl_chunk_bytes(h100_topology(4), Collective::kAllReduce, Algo::kNvlsTree, Proto::kSimple, big),
            65536u);
  EXPECT_EQ(nccl_chunk_bytes(h100_topology(2), Collective::kAllReduce, Algo::kNvlsTree, Proto::kSimple, big),
            131072u);
  // 100 KiB < 1 x 8 heads x 64 KiB: 32 KiB.
  EXPECT_EQ(
      nccl_chunk_bytes(h100_topology(4), Collective::kAllReduce, Algo::kNvlsTree, Proto::kSimple, 100 << 10),
      32768u);
}

TEST(KnobModelNccl, TreeLl128ChunkHalvesThenAlignsToItsGrain) {
  // 16 nodes x 8: nsteps = 1 + 4 + 0.8 = 5.8, 5.8 x 64 / 8 = 46.4. 4 MiB / 576000 = 7, / 288000 = 14,
  // / 144000 = 29 (all < 46.4): 72000, below 131072 so the first loop stops; 4 MiB / 72000 = 58 >=
  // 11.6 stops the second. 72000 rounded down to 1920 B: 37 x 1920 = 71040.
  EXPECT_EQ(nccl_chunk_bytes(h100_topology(16), Collective::kAllReduce, Algo::kTree, Proto::kLL128, 4 << 20),
            71040u);
}

class KnobModelTime : public ::testing::Test {
 protected:
  FabricPreset f = load_fabric("h100-ib-a");
  KnobSimulator sim{f, kDefaultSeed};
  Context ctx(uint64_t bytes) const { return Context{f.name, Collective::kAllReduce, 2, 8, bytes}; }
};

TEST_F(KnobModelTime, NcclOwnKnobsKeepTheTruth) {
  const Deviations d = draw_deviations(f, kDefaultSeed);
  for (uint64_t b : {uint64_t(8), uint64_t(1) << 20, uint64_t(1) << 30})
    for (int s = 0; s < kNumNcclArms; ++s) {
      const double truth = true_time_us(f, d, ctx(b), s);
      const double knob = sim.mean_us(ctx(b), Arm::of_slot(s));
      if (std::isnan(truth)) {
        EXPECT_TRUE(std::isnan(knob));
      } else {
        EXPECT_EQ(knob, truth);
        EXPECT_EQ(sim.sample_us(ctx(b), Arm::of_slot(s), 2, truth),
                  sample_time_us(f, kDefaultSeed, ctx(b), s, 2, truth));
      }
    }
}

TEST_F(KnobModelTime, ChannelsAboveTheTrafficCapRunAsOneArm) {
  const Context c = ctx(256 << 10);  // 16 cells of 32 KiB of traffic
  const Arm a16{Algo::kRing, Proto::kSimple, 16, 0}, a32{Algo::kRing, Proto::kSimple, 32, 0},
      a64{Algo::kRing, Proto::kSimple, 64, 0};
  EXPECT_EQ(sim.mean_us(c, a16), sim.mean_us(c, a32));
  EXPECT_EQ(sim.mean_us(c, a16), sim.mean_us(c, a64));
  EXPECT_NE(sim.mean_us(c, a16), sim.mean_us(c, Arm{Algo::kRing, Proto::kSimple, 2, 0}));
}

TEST_F(KnobModelTime, ChunksAboveTheBufferClampRunAsOneArm) {
  const Context c = ctx(uint64_t(1) << 30);
  // Ring Simple AllReduce clamps at 2 MiB, NCCL's own chunk: 4 MiB and 8 MiB arms are NCCL's setting.
  const double own = sim.mean_us(c, Arm::of_slot(arm_slot(Algo::kRing, Proto::kSimple)));
  EXPECT_EQ(sim.mean_us(c, Arm{Algo::kRing, Proto::kSimple, 0, 4u << 20}), own);
  EXPECT_EQ(sim.mean_us(c, Arm{Algo::kRing, Proto::kSimple, 0, 8u << 20}), own);
  EXPECT_NE(sim.mean_us(c, Arm{Algo::kRing, Proto::kSimple, 0, 64u << 10}), own);
}

TEST_F(KnobModelTime, DeterministicInTheSeed) {
  const KnobSimulator again(f, kDefaultSeed), other(f, kDefaultSeed + 1);
  const Arm arm{Algo::kTree, Proto::kSimple, 8, 64u << 10};
  const Context c{f.name, Collective::kAllReduce, 16, 8, 4u << 20};
  EXPECT_EQ(sim.mean_us(c, arm), again.mean_us(c, arm));
  EXPECT_EQ(sim.sample_us(c, arm, 1, 100.0), again.sample_us(c, arm, 1, 100.0));
  EXPECT_NE(sim.mean_us(c, arm), other.mean_us(c, arm));
  // A knob arm is its own measurement: its noise differs from NCCL's own setting's.
  EXPECT_NE(sim.sample_us(c, arm, 1, 100.0), sim.sample_us(c, Arm::of_slot(arm.slot()), 1, 100.0));
}

}  // namespace
}  // namespace ncclbot::sim
