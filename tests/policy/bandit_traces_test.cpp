// Each bandit against a trace computed by hand on a 3-arm context with one sample per arm
// (slots 0, 1, 2 = Tree/LL, Tree/LL128, Tree/Simple at 10, 12 and 20 µs), so no randomness enters.
#include <gtest/gtest.h>

#include <cmath>

#include "ncclbot/policy/policy.hpp"
#include "support/policy_trace.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

Sweep three_arms(std::optional<float> p0 = {}, std::optional<float> p1 = {}, std::optional<float> p2 = {}) {
  return tiny_sweep({{tiny_context(1, 1024), {{0, {10.0f}, p0}, {1, {12.0f}, p1}, {2, {20.0f}, p2}}}});
}

}  // namespace

// UCB1 (ucb1.hpp), c = 0.5, cold: index_i = mean_i - 0.5 * m* * sqrt(2 ln t) / sqrt(N_i), m* = 10.
//   t=0..2: arms untried -> 0, 1, 2.                          N = (1,1,1)
//   t=3: total 3, 5*sqrt(2 ln 3)=7.4116: 2.588, 4.588, 12.59 -> 0      N = (2,1,1)
//   t=4: total 4, 5*sqrt(2 ln 4)=8.3255: 10-8.3255/1.4142=4.113, 12-8.3255=3.674 -> 1   (2,2,1)
//   t=5: total 5, 8.9706: 10-6.343=3.657, 12-6.343=5.657, 20-8.97=11.03 -> 0           (3,2,1)
//   t=6: total 6, 9.4651: 10-9.4651/1.7321=4.535, 12-6.693=5.307, 10.53 -> 0           (4,2,1)
//   t=7: total 7, 9.8639: 10-9.8639/2=5.068, 12-9.8639/1.4142=5.025 -> 1               (4,3,1)
//   t=8: total 8, 10.1967: 10-5.098=4.902, 12-10.1967/1.7321=6.113, 9.80 -> 0          (5,3,1)
//   t=9: total 9, 10.4815: 10-10.4815/2.2361=5.313, 12-6.0515=5.949, 9.52 -> 0
TEST(Ucb1, ColdTraceMatchesHandComputation) {
  PolicyConfig cfg = config_of(PolicyKind::kUcb1);
  cfg.c = 0.5;
  cfg.n0 = 0;
  const Trace tr = trace_policy(cfg, three_arms(), 0, 10);
  EXPECT_EQ(tr.picks, (std::vector<int>{0, 1, 2, 0, 1, 0, 0, 1, 0, 0}));
}

// Warm, n0 = 16 pseudo-pulls at a prior equal to the truth: no forced exploration. For t < 58,
// arm 0's index <= 10 - 5 sqrt(2 ln 48)/sqrt(26) = 7.27 while arm 1's >= 12 - 5 sqrt(2 ln 57)/4
// = 8.44 and arm 2's is larger still, so all 10 picks are arm 0; the cold start plays arm 2.
TEST(Ucb1, WarmStartSkipsTheExplorationTheColdStartPays) {
  PolicyConfig cfg = config_of(PolicyKind::kUcb1);
  cfg.c = 0.5;
  cfg.n0 = 16;
  const Sweep warm_sweep = three_arms(10.0f, 12.0f, 20.0f);
  EXPECT_EQ(trace_policy(cfg, warm_sweep, 0, 10).picks, std::vector<int>(10, 0));
  cfg.n0 = 0;  // the same sweep, cold
  EXPECT_EQ(trace_policy(cfg, warm_sweep, 0, 3).picks, (std::vector<int>{0, 1, 2}));
}

// Greedy cold: each arm once, then the smallest mean forever.
TEST(Greedy, ColdPlaysEachArmOnceThenExploits) {
  PolicyConfig cfg = config_of(PolicyKind::kGreedy);
  cfg.n0 = 0;
  EXPECT_EQ(trace_policy(cfg, three_arms(), 0, 6).picks, (std::vector<int>{0, 1, 2, 0, 0, 0}));
}

// Greedy warm (n0 = 1) with a misleading prior: prior (5, 11, 30) vs truth (10, 12, 8 at slot 2).
// Arm 0's mean (5 + 10 n)/(1 + n) stays below 10 < 11 < 30, so greedy never tries arm 2:
// every step and the commit lose 10/8 - 1 = 0.25 exactly.
TEST(Greedy, WarmStartTrustsTheModelAndCanBeStuck) {
  const Sweep s =
      tiny_sweep({{tiny_context(1, 1024), {{0, {10.0f}, 5.0f}, {1, {12.0f}, 11.0f}, {2, {8.0f}, 30.0f}}}});
  PolicyConfig cfg = config_of(PolicyKind::kGreedy);
  cfg.n0 = 1;
  const Trace tr = trace_policy(cfg, s, 0, 20);
  EXPECT_EQ(tr.picks, std::vector<int>(20, 0));
  EXPECT_EQ(tr.outcome.online_loss, 0.25);
  EXPECT_EQ(tr.outcome.final_loss, 0.25);
  EXPECT_EQ(tr.outcome.final_slot, 0);
  cfg.n0 = 0;  // cold: finds slot 2 after one probe each
  const Trace cold = trace_policy(cfg, s, 0, 20);
  EXPECT_EQ(cold.outcome.final_slot, 2);
  // online: t=0 loses 0.25, t=1 loses 0.5, t=2.. lose 0 -> 0.75 / 20
  EXPECT_DOUBLE_EQ(cold.outcome.online_loss, 0.75 / 20);
}

// ETC with m = 2 on 3 arms: round-robin 0,1,2,0,1,2 (m K = 6 probes), then the best for good.
TEST(Etc, ProbesEveryArmMTimesThenCommits) {
  PolicyConfig cfg = config_of(PolicyKind::kExploreThenCommit);
  cfg.m = 2;
  const Trace tr = trace_policy(cfg, three_arms(), 0, 12);
  EXPECT_EQ(tr.picks, (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 0, 0, 0, 0, 0}));
  int probes[3] = {0, 0, 0};
  for (int t = 0; t < 6; ++t) ++probes[tr.picks[size_t(t)]];
  EXPECT_EQ(probes[0], 2);
  EXPECT_EQ(probes[1], 2);
  EXPECT_EQ(probes[2], 2);
  // Horizon shorter than m K: still probing at T; commit = best among probed arms.
  const Trace short_tr = trace_policy(cfg, three_arms(), 0, 2);
  EXPECT_EQ(short_tr.picks, (std::vector<int>{0, 1}));
  EXPECT_EQ(short_tr.outcome.final_slot, 0);
}

// ETC commits once: with 2 samples per arm (arm 0: 10 then 30, arm 1: 15, 15) the commit is
// made on the probes and never revisited, whatever arm 0 shows later.
TEST(Etc, NeverRevisitsItsCommitment) {
  const Sweep s = tiny_sweep({{tiny_context(1, 1024), {{0, {10.0f, 30.0f}}, {1, {15.0f, 15.0f}}}}});
  PolicyConfig cfg = config_of(PolicyKind::kExploreThenCommit);
  cfg.m = 1;
  const Trace tr = trace_policy(cfg, s, 0, 50);
  for (int t = 3; t < 50; ++t) EXPECT_EQ(tr.picks[size_t(t)], tr.picks[2]);
}

// Sliding-window UCB, window 3, c = 0 (windowed greedy), arms 0 (10 µs) and 1 (12 µs), cold:
//   t0: 0 (untried)  window {0}        t1: 1 (untried)  {0,1}     t2: 0  {0,1,0}
//   t3: 0, evicts t0 -> {1,0,0}        t4: 0, evicts t1 (arm 1 leaves) -> {0,0,0}
//   t5: arm 1 has N = 0 -> 1, evicts t2 -> {0,0,1}      t6: 0 -> {0,1,0}   t7: 0 -> {1,0,0}
//   t8: 0, evicts t5 -> {0,0,0}        t9: 1
TEST(SwUcb, ForgetsWhatLeavesTheWindow) {
  const Sweep s = tiny_sweep({{tiny_context(1, 1024), {{0, {10.0f}}, {1, {12.0f}}}}});
  PolicyConfig cfg = config_of(PolicyKind::kSwUcb);
  cfg.c = 0.0;
  cfg.window = 3;
  cfg.n0 = 0;
  EXPECT_EQ(trace_policy(cfg, s, 0, 10).picks, (std::vector<int>{0, 1, 0, 0, 0, 1, 0, 0, 0, 1}));
  cfg.window = 100;  // a window longer than the horizon is UCB1
  PolicyConfig ucb = config_of(PolicyKind::kUcb1);
  ucb.c = 0.5;
  ucb.n0 = 0;
  cfg.c = 0.5;
  EXPECT_EQ(trace_policy(cfg, three_arms(), 0, 60).picks, trace_policy(ucb, three_arms(), 0, 60).picks);
}

// epsilon-greedy: eps = 0 is greedy; eps = 1 explores every step with arm[uniform_below(w1, K)],
// w1 = word 1 of lane 1 of the step's Philox block (egreedy.hpp), computed here independently.
TEST(EpsGreedy, ZeroEpsIsGreedyAndFullEpsFollowsTheDocumentedDraws) {
  PolicyConfig cfg = config_of(PolicyKind::kEpsGreedy);
  cfg.eps = 0.0;
  cfg.n0 = 0;
  PolicyConfig greedy = config_of(PolicyKind::kGreedy);
  greedy.n0 = 0;
  EXPECT_EQ(trace_policy(cfg, three_arms(), 0, 30).picks, trace_policy(greedy, three_arms(), 0, 30).picks);

  cfg.eps = 1.0;
  const uint64_t seed = 3, id = 99;
  const Trace tr = trace_policy(cfg, three_arms(), 0, 40, seed, id);
  int seen[3] = {0, 0, 0};
  for (int t = 0; t < 40; ++t) {
    const uint32_t w1 = philox_block(seed, id, uint32_t(t), 1).v[1];
    EXPECT_EQ(tr.picks[size_t(t)], int(uint64_t(w1) * 3 >> 32)) << t;
    ++seen[tr.picks[size_t(t)]];
  }
  EXPECT_GT(seen[0] * seen[1] * seen[2], 0);
}

// Decaying eps: eps_t = 1 / (1 + 1e12 t) explores at t = 0 only (u >= 2^-33 > eps_t for t >= 1),
// so from t = 1 on it is greedy with the t = 0 observation in hand.
TEST(EpsGreedy, DecayStopsExploration) {
  PolicyConfig cfg = config_of(PolicyKind::kEpsGreedy);
  cfg.eps = 1.0;
  cfg.decay = 1e12;
  cfg.n0 = 0;
  const Trace tr = trace_policy(cfg, three_arms(), 0, 8, 3, 99);
  const int first = int(uint64_t(philox_block(3, 99, 0, 1).v[1]) * 3 >> 32);
  EXPECT_EQ(tr.picks[0], first);
  // Greedy from t = 1: the untried arms in slot order, then arm 0.
  std::vector<int> expect{first};
  for (int s = 0; s < 3; ++s)
    if (s != first) expect.push_back(s);
  while (expect.size() < 8) expect.push_back(0);
  EXPECT_EQ(tr.picks, expect);
}

// Thompson, cold: untried arms first; then theta_i = mean_i + sigma z_i / sqrt(N_i) on log-latency
// with z_i from the step's policy words, recomputed here from the definition in thompson.hpp.
TEST(Thompson, FollowsItsPosteriorDraws) {
  PolicyConfig cfg = config_of(PolicyKind::kThompson);
  cfg.n0 = 0;
  cfg.sigma = 0.2;
  const uint64_t seed = 11, id = 5;
  const Trace tr = trace_policy(cfg, three_arms(), 0, 200, seed, id);
  EXPECT_EQ((std::vector<int>(tr.picks.begin(), tr.picks.begin() + 3)), (std::vector<int>{0, 1, 2}));
  const double y[3] = {std::log(10.0), std::log(12.0), std::log(20.0)};
  int n[3] = {1, 1, 1};
  for (int t = 3; t < 200; ++t) {
    int best = -1;
    double best_theta = 0;
    for (int j = 0; j < 3; ++j) {
      const uint32_t w = philox_block(seed, id, uint32_t(t), 1).v[j];
      const double theta =
          y[j] + 0.2 * normal_quantile((double(w) + 0.5) / 4294967296.0) / std::sqrt(double(n[j]));
      if (best < 0 || theta < best_theta) best = j, best_theta = theta;
    }
    ASSERT_EQ(tr.picks[size_t(t)], best) << t;
    ++n[best];
  }
  EXPECT_GT(n[0], 150);  // log 12 - log 10 = 0.18 ~ sigma: arm 0 dominates after ~200 steps
}

// Thompson warm with a tight prior on the truth (n0 large, sigma small) behaves like greedy.
TEST(Thompson, TightWarmPriorIsGreedy) {
  PolicyConfig cfg = config_of(PolicyKind::kThompson);
  cfg.n0 = 100;
  cfg.sigma = 0.01;  // theta spread 0.001 << log(12/10) = 0.18
  EXPECT_EQ(trace_policy(cfg, three_arms(10.0f, 12.0f, 20.0f), 0, 50).picks, std::vector<int>(50, 0));
}

// A prior weight below one (n0 = 0.1 on three arms: t = 0.3) once gave ln t < 0 and NaN indices,
// which compare false with everything. No pull count below one earns exploration, so the first
// pick is the smallest prior (arm 0 at 10 µs) and every index stays a number.
TEST(Ucb1, FractionalPriorWeightBelowOneGivesNumbersNotNaN) {
  PolicyConfig cfg = config_of(PolicyKind::kUcb1);
  cfg.c = 0.5;
  cfg.n0 = 0.1;
  const Sweep s = three_arms(10.0f, 12.0f, 20.0f);
  const Trace tr = trace_policy(cfg, s, 0, 3);
  ASSERT_EQ(tr.picks.size(), 3u);
  EXPECT_EQ(tr.picks[0], 0);
  EXPECT_EQ(exploration_bonus(0.3), 0.0);
  EXPECT_EQ(exploration_bonus(1.0), 0.0);
  EXPECT_NEAR(exploration_bonus(3.0), std::sqrt(2.0 * std::log(3.0)), 1e-15);
}
