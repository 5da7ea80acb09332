#include "ncclbot/core/philox.hpp"

#include <gtest/gtest.h>

using namespace ncclbot;

// Known-answer vectors of philox4x32-10 from Random123 1.14, examples/kat_vectors (D. E. Shaw
// Research, github.com/DEShawResearch/random123), lines 27-29: counter[4] key[2] -> output[4].
TEST(Philox, KnownAnswerVectors) {
  struct Kat {
    Philox4x32 ctr;
    uint32_t key[2];
    Philox4x32 out;
  };
  const Kat kats[] = {
      {{{0x00000000, 0x00000000, 0x00000000, 0x00000000}},
       {0x00000000, 0x00000000},
       {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       {0xffffffff, 0xffffffff},
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       {0xa4093822, 0x299f31d0},
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Kat& k : kats) {
    const Philox4x32 got = philox4x32_10(k.ctr, k.key[0], k.key[1]);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.v[i], k.out.v[i]) << "word " << i;
  }
}

// philox_block(seed, id, step, lane) is the documented cuRAND-compatible counter layout.
TEST(Philox, BlockLayoutIsSeedKeyAndIdSubsequence) {
  const uint64_t seed = 0x0123456789abcdefull, id = 0xfedcba9876543210ull;
  const Philox4x32 got = philox_block(seed, id, 7, 3);
  const Philox4x32 want =
      philox4x32_10(Philox4x32{{7u, 3u, 0x76543210u, 0xfedcba98u}}, 0x89abcdefu, 0x01234567u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got.v[i], want.v[i]);
}

TEST(Philox, StepRandomWalksLanesFromOne) {
  StepRandom rng(5, 9, 11);
  const Philox4x32 lane1 = philox_block(5, 9, 11, 1), lane2 = philox_block(5, 9, 11, 2);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rng.next_u32(), lane1.v[i]);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rng.next_u32(), lane2.v[i]);
}

TEST(Philox, UniformMaps) {
  EXPECT_EQ(uniform_below(0u, 7), 0u);
  EXPECT_EQ(uniform_below(0xffffffffu, 7), 6u);
  EXPECT_EQ(uniform_below(0x80000000u, 4), 2u);  // 2^31 * 4 / 2^32 = 2
  EXPECT_EQ(uniform_open01(0u), 0.5 / 4294967296.0);
  EXPECT_EQ(uniform_open01(0xffffffffu), (4294967295.0 + 0.5) / 4294967296.0);
  EXPECT_LT(uniform_open01(0xffffffffu), 1.0);
}
