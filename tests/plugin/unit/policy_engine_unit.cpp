// What NCCLBOT_POLICY may name: the plugin runs a policy bare, so a spec whose meaning needs the
// replay engines' conservative wrapper is refused with a reason, never run without its promise; a
// watch rule it honours.
#include <gtest/gtest.h>

#include <string>

#include "plugin/policy_engine.hpp"

using namespace ncclbot::plugin;

TEST(PolicyEngineSpec, TheConservativeWrapperIsRefusedNotDropped) {
  std::string error;
  EXPECT_FALSE(PolicyEngine::create("osub@conservative:alpha=0.1", 1, &error));
  EXPECT_NE(error.find("the conservative wrapper runs in the CPU replay engines only"), std::string::npos)
      << error;
  error.clear();
  const auto bare = PolicyEngine::create("osub", 1, &error);
  ASSERT_TRUE(bare) << error;
  EXPECT_TRUE(error.empty());
}

// A watch rule is the plugin's (docs/plugin.md "The cost of watching"): kept with its options, and
// left out of the fingerprint, since it changes which latencies come, not what a saved state means.
TEST(PolicyEngineSpec, AWatchRuleIsKeptAndLeavesTheStateFingerprintAlone) {
  std::string error;
  const auto watching = PolicyEngine::create("ucb1:c=0.1@watch:full=6,floor=0.05", 1, &error);
  ASSERT_TRUE(watching) << error;
  EXPECT_TRUE(watching->watches_fewer());
  EXPECT_EQ(watching->watch().full, 6u);
  EXPECT_EQ(watching->watch().floor, 0.05);
  const auto every = PolicyEngine::create("ucb1:c=0.1", 1, &error);
  ASSERT_TRUE(every) << error;
  EXPECT_FALSE(every->watches_fewer());
  EXPECT_EQ(watching->fingerprint(), every->fingerprint());
  EXPECT_NE(PolicyEngine::create("ucb1:c=0.2", 1, &error)->fingerprint(), every->fingerprint());
  // `@watch` alone: policy/watch_rule.hpp's default rule.
  const auto by_default = PolicyEngine::create("ucb1@watch", 1, &error);
  ASSERT_TRUE(by_default) << error;
  EXPECT_EQ(by_default->watch().full, 4u);
  EXPECT_EQ(by_default->watch().floor, 0.01);
}
