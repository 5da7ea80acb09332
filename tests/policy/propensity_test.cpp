// The propensities the decision log records (policy_propensity, policy.hpp): in a fixed state, the
// frequency with which select() returns each arm over many independent random streams matches the
// stated probability within 4 standard errors; probabilities sum to 1 over the usable arms; a
// deterministic policy's choice does not depend on the stream; Thompson sampling states its win
// probability once it samples.
#include <gtest/gtest.h>

#include <cmath>

#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/policy_spec.hpp"

using namespace ncclbot;

namespace {

struct Prepared {
  AnyPolicy state;
  ArmMask mask;
};

Prepared prepared(const std::string& spec, int updates) {
  static float prior[kNumArms];
  for (int s = 0; s < kNumArms; ++s) prior[s] = -1.0f;
  const int slots[] = {0, 2, 4, 5, 7, 15};
  const float times[] = {30.0f, 12.0f, 14.0f, 50.0f, 13.0f, 20.0f};
  Prepared p;
  for (int i = 0; i < 6; ++i) {
    prior[slots[i]] = times[i];
    p.mask.set(slots[i]);
  }
  p.state = make_policy(parse_policy_spec(spec).config);
  PolicyContext ctx;
  ctx.mask = p.mask;
  ctx.prior_us = prior;
  policy_reset(p.state, ctx);
  for (int u = 0; u < updates; ++u) policy_update(p.state, slots[u % 6], double(times[u % 6]) * 1.1);
  return p;
}

// `sum_tolerance`: 1e-12 for closed-form probabilities, K * 1e-9 for Thompson sampling's integrals
// (thompson_win_probability.hpp states 1e-9 each).
void expect_frequencies_match(const std::string& spec, int updates, double sum_tolerance = 1e-12) {
  Prepared p = prepared(spec, updates);
  constexpr int kDraws = 200000;
  int count[kNumArms] = {};
  for (int i = 0; i < kDraws; ++i) {
    AnyPolicy copy = p.state;
    StepRandom rng(uint64_t(i) * 7919u + 1, 42, uint32_t(i));
    ++count[policy_select(copy, rng)];
  }
  double total = 0;
  for (int s = 0; s < kNumArms; ++s) {
    if (!p.mask.has(s)) {
      EXPECT_EQ(count[s], 0) << spec << " slot " << s;
      continue;
    }
    const double prob = policy_propensity(p.state, s);
    total += prob;
    const double se = std::sqrt(prob * (1 - prob) / kDraws) + 1e-12;
    EXPECT_NEAR(double(count[s]) / kDraws, prob, 4 * se + 1e-9) << spec << " slot " << s;
  }
  EXPECT_NEAR(total, 1.0, sum_tolerance) << spec;
}

}  // namespace

TEST(Propensity, RandomIsUniformOverTheUsableArms) {
  expect_frequencies_match("random", 0);
  Prepared p = prepared("random", 0);
  EXPECT_DOUBLE_EQ(policy_propensity(p.state, 4), 1.0 / 6.0);
}

TEST(Propensity, EpsilonGreedyMatchesItsFrequencies) {
  expect_frequencies_match("egreedy:eps=0.3,decay=0,n0=4", 0);
  expect_frequencies_match("egreedy:eps=0.3,decay=0,n0=4", 9);
  expect_frequencies_match("egreedy:eps=0.6,decay=0.5,n0=1", 5);  // eps_t = 0.6 / (1 + 0.5 t)
  // Greedy's choice (the smallest prior, slot 2 at 12 us) gets 1 - eps + eps/K, the others eps/K.
  Prepared p = prepared("egreedy:eps=0.3,decay=0,n0=4", 0);
  EXPECT_DOUBLE_EQ(policy_propensity(p.state, 2), 0.7 + 0.3 / 6.0);
  EXPECT_DOUBLE_EQ(policy_propensity(p.state, 7), 0.3 / 6.0);
}

TEST(Propensity, DeterministicPoliciesSayOneAndIgnoreTheStream) {
  for (const char* spec : {"auto", "greedy:n0=4", "ucb1:c=0.1,n0=4", "etc:m=2", "swucb:c=0.1,window=64,n0=4",
                           "ducb:c=0.1,gamma=0.99,n0=4"}) {
    Prepared p = prepared(spec, 7);
    AnyPolicy a = p.state, b = p.state;
    StepRandom r1(1, 2, 3), r2(99, 98, 97);
    const int s1 = policy_select(a, r1), s2 = policy_select(b, r2);
    EXPECT_EQ(s1, s2) << spec;
    EXPECT_EQ(policy_propensity(p.state, s1), 1.0) << spec;
  }
}

TEST(Propensity, ThompsonIsDeterministicWhileTryingItsArmsThenItsWinProbability) {
  Prepared fresh = prepared("thompson:n0=0,sigma=0.1", 0);
  EXPECT_EQ(policy_propensity(fresh.state, 0), 1.0);  // plays its untried arms in slot order
  EXPECT_EQ(policy_propensity(fresh.state, 2), 0.0);
  expect_frequencies_match("thompson:n0=4,sigma=0.1", 12, 6e-9);
  expect_frequencies_match("thompson:n0=1,sigma=0.3", 7, 6e-9);
  expect_frequencies_match("thompson:n0=2,sigma=0.05", 30, 6e-9);
}

// The plugin's deferred path: the same decision; probability 1 while arms are tried, else NaN with
// the contest, whose win probability is exactly policy_propensity()'s.
TEST(Propensity, ThompsonDefersItsIntegralWithTheContest) {
  int deferred_steps = 0, free_steps = 0;
  for (const char* spec : {"thompson:n0=0,sigma=0.2", "thompson:n0=1,sigma=0.2"})
    for (int updates : {0, 3, 6, 12, 40}) {
      Prepared p = prepared(spec, updates);
      for (int i = 0; i < 300; ++i) {
        AnyPolicy a = p.state, b = p.state;
        StepRandom r1(uint64_t(i), 9, uint32_t(i)), r2(uint64_t(i), 9, uint32_t(i));
        double prob = -1;
        ThompsonContest contest;
        const int logged = policy_select_logged(a, r1, &prob, &contest);
        ASSERT_EQ(logged, policy_select(b, r2));
        if (std::isnan(prob)) {
          ++deferred_steps;
          ASSERT_GT(contest.n, 1);
          ASSERT_EQ(thompson_win_probability(contest), policy_propensity(p.state, logged));
        } else {
          ++free_steps;
          ASSERT_EQ(prob, 1.0);
          ASSERT_EQ(policy_propensity(p.state, logged), 1.0);
        }
      }
    }
  EXPECT_GT(deferred_steps, 0);
  EXPECT_GT(free_steps, 0);
}

// The plugin's logged path (policy_select_logged) decides exactly as select() and states exactly
// the propensity policy_propensity() gives, for every policy kind that logs, over many streams.
TEST(Propensity, TheLoggedSelectIsTheSameDecisionAndProbability) {
  for (const char* spec : {"egreedy:eps=0.3,decay=0,n0=4", "egreedy:eps=0.9,decay=2,n0=1", "random",
                           "greedy:n0=4", "ucb1:c=0.1,n0=4", "etc:m=2", "thompson:n0=4,sigma=0.1"}) {
    for (int updates : {0, 3, 11}) {
      Prepared p = prepared(spec, updates);
      for (int i = 0; i < 2000; ++i) {
        AnyPolicy a = p.state, b = p.state;
        StepRandom r1(uint64_t(i), 5, uint32_t(i)), r2(uint64_t(i), 5, uint32_t(i));
        double prob = -1;
        const int logged = policy_select_logged(a, r1, &prob);
        const int plain = policy_select(b, r2);
        ASSERT_EQ(logged, plain) << spec << " stream " << i;
        ASSERT_EQ(prob, policy_propensity(p.state, plain)) << spec << " stream " << i;
      }
    }
  }
}
