// Scoring as deployed (replay/deployed_cost.hpp): every policy the plugin can run has a measured
// per-call cost, stock NCCL and the oracle are free, supervised selectors pay table mode's cost,
// and the measured leader delay is what the plugin's window protocol allows
// (tests/plugin/feedback_delay_test.cpp derives that range by hand: median in [127, 255]).
#include "ncclbot/replay/deployed_cost.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "ncclbot/core/error.hpp"

using namespace ncclbot;

namespace {

std::vector<PolicyKind> registry_kinds() {
  std::vector<PolicyKind> out;
#define NCCLBOT_TEST_KIND(Kind, ...) out.push_back(PolicyKind::Kind);
  NCCLBOT_POLICIES(NCCLBOT_TEST_KIND)
#undef NCCLBOT_TEST_KIND
  return out;
}

}  // namespace

TEST(DeployedCost, EveryRegisteredPolicyHasAMeasuredCost) {
  for (PolicyKind kind : registry_kinds()) {
    const PolicyConfig cfg = default_policy_config(kind);
    const double us = deployed_call_cost_us(cfg);
    EXPECT_TRUE(std::isfinite(us)) << policy_name(kind);
    if (kind == PolicyKind::kAuto || kind == PolicyKind::kOracle) {
      EXPECT_EQ(us, 0.0) << policy_name(kind);
    } else {
      // A live getCollInfo takes tens to hundreds of nanoseconds, never nothing and never a microsecond.
      EXPECT_GT(us, 0.001) << policy_name(kind);
      EXPECT_LT(us, 1.0) << policy_name(kind);
    }
  }
}

TEST(DeployedCost, SupervisedSelectorsPayTableMode) {
  const double knn = deployed_call_cost_us(default_policy_config(PolicyKind::kKnn));
  EXPECT_EQ(knn, deployed_call_cost_us(default_policy_config(PolicyKind::kTree)));
  EXPECT_GT(knn, 0.0);
}

TEST(DeployedCost, CostsFollowTheConfigs) {
  const std::vector<PolicySpec> configs = {parse_policy_spec("auto"), parse_policy_spec("ucb1:c=0.2,n0=4"),
                                           parse_policy_spec("thompson")};
  const std::vector<double> costs = deployed_call_costs(configs);
  ASSERT_EQ(costs.size(), 3u);
  EXPECT_EQ(costs[0], 0.0);
  EXPECT_EQ(costs[1], deployed_call_cost_us(configs[1].config));
  EXPECT_EQ(costs[2], deployed_call_cost_us(configs[2].config));
}

TEST(DeployedCost, ModesAndTheirDelays) {
  EXPECT_EQ(parse_deployment("local"), Deployment::kLocal);
  EXPECT_EQ(parse_deployment("leader"), Deployment::kLeader);
  EXPECT_EQ(deployment_name(Deployment::kLeader), "leader");
  EXPECT_EQ(deployment_name(Deployment::kLocal), "local");
  EXPECT_THROW(parse_deployment("Leader"), UsageError);
  EXPECT_THROW(parse_deployment(""), UsageError);
  // Local: every call after the previous call's latency. Leader: the protocol of
  // replay/leader_protocol.hpp, windows of 4 calls asked for 8 calls ahead (docs/plugin.md
  // "Decision windows"), so a decision lags 8..11 calls behind the latencies.
  EXPECT_EQ(deployed_delay(Deployment::kLocal), 0);
  EXPECT_EQ(deployed_feedback(Deployment::kLocal).window, 1);
  EXPECT_EQ(deployed_feedback(Deployment::kLeader).delay, 8);
  EXPECT_EQ(deployed_feedback(Deployment::kLeader).window, 4);
  // Three windows of NCCL's own: the follower asks for calls 0..8 at its call 0, windows 0..2.
  EXPECT_EQ(deployed_feedback(Deployment::kLeader).policy_start, 12);
  EXPECT_EQ(deployed_feedback(Deployment::kLocal).policy_start, 0);
  EXPECT_EQ(deployed_delay(Deployment::kLeader), 8);
}
