// Knob arms in the sweep CSV: channels and chunk_bytes columns, their checks, their order in memory,
// and the engines' refusal of a knob sweep with the line of its first knob arm.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "ncclbot/core/error.hpp"
#include "ncclbot/io/sweep_csv.hpp"

namespace {

const char* kKnobHeader =
    "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,sample,time_us\n";

ncclbot::Sweep parse_knob_csv(const std::string& text) {
  std::istringstream in(text);
  return ncclbot::parse_sweep_csv(in, "k.csv");
}

// The InputError of parsing `text`, or "" when it parses.
std::string knob_csv_error(const std::string& text) {
  try {
    parse_knob_csv(text);
  } catch (const ncclbot::InputError& e) {
    return e.what();
  }
  return "";
}

std::string knob_row(const std::string& algo, const std::string& proto, int channels, long chunk, int sample,
                     const std::string& time) {
  return "h100,AllReduce,2,8,1048576," + algo + "," + proto + "," + std::to_string(channels) + "," +
         std::to_string(chunk) + "," + std::to_string(sample) + "," + time + "\n";
}

}  // namespace

TEST(SweepKnobColumns, ArmsAreKeptInArmOrderWithTheirOwnSamples) {
  // Rows out of order; Arm order is (algo, proto, channels, chunk): LL before Simple, NCCL's own first.
  const std::string text = std::string(kKnobHeader) + knob_row("Ring", "Simple", 8, 65536, 0, "5") +
                           knob_row("Ring", "Simple", 0, 0, 0, "7") + knob_row("Ring", "LL", 4, 16, 0, "9") +
                           knob_row("Ring", "Simple", 8, 0, 0, "6");
  const ncclbot::Sweep s = parse_knob_csv(text);
  ASSERT_EQ(s.num_contexts(), 1);
  const auto arms = s.arms(0);
  ASSERT_EQ(arms.size(), 4u);
  using ncclbot::Algo;
  using ncclbot::Arm;
  using ncclbot::Proto;
  EXPECT_EQ(arms[0], (Arm{Algo::kRing, Proto::kLL, 4, 16}));
  EXPECT_EQ(arms[1], (Arm{Algo::kRing, Proto::kSimple, 0, 0}));
  EXPECT_EQ(arms[2], (Arm{Algo::kRing, Proto::kSimple, 8, 0}));
  EXPECT_EQ(arms[3], (Arm{Algo::kRing, Proto::kSimple, 8, 65536}));
  EXPECT_EQ(s.arm_sample(0, 0, 0), 9.0f);
  EXPECT_EQ(s.arm_sample(0, 1, 0), 7.0f);
  EXPECT_EQ(s.arm_sample(0, 2, 0), 6.0f);
  EXPECT_EQ(s.arm_sample(0, 3, 0), 5.0f);
  EXPECT_FALSE(s.slot_shaped());
}

TEST(SweepKnobColumns, TheEnginesRefuseAKnobSweepAtItsFirstKnobArmsLine) {
  const std::string text = std::string(kKnobHeader) + knob_row("Ring", "Simple", 0, 0, 0, "7") +
                           knob_row("Ring", "LL", 0, 0, 0, "8") + knob_row("Ring", "Simple", 16, 0, 0, "6");
  const ncclbot::Sweep s = parse_knob_csv(text);
  try {
    (void)s.view();
    FAIL() << "a knob sweep gave a slot view";
  } catch (const ncclbot::InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("k.csv:4: ", 0), 0u) << msg;  // header 1, then the third row
    EXPECT_NE(msg.find("24 slots"), std::string::npos) << msg;
  }
}

TEST(SweepKnobColumns, WritingAndReadingBackGivesTheSameBits) {
  const std::string text = std::string(kKnobHeader) + knob_row("Tree", "LL128", 2, 3840, 0, "1.5") +
                           knob_row("Tree", "LL128", 2, 3840, 1, "1.25") +
                           knob_row("Tree", "LL128", 0, 0, 0, "2") + knob_row("Tree", "LL128", 0, 0, 1, "3");
  const ncclbot::Sweep a = parse_knob_csv(text);
  std::ostringstream out;
  ncclbot::write_sweep_csv(a, out);
  // Written in Arm order with the knob columns after proto, as docs/architecture.md gives them.
  EXPECT_EQ(out.str(),
            "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,sample,time_us\n"
            "h100,AllReduce,2,8,1048576,Tree,LL128,0,0,0,2\n"
            "h100,AllReduce,2,8,1048576,Tree,LL128,0,0,1,3\n"
            "h100,AllReduce,2,8,1048576,Tree,LL128,2,3840,0,1.5\n"
            "h100,AllReduce,2,8,1048576,Tree,LL128,2,3840,1,1.25\n");
  EXPECT_TRUE(parse_knob_csv(out.str()).identical_to(a));
}

TEST(SweepKnobColumns, APriorColumnTravelsWithTheKnobArms) {
  const std::string text =
      "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,sample,time_us,prior_us\n"
      "h100,AllReduce,2,8,1048576,Ring,Simple,8,0,0,8,10\n"
      "h100,AllReduce,2,8,1048576,Ring,Simple,0,0,0,7,11\n";
  const ncclbot::Sweep s = parse_knob_csv(text);
  ASSERT_TRUE(s.has_prior());
  EXPECT_EQ(s.arm_prior(0, 0), 11.0f);
  EXPECT_EQ(s.arm_prior(0, 1), 10.0f);
  std::ostringstream out;
  ncclbot::write_sweep_csv(s, out);
  EXPECT_EQ(
      out.str(),
      "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,channels,chunk_bytes,sample,time_us,prior_us\n"
      "h100,AllReduce,2,8,1048576,Ring,Simple,0,0,0,7,11\n"
      "h100,AllReduce,2,8,1048576,Ring,Simple,8,0,0,8,10\n");
}

TEST(SweepKnobColumns, ZerosEverywhereIsTheAlgorithmByProtocolSweep) {
  const std::string with = std::string(kKnobHeader) + knob_row("Ring", "Simple", 0, 0, 0, "7") +
                           knob_row("Tree", "LL", 0, 0, 0, "8");
  const std::string without =
      "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us\n"
      "h100,AllReduce,2,8,1048576,Ring,Simple,0,7\n"
      "h100,AllReduce,2,8,1048576,Tree,LL,0,8\n";
  const ncclbot::Sweep a = parse_knob_csv(with);
  EXPECT_TRUE(a.slot_shaped());
  EXPECT_TRUE(a.identical_to(parse_knob_csv(without)));
  std::ostringstream out;
  ncclbot::write_sweep_csv(a, out);
  EXPECT_EQ(out.str().substr(0, out.str().find('\n')),
            "fabric,collective,nodes,gpus_per_node,bytes,algo,proto,sample,time_us");
}

TEST(SweepKnobColumns, KnobValuesNcclCannotTakeAreRefusedWithTheirLine) {
  const std::string head = std::string(kKnobHeader) + knob_row("Ring", "Simple", 0, 0, 0, "7");
  EXPECT_NE(knob_csv_error(head + knob_row("Ring", "Simple", 65, 0, 0, "7"))
                .find("k.csv:3: channels must be an integer in [0, 64]"),
            std::string::npos);
  EXPECT_NE(knob_csv_error(head + "h100,AllReduce,2,8,1048576,Ring,Simple,-1,0,0,7\n")
                .find("k.csv:3: channels must be"),
            std::string::npos);
  EXPECT_NE(knob_csv_error(head + "h100,AllReduce,2,8,1048576,Ring,Simple,,0,0,7\n")
                .find("k.csv:3: channels is empty"),
            std::string::npos);
  // Simple's grain is 512 B, LL128's 1920 B, LL's 16 B (NCCL ncclProtoGrainSize).
  EXPECT_NE(
      knob_csv_error(head + knob_row("Ring", "Simple", 0, 1000, 0, "7"))
          .find("k.csv:3: Ring/Simple channels=0 chunk_bytes=1000: chunk_bytes is not a positive multiple"),
      std::string::npos);
  EXPECT_NE(knob_csv_error(head + knob_row("Ring", "LL128", 0, 512, 0, "7")).find("k.csv:3:"),
            std::string::npos);
  EXPECT_NE(knob_csv_error(head + knob_row("Ring", "LL", 0, 8, 0, "7")).find("k.csv:3:"), std::string::npos);
  EXPECT_EQ(knob_csv_error(head + knob_row("Ring", "LL128", 0, 1920, 0, "7")), "");
  EXPECT_EQ(knob_csv_error(head + knob_row("Ring", "LL", 64, 16, 0, "7")), "");
  EXPECT_NE(knob_csv_error(head + knob_row("Ring", "Simple", 0, (1L << 30) + 512, 0, "7"))
                .find("chunk_bytes must be an integer in [0, 1073741824]"),
            std::string::npos);
}

TEST(SweepKnobColumns, AContextHoldsAtMostTheStatedNumberOfArms) {
  // Ring/Simple with 65 channel counts x 64 chunk sizes: 4160 arms, above the 4096 limit.
  std::string text = kKnobHeader;
  for (int ch = 0; ch <= 64; ++ch)
    for (int k = 0; k < 64; ++k) text += knob_row("Ring", "Simple", ch, 512L * k, 0, "1");
  const std::string err = knob_csv_error(text);
  EXPECT_NE(err.find("has more than 4096 arms, the most a sweep context may hold"), std::string::npos) << err;
  // 4097th distinct arm: line 4098 (the header is line 1).
  EXPECT_EQ(err.rfind("k.csv:4098: ", 0), 0u) << err;
}

TEST(SweepKnobColumns, FiveHundredTwelveArmsOfOneContextRead) {
  std::string text = kKnobHeader;
  for (int ch = 1; ch <= 64; ++ch)
    for (int k = 1; k <= 8; ++k)
      text += knob_row("Ring", "Simple", ch, 512L * k, 0, std::to_string(ch * 10 + k));
  const ncclbot::Sweep s = parse_knob_csv(text);
  ASSERT_EQ(s.arms(0).size(), 512u);
  EXPECT_EQ(s.arms(0)[511], (ncclbot::Arm{ncclbot::Algo::kRing, ncclbot::Proto::kSimple, 64, 4096}));
  EXPECT_EQ(s.arm_sample(0, 511, 0), 648.0f);
}
