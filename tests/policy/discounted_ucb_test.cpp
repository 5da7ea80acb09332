// Discounted UCB (policy/ducb.hpp) against traces worked out by hand, and against UCB1 where the
// discount is 1 and every sum is exact.
#include <gtest/gtest.h>

#include <vector>

#include "ncclbot/policy/policy.hpp"
#include "support/policy_trace.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

// Two arms, no prior. Arm 0 costs 10 µs until call 50 and 20 µs from then on; arm 1 costs 15 µs.
// Returns the first call t >= 2 at which the policy plays arm 1 again (after its cold-start probe).
int first_switch(const PolicyConfig& cfg) {
  PolicyContext ctx;
  ctx.mask.set(0);
  ctx.mask.set(1);
  int at = -1;
  visit_policy(cfg, [&](auto& p) {
    p.reset(ctx);
    for (int t = 0; t < 400 && at < 0; ++t) {
      StepRandom rng(1, 2, uint32_t(t));
      const int slot = p.select(rng);
      if (t >= 2 && slot == 1) at = t;
      p.update(slot, slot == 0 ? (t < 50 ? 10.0 : 20.0) : 15.0);
    }
    return 0;
  });
  return at;
}

}  // namespace

// c = 0 leaves the discounted means alone. Calls 0 and 1 probe arms 0 and 1; arm 0 then plays.
// After n calls at 20 µs arm 0's discounted mean exceeds arm 1's 15 µs when
//   sum_{i<n} g^i > sum_{i=n}^{n+47} g^i + g^(n+49)   (its 48 + 1 older 10 µs observations),
// i.e. about g^n (2 - g^50) < 1. For g = 0.9: n = 7 (0.9^6 * 1.995 = 1.06, 0.9^7 * 1.995 = 0.95),
// so arm 1 plays again at call 57. Without discount (g = 1) the means are (490 + 20n) / (49 + n),
// equal to 15 at n = 49 (a tie keeps the lower slot) and above it at n = 50: call 100.
// (Both numbers also follow from an exact rational simulation: Python's fractions, 2 arms.)
TEST(DiscountedUcb, ForgetsALevelShiftWithinAFewCallsWhereTheUndiscountedMeanNeedsFifty) {
  PolicyConfig cfg;
  cfg.kind = PolicyKind::kDiscountedUcb;
  cfg.c = 0.0;
  cfg.n0 = 0.0;
  cfg.gamma = 0.9;
  EXPECT_EQ(first_switch(cfg), 57);
  cfg.gamma = 1.0;
  EXPECT_EQ(first_switch(cfg), 100);
  PolicyConfig greedy;
  greedy.kind = PolicyKind::kGreedy;
  greedy.n0 = 0.0;
  EXPECT_EQ(first_switch(greedy), 100);
}

// With gamma = 1 and integer latencies every discounted sum is exact, so D-UCB is UCB1: the cold
// UCB1 trace worked out by hand in bandit_traces_test.cpp (arms at 10, 12, 20 µs, c = 0.5).
TEST(DiscountedUcb, WithoutDiscountItPlaysTheHandComputedUcb1Trace) {
  const Sweep s =
      tiny_sweep({{tiny_context(1, 1024), {{0, {10.0f}, {}}, {1, {12.0f}, {}}, {2, {20.0f}, {}}}}});
  PolicyConfig cfg;
  cfg.kind = PolicyKind::kDiscountedUcb;
  cfg.c = 0.5;
  cfg.n0 = 0.0;
  cfg.gamma = 1.0;
  EXPECT_EQ(trace_policy(cfg, s, 0, 10).picks, (std::vector<int>{0, 1, 2, 0, 1, 0, 0, 1, 0, 0}));
}

// The prior's pseudo-pulls never decay: an arm primed at 5 µs with n0 = 2 keeps a count of at
// least 2 however long another arm plays, so the index never divides by zero.
TEST(DiscountedUcb, PriorPseudoPullsDoNotDecay) {
  float prior[kNumArms];
  for (float& p : prior) p = -1.0f;
  prior[0] = 5.0f;
  prior[1] = 50.0f;
  PolicyContext ctx;
  ctx.mask.set(0);
  ctx.mask.set(1);
  ctx.prior_us = prior;
  DiscountedUcbPolicy p{};
  p.params = {0.1, 0.5, 2.0};
  p.reset(ctx);
  for (int t = 0; t < 200; ++t) p.update(1, 40.0);
  EXPECT_EQ(p.stats.count[0], 2.0);
  EXPECT_EQ(p.stats.mean[0], 5.0);
  // Arm 1: 2 pseudo-pulls + sum_{i<200} 0.5^i = 2 + 2 (to double precision).
  EXPECT_NEAR(p.stats.count[1], 4.0, 1e-12);
  EXPECT_NEAR(p.stats.mean[1], (2.0 * 50.0 + 2.0 * 40.0) / 4.0, 1e-9);
  EXPECT_EQ(p.stats.plays, 200);
}
