// What NCCLBOT_POLICY may name: the plugin runs a policy bare, so a spec whose meaning needs the
// replay engines' conservative wrapper is refused with a reason, never run without its promise.
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
