// auto, oracle, random and the frozen (supervised / table) policy.
#include <gtest/gtest.h>

#include "ncclbot/policy/policy.hpp"
#include "support/policy_trace.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {
// Slots 1 (Tree/LL128), 4 (Ring/LL128), 5 (Ring/Simple); priors tie on slots 1 and 4.
Sweep sweep_with_tie() {
  return tiny_sweep({{tiny_context(1, 1024), {{1, {12.0f}, 7.0f}, {4, {9.0f}, 7.0f}, {5, {11.0f}, 8.0f}}}});
}
}  // namespace

TEST(Auto, ArgminOfThePriorWithNcclsTieRule) {
  const Trace tr = trace_policy(config_of(PolicyKind::kAuto), sweep_with_tie(), 0, 5);
  EXPECT_EQ(tr.picks, std::vector<int>(5, 1));  // tie 7 == 7 -> lowest slot
  EXPECT_DOUBLE_EQ(tr.outcome.online_loss, 12.0 / 9.0 - 1.0);
  EXPECT_DOUBLE_EQ(tr.outcome.final_loss, 12.0 / 9.0 - 1.0);
}

TEST(Oracle, PlaysTheBestMeasuredArm) {
  const Trace tr = trace_policy(config_of(PolicyKind::kOracle), sweep_with_tie(), 0, 5);
  EXPECT_EQ(tr.picks, std::vector<int>(5, 4));
  EXPECT_EQ(tr.outcome.online_loss, 0.0);
  EXPECT_EQ(tr.outcome.final_loss, 0.0);
}

TEST(Random, UniformOverValidArmsFromTheDocumentedWord) {
  const uint64_t seed = 8, id = 1234;
  const Trace tr = trace_policy(config_of(PolicyKind::kRandom), sweep_with_tie(), 0, 3000, seed, id);
  const int slots[3] = {1, 4, 5};
  int count[3] = {0, 0, 0};
  for (int t = 0; t < 3000; ++t) {
    const int j = int(uint64_t(philox_block(seed, id, uint32_t(t), 1).v[0]) * 3 >> 32);
    ASSERT_EQ(tr.picks[size_t(t)], slots[j]);
    ++count[j];
  }
  // Binomial(3000, 1/3): sd 25.8; 6 sd either side.
  for (int c : count) EXPECT_NEAR(c, 1000, 155);
  const int commit_j = int(uint64_t(philox_block(seed, id, 3000, 1).v[0]) * 3 >> 32);
  EXPECT_EQ(tr.outcome.final_slot, slots[commit_j]);
}

TEST(Fixed, PlaysTheFrozenDecisionOrFallsBackToAuto) {
  EXPECT_EQ(trace_policy(config_of(PolicyKind::kKnn), sweep_with_tie(), 0, 4, 1, 1, 5).picks,
            std::vector<int>(4, 5));
  EXPECT_EQ(trace_policy(config_of(PolicyKind::kTree), sweep_with_tie(), 0, 4, 1, 1, 2).picks,
            std::vector<int>(4, 1));
}

// Driven as the plugin drives it: a cost table with -1 on a valid arm (NCCL's "ignored") gives
// that arm no pseudo-observations, so warm UCB1 tries it first and then trusts the priors.
TEST(PluginFacing, MissingPriorValueStartsThatArmCold) {
  float prior[kNumArms];
  for (float& p : prior) p = -1.0f;
  prior[0] = 10.0f;
  prior[4] = -1.0f;
  prior[5] = 50.0f;
  PolicyContext ctx;
  ctx.mask.set(0);
  ctx.mask.set(4);
  ctx.mask.set(5);
  ctx.prior_us = prior;
  PolicyConfig cfg = config_of(PolicyKind::kUcb1);
  cfg.n0 = 8;
  cfg.c = 0.1;
  AnyPolicy p = make_policy(cfg);
  policy_reset(p, ctx);
  StepRandom rng(0, 7, 0);
  EXPECT_EQ(policy_select(p, rng), 4);  // the only arm with N = 0
  policy_update(p, 4, 30.0);
  // Now N = (8, 1, 8), means (10, 30, 50): arm 0 has the smallest index.
  StepRandom rng1(0, 7, 1);
  EXPECT_EQ(policy_select(p, rng1), 0);
  PolicyConfig autocfg = config_of(PolicyKind::kAuto);
  AnyPolicy a = make_policy(autocfg);
  policy_reset(a, ctx);
  EXPECT_EQ(policy_select(a, rng), 0);
}
