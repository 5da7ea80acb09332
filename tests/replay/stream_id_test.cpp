// The replay id of a context (replay/stream_id.hpp) pinned by values made outside the code: the
// engines, the brute-force references of the replay tests and the tuner plugin all call
// replay_stream_id, so a change to it would pass every one of them while changing every replayed
// number and the plugin's agreement with earlier replays.
#include "ncclbot/replay/stream_id.hpp"

#include <gtest/gtest.h>

namespace ncclbot {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014; Vigna's splitmix64.c) from state 0 adds 0x9e3779b97f4a7c15
// before each finaliser; its first three outputs are the published 0xe220a8397b1dcdaf,
// 0x6e789e6aa1b965f4, 0x06c45d188009454f.
TEST(StreamId, TheFinaliserIsSplitMix64s) {
  constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;
  EXPECT_EQ(splitmix64_mix(1 * kGolden), 0xe220a8397b1dcdafull);
  EXPECT_EQ(splitmix64_mix(2 * kGolden), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(splitmix64_mix(3 * kGolden), 0x06c45d188009454full);
}

// id = mix(mix(bytes) ^ (collective << 56 | nodes << 32 | GPUs per node)), computed with Python:
//   python3 -c "M=(1<<64)-1
//   def mix(z):
//     z=((z^(z>>30))*0xBF58476D1CE4E5B9)&M; z=((z^(z>>27))*0x94D049BB133111EB)&M; return z^(z>>31)
//   print(hex(mix(mix(1024)^(4<<56|2<<32|8))), hex(mix(mix(1<<30)^(2<<56|16<<32|4))))"
//   -> 0xc04c2b7b81e7b60c 0xc12af47731b4befc
TEST(StreamId, TheIdPacksTheShapeAsDocumented) {
  EXPECT_EQ(replay_stream_id(4, 2, 8, 1024), 0xc04c2b7b81e7b60cull);  // all-reduce, 2 x 8, 1 KiB
  EXPECT_EQ(replay_stream_id(2, 16, 4, uint64_t(1) << 30), 0xc12af47731b4befcull);  // all-gather
  // Each of the four values changes the id.
  const uint64_t id = replay_stream_id(4, 2, 8, 1024);
  EXPECT_NE(replay_stream_id(2, 2, 8, 1024), id);
  EXPECT_NE(replay_stream_id(4, 4, 8, 1024), id);
  EXPECT_NE(replay_stream_id(4, 2, 4, 1024), id);
  EXPECT_NE(replay_stream_id(4, 2, 8, 2048), id);
}

}  // namespace
}  // namespace ncclbot
