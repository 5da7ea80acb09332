// Knob mode's arithmetic (plugin/knob_choice.hpp), every expected value worked by hand: a context's
// arms, the chunk handed to NCCL, and the arm a measured call is credited to.
#include <gtest/gtest.h>

#include <vector>

#include "plugin/knob_choice.hpp"

using namespace ncclbot;
using namespace ncclbot::plugin;

namespace {

constexpr int kSimple = 2, kLL = 0, kLL128 = 1;

}  // namespace

// Ring/Simple and CollNetDirect/Simple usable, channels=0,8 x chunk=0,64K: Ring gets all four, in
// Arm order with NCCL's own knobs first; CollNet keeps NCCL's channels (chunk 0 and 64K only).
TEST(KnobChoice, AContextCrossesItsSlotsWithTheListsAndCollNetKeepsNcclsChannels) {
  ArmMask usable;
  usable.set(arm_slot(Algo::kRing, Proto::kSimple));
  usable.set(arm_slot(Algo::kCollNetDirect, Proto::kSimple));
  const std::vector<Arm> arms = context_knob_arms(usable, parse_knob_spec("channels=0,8;chunk=0,64K"));
  const std::vector<Arm> expected = {
      {Algo::kRing, Proto::kSimple, 0, 0},          {Algo::kRing, Proto::kSimple, 0, 65536},
      {Algo::kRing, Proto::kSimple, 8, 0},          {Algo::kRing, Proto::kSimple, 8, 65536},
      {Algo::kCollNetDirect, Proto::kSimple, 0, 0}, {Algo::kCollNetDirect, Proto::kSimple, 0, 65536},
  };
  EXPECT_EQ(arms, expected);
}

// Within [grain, NCCL's value], rounded down to the grain: Simple 512 B, LL 16 B, LL128 1920 B.
TEST(KnobChoice, TheChunkStaysWithinTheGrainAndNcclsValue) {
  EXPECT_EQ(clamp_chunk(65536, kSimple, 131072), 65536u);
  EXPECT_EQ(clamp_chunk(65536, kSimple, 32768), 32768u);
  EXPECT_EQ(clamp_chunk(65536, kSimple, 40000), 39936u);  // 78 x 512
  EXPECT_EQ(clamp_chunk(100, kLL, 131072), 96u);          // 6 x 16
  EXPECT_EQ(clamp_chunk(10, kLL, 131072), 16u);           // never below the grain: NCCL divides by it
  EXPECT_EQ(clamp_chunk(65536, kSimple, 300), 300u);      // NCCL's own below the grain: left alone
  EXPECT_EQ(clamp_chunk(3840, kLL128, 576000), 3840u);
  EXPECT_EQ(clamp_chunk(5000, kLL128, 576000), 3840u);  // 2 x 1920
}

// The arm that ran, for a decision of Ring/Simple, 8 channels, 64 KiB.
TEST(KnobChoice, TheArmThatRanIsWhatNcclRan) {
  const Arm decided{Algo::kRing, Proto::kSimple, 8, 65536};
  // As decided, the chunk applied.
  EXPECT_EQ(arm_that_ran(decided, {1, kSimple, 8}, 65536), decided);
  // NCCL ran 4 channels.
  EXPECT_EQ(arm_that_ran(decided, {1, kSimple, 4}, 65536), (Arm{Algo::kRing, Proto::kSimple, 4, 65536}));
  // getChunkSize never applied the chunk: NCCL's own ran.
  EXPECT_EQ(arm_that_ran(decided, {1, kSimple, 8}, 0), (Arm{Algo::kRing, Proto::kSimple, 8, 0}));
  // Another algorithm: NCCL's chunk, the tuner's channel count as NCCL reports it.
  EXPECT_EQ(arm_that_ran(decided, {0, kSimple, 8}, 65536), (Arm{Algo::kTree, Proto::kSimple, 8, 0}));
  // The report function says no channel count: the decided one.
  EXPECT_EQ(arm_that_ran(decided, {1, kSimple, -1}, 65536), decided);
  // A decision of NCCL's channels ran NCCL's count, whatever it was.
  const Arm own{Algo::kRing, Proto::kSimple, 0, 0};
  EXPECT_EQ(arm_that_ran(own, {1, kSimple, 24}, 0), own);
}
