// The plugin's name parsing and labels come from the one name table (core/name_table.hpp), so they
// agree with the host library's names.hpp on every name and every spelling the rule allows; the
// reference spellings (NCCL's enum order) are written out by hand.
#include <gtest/gtest.h>

#include <string>

#include "ncclbot/core/name_table.hpp"
#include "plugin/plugin_names.hpp"

using namespace ncclbot;
using namespace ncclbot::plugin;

TEST(PluginNames, NcclSpellingsInNcclOrder) {
  const char* algos[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
  for (int a = 0; a < 7; ++a) {
    EXPECT_STREQ(algo_label(a), algos[a]);
    EXPECT_EQ(parse_algo_name(algos[a]), a);
  }
  EXPECT_EQ(parse_algo_name("HiPIPE"), -1);  // simulated only, never offered to NCCL
  EXPECT_STREQ(algo_label(7), "?");
  EXPECT_STREQ(proto_label(1), "LL128");
  EXPECT_STREQ(collective_label(4), "AllReduce");
  EXPECT_STREQ(collective_label(11), "?");
}

TEST(PluginNames, EverySpellingTheRuleAllows) {
  for (int c = 0; c < kNumCollectives; ++c) {
    std::string upper, snake;
    for (char ch : std::string(kCollectiveNames[c])) {
      if (!snake.empty() && ch >= 'A' && ch <= 'Z') snake += '_';
      snake += char(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
      upper += char(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
    }
    EXPECT_EQ(parse_collective_name(upper), c) << upper;
    EXPECT_EQ(parse_collective_name(snake), c) << snake;
    EXPECT_EQ(parse_collective_name("-" + snake + "-"), c) << snake;
  }
  EXPECT_EQ(parse_proto_name("ll_128"), 1);
  EXPECT_EQ(parse_proto_name(""), -1);
  EXPECT_EQ(parse_proto_name(std::string(100, 'l')), -1);
}
