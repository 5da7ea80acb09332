// Where the replay kernels keep a thread's state (replay/shared_state_layout.hpp), checked by hand:
// the slot stride is an odd multiple of 8 bytes, which is what makes a warp's 8-byte reads of one
// field conflict-free (counted here bank by bank), and the block shrinks to whole warps that fit.
#include "ncclbot/replay/shared_state_layout.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace ncclbot;

TEST(SharedStateLayout, StridesAreOddMultiplesOfEightBytes) {
  EXPECT_EQ(bank_friendly_stride(0), 8u);
  EXPECT_EQ(bank_friendly_stride(1), 8u);
  EXPECT_EQ(bank_friendly_stride(8), 8u);
  EXPECT_EQ(bank_friendly_stride(9), 24u);  // 16 bytes would be 2 words: even
  EXPECT_EQ(bank_friendly_stride(16), 24u);
  EXPECT_EQ(bank_friendly_stride(24), 24u);
  EXPECT_EQ(bank_friendly_stride(1700), 1704u);  // 213 words
  EXPECT_EQ(bank_friendly_stride(1704), 1704u);
  EXPECT_EQ(bank_friendly_stride(1705), 1720u);  // 214 words -> 215
  EXPECT_EQ(cursor_offset(1100), 1104u);
  EXPECT_EQ(shared_slot_stride(1100, 600), 1704u);  // 1104 + 600 = 1704 = 213 words
  EXPECT_EQ(shared_slot_stride(1100, 0), 1112u);    // 1104 = 138 words -> 139
}

// Shared memory has 32 banks of 4 bytes and serves a warp's 8-byte accesses 16 lanes at a time; a
// half-warp reading one field of its slots is conflict-free when its 16 lanes use 32 distinct banks.
TEST(SharedStateLayout, OneFieldOfSixteenLanesHitsThirtyTwoDistinctBanks) {
  for (size_t bytes : {8u, 100u, 592u, 1100u, 1664u, 1712u, 6656u}) {
    const size_t stride = bank_friendly_stride(bytes);
    for (size_t field = 0; field < 64; field += 8) {
      std::set<size_t> banks;
      for (size_t lane = 0; lane < 16; ++lane) {
        const size_t at = lane * stride + field;
        banks.insert(at / 4 % 32);
        banks.insert((at + 4) / 4 % 32);
      }
      EXPECT_EQ(banks.size(), 32u) << bytes << " " << field;
    }
    // An even number of words would conflict: 2 lanes per bank pair at least.
    std::set<size_t> even;
    for (size_t lane = 0; lane < 16; ++lane) even.insert((lane * (stride + 8)) / 4 % 32);
    EXPECT_LT(even.size(), 16u) << bytes;
  }
}

TEST(SharedStateLayout, TheBlockShrinksToTheWarpsThatFit) {
  const size_t h200 = 232448;  // 227 KiB, cudaDevAttrMaxSharedMemoryPerBlockOptin on sm_90
  EXPECT_EQ(threads_for_shared_state(128, 1704, h200), 128);  // 136 fit
  EXPECT_EQ(threads_for_shared_state(256, 1704, h200), 128);  // 136 fit: 4 whole warps
  EXPECT_EQ(threads_for_shared_state(128, 6664, h200), 32);   // 34 fit
  EXPECT_EQ(threads_for_shared_state(128, 8000, h200), 0);    // 29 fit: not one warp
  EXPECT_EQ(threads_for_shared_state(16, 10000, h200), 16);   // 23 fit: the 16 asked for
  EXPECT_EQ(threads_for_shared_state(0, 8, h200), 0);
}
