// `--knobs` values: lists with K/M suffixes, chunks skipped for protocols whose grain they miss, and
// one-line usage errors for everything NCCL could not be given.
#include "ncclbot/core/knob_spec.hpp"

#include <gtest/gtest.h>

#include <string>

#include "ncclbot/core/error.hpp"

namespace ncclbot {
namespace {

TEST(KnobSpec, CrossesChannelsWithEachProtocolsValidChunks) {
  const KnobSpec s = parse_knob_spec("channels=0,2,4,8,16,32;chunk=0,64K,256K,1M");
  EXPECT_EQ(s.channels, (std::vector<int>{0, 2, 4, 8, 16, 32}));
  // 64 KiB, 256 KiB and 1 MiB are multiples of 16 and 512 but not of 1920: LL128 keeps only 0.
  EXPECT_EQ(s.chunks[int(Proto::kSimple)], (std::vector<uint32_t>{0, 65536, 262144, 1048576}));
  EXPECT_EQ(s.chunks[int(Proto::kLL)], (std::vector<uint32_t>{0, 65536, 262144, 1048576}));
  EXPECT_EQ(s.chunks[int(Proto::kLL128)], (std::vector<uint32_t>{0}));
  const std::vector<Arm> ring = knob_arms(s, arm_slot(Algo::kRing, Proto::kSimple));
  EXPECT_EQ(ring.size(), 6u * 4u);
  EXPECT_EQ(ring.front(), Arm::of_slot(arm_slot(Algo::kRing, Proto::kSimple)));
  EXPECT_EQ(knob_arms(s, arm_slot(Algo::kRing, Proto::kLL128)).size(), 6u);
}

TEST(KnobSpec, ReachesMoreThan256ArmsPerAlgorithmAndProtocol) {
  std::string channels = "channels=0";
  for (int c = 1; c <= 64; ++c) channels += "," + std::to_string(c);
  const KnobSpec s = parse_knob_spec(channels + ";chunk=0,512,1K,2K,4K;chunk.LL128=0,1920,3840,7680,15360");
  EXPECT_EQ(knob_arms(s, arm_slot(Algo::kTree, Proto::kSimple)).size(), 65u * 5u);
  EXPECT_EQ(knob_arms(s, arm_slot(Algo::kTree, Proto::kLL128)).size(), 65u * 5u);
}

TEST(KnobSpec, BadInputIsAUsageError) {
  for (const char* bad : {"channels=65", "channels=-1", "channels=", "chunk=1000", "chunk.LL128=64K",
                          "chunk=2048M", "threads=4", "channels", "channels=4;chunk=0,x"})
    EXPECT_THROW(parse_knob_spec(bad), UsageError) << bad;
}

// The error names where the text came from: the flag by default, the plugin's setting when it asks.
TEST(KnobSpec, AnErrorNamesItsSource) {
  try {
    parse_knob_spec("channels=65", "NCCLBOT_KNOBS");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "NCCLBOT_KNOBS: channels: 65 is above 64");
  }
  try {
    parse_knob_spec("threads=4");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--knobs: unknown key 'threads' (channels, chunk, chunk.LL, chunk.LL128, chunk.Simple)");
  }
}

}  // namespace
}  // namespace ncclbot
