// Pending-aware decisions (policy_context.hpp, PendingPulls): a decision made while earlier ones
// still await their latency counts each of them as a pull at its arm's current estimate, so a batch
// decided from one state spreads its exploration. Every trace below is worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

struct Batch {
  std::vector<int> aware, blind;
};

// `n` decisions of `cfg`, each counted as pending for the next ones, and the same decisions made
// blind (plain select()). They start from the state reset() gives, or, with `first_latency`, from
// the state after the first decision's latency arrived (no batch before it); no later latency
// arrives.
Batch decide_batch(const PolicyConfig& cfg, const ArmMask& mask, const float* prior, int n,
                   std::optional<double> first_latency = std::nullopt) {
  PolicyContext ctx;
  ctx.mask = mask;
  ctx.prior_us = prior;
  Batch b;
  AnyPolicy aware = make_policy(cfg);
  policy_reset(aware, ctx);
  const int t0 = first_latency ? 1 : 0;
  if (first_latency) {
    StepRandom first(7, 3, 0);
    policy_update(aware, policy_select(aware, first), *first_latency);
  }
  AnyPolicy blind = aware;
  PendingPulls pending{};
  for (int t = t0; t < t0 + n; ++t) {
    StepRandom rng(7, 3, uint32_t(t)), rng_blind(7, 3, uint32_t(t));
    const int slot = policy_select_pending(aware, rng, pending);
    b.aware.push_back(slot);
    ++pending.count[slot];
    ++pending.total;
    b.blind.push_back(policy_select(blind, rng_blind));
  }
  return b;
}

ArmMask slots(std::initializer_list<int> list) {
  ArmMask m;
  for (int s : list) m.set(s);
  return m;
}

}  // namespace

// UCB1, c = 1, n0 = 1, prior 10 µs on slot 0 (A) and 11 µs on slot 1 (B): N = (1, 1), t = 2,
// m* = 10. Decision j sees the earlier ones pending: N_i + p_i pulls and t + P in the bonus.
//   1: nothing pending:   10 sqrt(2 ln 2) = 11.7741: A 10 - 11.7741 = -1.774, B -0.774   -> A
//   2: p = (1, 0), t' 3:  14.8230: A 10 - 14.8230/sqrt 2 = -0.481, B 11 - 14.8230 = -3.823 -> B
//   3: p = (1, 1), t' 4:  16.6511: A 10 - 11.7741 = -1.774, B 11 - 11.7741 = -0.774        -> A
//   4: p = (2, 1), t' 5:  17.9412: A 10 - 17.9412/sqrt 3 = -0.358, B 11 - 12.6863 = -1.686 -> B
// Blind, the state never changes: A four times.
TEST(PendingPulls, Ucb1SpreadsABatchOfFourOverTwoArmsAsTheHandTraceSays) {
  PolicyConfig cfg;
  cfg.kind = PolicyKind::kUcb1;
  cfg.c = 1.0;
  cfg.n0 = 1.0;
  float prior[kNumArms];
  for (float& p : prior) p = -1.0f;
  prior[0] = 10.0f;
  prior[1] = 11.0f;
  const Batch b = decide_batch(cfg, slots({0, 1}), prior, 4);
  EXPECT_EQ(b.aware, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(b.blind, (std::vector<int>{0, 0, 0, 0}));
}

// The same hallucinated pulls in SW-UCB and D-UCB (confidence_bound_select_pending): the same
// state as UCB1's above before any latency arrives, so the same batch.
TEST(PendingPulls, SlidingWindowAndDiscountedUcbSpreadTheSameBatch) {
  float prior[kNumArms];
  for (float& p : prior) p = -1.0f;
  prior[0] = 10.0f;
  prior[1] = 11.0f;
  for (PolicyKind kind : {PolicyKind::kSwUcb, PolicyKind::kDiscountedUcb}) {
    PolicyConfig cfg;
    cfg.kind = kind;
    cfg.c = 1.0;
    cfg.n0 = 1.0;
    const Batch b = decide_batch(cfg, slots({0, 1}), prior, 4);
    EXPECT_EQ(b.aware, (std::vector<int>{0, 1, 0, 1})) << int(kind);
    EXPECT_EQ(b.blind, (std::vector<int>{0, 0, 0, 0})) << int(kind);
  }
}

// Cold UCB1 on slots 0, 2, 5 with nothing observed: each arm with neither a pull nor a pending one
// first (0, 2, 5), then the fewest pulls N + p, lowest slot on ties (all at 1: 0, then 2 at 1 vs
// 0 at 2). Blind, the first untried arm (slot 0) every time.
TEST(PendingPulls, ColdUcb1KeepsSpreadingUntilTheFirstLatenciesArrive) {
  PolicyConfig cfg;
  cfg.kind = PolicyKind::kUcb1;
  cfg.c = 0.5;
  cfg.n0 = 0.0;
  const Batch b = decide_batch(cfg, slots({0, 2, 5}), nullptr, 5);
  EXPECT_EQ(b.aware, (std::vector<int>{0, 2, 5, 0, 2}));
  EXPECT_EQ(b.blind, (std::vector<int>(5, 0)));
}

// Cold greedy on slots 0, 2, 5 with nothing observed: each arm with neither a pull nor a pending one
// first (0, 2, 5); then, none observed, the fewest pulls, lowest slot on ties (0, then 2). Warm, a
// pending pull at an arm's mean changes nothing: the prior's best every time, as blind.
TEST(PendingPulls, GreedyCountsPendingPullsOnlyAtItsColdStart) {
  PolicyConfig cfg;
  cfg.kind = PolicyKind::kGreedy;
  cfg.n0 = 0.0;
  Batch b = decide_batch(cfg, slots({0, 2, 5}), nullptr, 5);
  EXPECT_EQ(b.aware, (std::vector<int>{0, 2, 5, 0, 2}));
  EXPECT_EQ(b.blind, (std::vector<int>(5, 0)));
  float prior[kNumArms];
  for (float& p : prior) p = -1.0f;
  prior[0] = 12.0f, prior[2] = 10.0f, prior[5] = 11.0f;
  cfg.n0 = 1.0;
  b = decide_batch(cfg, slots({0, 2, 5}), prior, 5);
  EXPECT_EQ(b.aware, (std::vector<int>(5, 2)));
  EXPECT_EQ(b.blind, (std::vector<int>(5, 2)));
}

// Blind bets (ArmStats::blind_bets): once a latency has arrived, an arm whose estimate is still its
// prior alone and that has a pull pending is passed over. Warm greedy, n0 = 1, prior A (slot 0)
// 10 us, B (slot 1) 11, C (slot 2) 12; A is played (smallest prior) and its latency, 30, arrives:
// mean_A = (10 + 30) / 2 = 20, B and C hold their priors. Then a batch of 4:
//   1: nothing pending: argmin of (20, 11, 12)             -> B
//   2: B pending, a blind bet: argmin of (A 20, C 12)      -> C
//   3: B and C pending, both blind bets: A is left         -> A
//   4: the same                                            -> A
// Epsilon-greedy at eps = 0 is its greedy branch. Blind (plain select()), B four times.
TEST(PendingPulls, WarmGreedyPassesOverAPriorOnlyArmWithAPullPending) {
  float prior[kNumArms];
  for (float& p : prior) p = -1.0f;
  prior[0] = 10.0f, prior[1] = 11.0f, prior[2] = 12.0f;
  PolicyConfig eps = parse_policy_spec("egreedy:eps=0.1,n0=1").config;
  eps.eps = 0.0;
  for (const PolicyConfig& cfg : {parse_policy_spec("greedy:n0=1").config, eps}) {
    const Batch b = decide_batch(cfg, slots({0, 1, 2}), prior, 4, 30.0);
    EXPECT_EQ(b.aware, (std::vector<int>{1, 2, 0, 0})) << int(cfg.kind);
    EXPECT_EQ(b.blind, (std::vector<int>(4, 1))) << int(cfg.kind);
  }
}

// The same state in UCB1, c = 1, n0 = 1 (N = (2, 1, 1), t = 4, m* = 11), each decision with the
// earlier ones pending (N_i + p_i pulls, t + P in the bonus):
//   1: nothing pending, 11 sqrt(2 ln 4) = 18.3162:
//      A 20 - 18.3162 / sqrt 2 = 7.048, B 11 - 18.3162 = -7.316, C 12 - 18.3162 = -6.316  -> B
//   2: B pending, t' 5, 11 sqrt(2 ln 5) = 19.7354; B a blind bet:
//      A 20 - 19.7354 / sqrt 2 = 6.045, C 12 - 19.7354 = -7.735                           -> C
//   3: B and C pending, both blind bets; A is left                                          -> A
//      (counted as pulls at their means they would give B: 11 - 20.8232 / sqrt 2 = -3.724,
//      against A 20 - 14.7243 = 5.276 and C 12 - 14.7243 = -2.724, with t' 6: 20.8232)
//   4: the same                                                                             -> A
// SW-UCB (window 50) and D-UCB hold the same state after one latency, so they decide the same.
// Blind, B four times.
TEST(PendingPulls, WarmUcbPassesOverAPriorOnlyArmWithAPullPending) {
  float prior[kNumArms];
  for (float& p : prior) p = -1.0f;
  prior[0] = 10.0f, prior[1] = 11.0f, prior[2] = 12.0f;
  for (const char* spec : {"ucb1:c=1,n0=1", "swucb:c=1,window=50,n0=1", "ducb:c=1,gamma=0.9,n0=1"}) {
    const Batch b = decide_batch(parse_policy_spec(spec).config, slots({0, 1, 2}), prior, 4, 30.0);
    EXPECT_EQ(b.aware, (std::vector<int>{1, 2, 0, 0})) << spec;
    EXPECT_EQ(b.blind, (std::vector<int>(4, 1))) << spec;
  }
}

// Cold Thompson sampling and cold epsilon-greedy at eps = 0 start as cold greedy does (untried arms
// first, ArmStats::cold_start_pending): a batch on slots 0, 2, 5 with nothing observed plays 0, 2, 5,
// then the fewest pulls, 0 and 2; blind, the first untried slot every time.
TEST(PendingPulls, ColdThompsonAndEpsilonGreedyStartAsGreedyDoes) {
  PolicyConfig thompson = parse_policy_spec("thompson:n0=0").config;
  Batch b = decide_batch(thompson, slots({0, 2, 5}), nullptr, 5);
  EXPECT_EQ(b.aware, (std::vector<int>{0, 2, 5, 0, 2}));
  EXPECT_EQ(b.blind, (std::vector<int>(5, 0)));
  PolicyConfig eps = parse_policy_spec("egreedy:eps=0.1,n0=0").config;
  eps.eps = 0.0;
  b = decide_batch(eps, slots({0, 2, 5}), nullptr, 5);
  EXPECT_EQ(b.aware, (std::vector<int>{0, 2, 5, 0, 2}));
  EXPECT_EQ(b.blind, (std::vector<int>(5, 0)));
}

// Cold epsilon-greedy, eps = 0.3, slots 0, 2, 5, nothing observed, one pull of slot 0 pending: the
// greedy branch plays slot 2 (untried, nothing pending), exploring plays each slot with 0.3 / 3.
// So P(2) = 0.1 + 0.7 = 0.8 and P(0) = P(5) = 0.1: the logged probability says so for each answer,
// the logged decision is the replay's (select_pending_with), and over 4,000 steps slot 2 comes up
// 0.8 of the time (binomial sd 0.0063; the bound is 5 sd).
TEST(PendingPulls, ColdEpsilonGreedyLogsTheProbabilityOfItsPendingAwareAnswer) {
  PolicyContext ctx;
  ctx.mask = slots({0, 2, 5});
  PendingPulls pending{};
  pending.count[0] = 1;
  pending.total = 1;
  const PolicyConfig cfg = parse_policy_spec("egreedy:eps=0.3,n0=0").config;
  int twos = 0;
  constexpr int kSteps = 4000;
  for (int t = 0; t < kSteps; ++t) {
    AnyPolicy a = make_policy(cfg), b = make_policy(cfg);
    policy_reset(a, ctx);
    policy_reset(b, ctx);
    StepRandom r1(5, 9, uint32_t(t)), r2(5, 9, uint32_t(t));
    double probability = -1.0;
    const int logged = policy_select_pending_logged(a, r1, pending, &probability);
    const int replayed =
        with_policy(b, [&](auto& p) { return select_pending_with(p, r2, SelectAids{}, pending); });
    ASSERT_EQ(logged, replayed) << t;
    EXPECT_DOUBLE_EQ(probability, logged == 2 ? 0.3 / 3 + 0.7 : 0.3 / 3) << t;
    twos += logged == 2;
  }
  EXPECT_NEAR(double(twos) / kSteps, 0.8, 5 * std::sqrt(0.8 * 0.2 / kSteps));
}

// ETC, m = 2, three arms: the probes already issued count, so a batch issues 0, 1, 2, 0, 1, 2;
// with every probe issued and none observed it plays the first valid slot until it can commit.
// Blind, the first probe (slot 0) every time.
TEST(PendingPulls, ExploreThenCommitIssuesTheNextProbesInOrder) {
  PolicyConfig cfg;
  cfg.kind = PolicyKind::kExploreThenCommit;
  cfg.m = 2;
  const Batch b = decide_batch(cfg, slots({0, 1, 2}), nullptr, 8);
  EXPECT_EQ(b.aware, (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 0}));
  EXPECT_EQ(b.blind, (std::vector<int>(8, 0)));
}

// Warm epsilon-greedy and Thompson sampling (every arm has a prior: no cold start) and random decide
// as select() does whatever is pending, with the same probability in the logged form; a
// deterministic pending-aware one logs probability 1. Checked over states reached by real updates.
TEST(PendingPulls, OthersDecideAsUndelayedAndTheLoggedFormAgrees) {
  float prior[kNumArms];
  for (float& p : prior) p = -1.0f;
  prior[0] = 12.0f, prior[1] = 10.0f, prior[4] = 11.0f;
  PolicyContext ctx;
  ctx.mask = slots({0, 1, 4});
  ctx.prior_us = prior;
  for (const char* spec : {"greedy:n0=2", "egreedy:eps=0.3,n0=2", "thompson:n0=2", "random", "ucb1:n0=2",
                           "swucb:n0=2", "ducb:n0=2", "etc"}) {
    const PolicyConfig cfg = parse_policy_spec(spec).config;
    const bool aware = cfg.kind == PolicyKind::kUcb1 || cfg.kind == PolicyKind::kSwUcb ||
                       cfg.kind == PolicyKind::kDiscountedUcb || cfg.kind == PolicyKind::kExploreThenCommit ||
                       cfg.kind == PolicyKind::kGreedy;
    AnyPolicy a = make_policy(cfg), b = make_policy(cfg), c = make_policy(cfg);
    policy_reset(a, ctx);
    policy_reset(b, ctx);
    policy_reset(c, ctx);
    PendingPulls pending{};
    pending.count[1] = 3;
    pending.count[4] = 1;
    pending.total = 4;
    const PendingPulls none{};
    for (int t = 0; t < 40; ++t) {
      StepRandom r1(11, 5, uint32_t(t)), r2(11, 5, uint32_t(t)), r3(11, 5, uint32_t(t)),
          r4(11, 5, uint32_t(t));
      AnyPolicy before = a;
      double expected = -1.0;
      const int expected_slot = policy_select_logged(before, r4, &expected);
      const int plain = policy_select(a, r1);
      ASSERT_EQ(expected_slot, plain) << spec;
      double probability = -1.0;
      const int logged = policy_select_pending_logged(b, r2, pending, &probability);
      EXPECT_EQ(policy_select_pending(c, r3, none), plain) << spec << " t " << t;
      if (aware) {
        EXPECT_EQ(probability, 1.0) << spec;
      } else {
        EXPECT_EQ(logged, plain) << spec << " t " << t;
        if (std::isnan(expected))
          EXPECT_TRUE(std::isnan(probability)) << spec;
        else
          EXPECT_EQ(probability, expected) << spec << " t " << t;
      }
      const double x = 9.0 + double((t * 7) % 5);
      policy_update(a, plain, x);
      policy_update(b, aware ? logged : plain, x);
      policy_update(c, plain, x);
    }
  }
}
