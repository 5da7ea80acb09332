// The conservative wrapper (policy/conservative.hpp): its budget test at states set by hand, against
// values computed independently with Python's math module (commands below), and in replays, where
// replay/budget_check.hpp must find no break of the budget when the wrapper's assumptions hold.
#include <gtest/gtest.h>

#include <vector>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/policy/conservative.hpp"
#include "ncclbot/policy/greedy.hpp"
#include "ncclbot/replay/budget_check.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

// Two arms: slot 0 (prior 9 µs: AUTO's, the baseline) and slot 2 (prior 12 µs).
using Wrapped = ConservativePolicyT<GreedyPolicyT<kNumArms>, kNumArms>;

Wrapped two_arm_wrapper(double alpha, double worst) {
  PolicyContext ctx;
  ctx.mask.set(0);
  ctx.mask.set(2);
  const float prior[kNumArms] = {9.0f, -1.0f, 12.0f};
  ctx.prior_us = prior;
  Wrapped w{};
  w.base.params = {1.0};
  w.params = {alpha, 0.05, 0.1, worst};
  w.reset(ctx);
  return w;
}

}  // namespace

// Baseline mean 10 and the other arm's 9 over 4 latencies each; 5 baseline and 4 other decisions; at
// call t = 10 with K = 2, delta = 0.05, noise = 0.1:
//   r = 0.1 sqrt(2 (ln(pi^2 2 / 0.15) + 3 ln 10) / 4) = 0.242770, L_b = 10 / (1 + r) = 8.046539,
//   U_j = 9 / (1 - r) = 11.885429, and proposing j costs 5 U_j = 59.427145 <= ((1 + alpha) 10 - 5) L_b
//   exactly when alpha >= 0.238543.
// python3 -c "import math; r=0.1*math.sqrt(2*(math.log(math.pi**2*2/0.15)+3*math.log(10))/4);
//             print(r, 10/(1+r), 9/(1-r), (5*9/(1-r)/(10/(1+r))+5)/10-1)"
TEST(Conservative, BudgetTestMatchesTheBoundWorkedOutside) {
  for (double alpha : {0.237, 0.240}) {
    Wrapped w = two_arm_wrapper(alpha, 10.0);
    ASSERT_EQ(w.baseline, 0);
    for (int i = 0; i < 4; ++i) {
      w.update(0, 10.0);
      w.update(2, 9.0);
    }
    w.decided[0] = 5.0;
    w.decided[1] = 4.0;
    EXPECT_NEAR(w.radius(1, w.spread(10.0)), 0.2427702845914916, 1e-12);
    EXPECT_NEAR(w.lower(0, w.spread(10.0)), 8.04653935162851, 1e-9);
    EXPECT_NEAR(w.upper(1, w.spread(10.0)), 11.88542897467343, 1e-9);
    EXPECT_EQ(w.affordable(1, 10.0), alpha > 0.238543) << alpha;
  }
}

// An arm never observed is bounded by worst x U_b alone. Baseline mean 10 over 4 latencies, 5
// baseline decisions, call t = 6, worst = 2: r = 0.226440, U_b = 12.927244, L_b = 8.153681, and the
// unseen arm fits when 2 U_b <= ((1 + alpha) 6 - 5) L_b, i.e. alpha >= 0.361816.
// python3 -c "import math; r=0.1*math.sqrt(2*(math.log(math.pi**2*2/0.15)+3*math.log(6))/4);
//             print(r, 10/(1-r), 10/(1+r), (2*10/(1-r)/(10/(1+r))+5)/6-1)"
TEST(Conservative, AnUnseenArmCostsWorstTimesTheBaselinesBound) {
  for (double alpha : {0.35, 0.37}) {
    Wrapped w = two_arm_wrapper(alpha, 2.0);
    for (int i = 0; i < 4; ++i) w.update(0, 10.0);
    w.decided[0] = 5.0;
    EXPECT_NEAR(w.upper(1, w.spread(6.0)), 2.0 * 12.927243732807703, 1e-8);
    EXPECT_EQ(w.affordable(1, 6.0), alpha > 0.361816) << alpha;
  }
  // Before the baseline's first latency nothing but the baseline is affordable.
  Wrapped fresh = two_arm_wrapper(10.0, 1.0);
  EXPECT_FALSE(fresh.affordable(1, 1.0));
}

namespace {

// Slot 0 is AUTO's (lowest prior), 10 µs; slot 2 is better (8 µs); slots 5 and 7 are 4 and 3 times
// worse. Every sample lies within 5% of its arm's mean and no arm is above 4 x the baseline, so the
// wrapper's assumptions hold with noise = 0.1 and worst = 5.
Sweep four_arm_sweep() {
  return tiny_sweep({{tiny_context(1, 1024),
                      {{0, {10.0f, 10.5f, 9.5f}, 9.0f},
                       {2, {8.0f, 8.4f, 7.6f}, 12.0f},
                       {5, {40.0f, 42.0f, 38.0f}, 13.0f},
                       {7, {30.0f, 31.5f, 28.5f}, 14.0f}}}});
}

ReplayJob job_of(const Sweep& s, const std::vector<std::string>& specs, int seeds, int horizon) {
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0};
  for (const auto& spec : specs) job.configs.push_back(parse_policy_spec(spec));
  job.seeds = seeds;
  job.horizon = horizon;
  job.threads = 2;
  return job;
}

}  // namespace

// Cold UCB1 tries every arm first: 10 + 8 + 40 = 58 µs by call 3 against 1.05 x 3 x 10 = 31.5, a
// break at call 3 in every replay. In the wrapper (alpha 0.05) no replay of 200 breaks the budget,
// and it still finds the better arm.
TEST(Conservative, ReplaysKeepTheBudgetThatPlainUcb1Breaks) {
  const Sweep s = four_arm_sweep();
  const ReplayJob job =
      job_of(s, {"ucb1:n0=0", "ucb1:n0=0@conservative:alpha=0.05,noise=0.1,worst=5"}, 200, 3000);
  const BudgetCheck check = check_budget(job, 0.05);
  EXPECT_EQ(check.replays_per_config, 200);
  EXPECT_EQ(check.replays_broken[0], 200);
  EXPECT_EQ(check.seeds_broken[0], 200);
  EXPECT_EQ(check.first_break_call[0], 3);
  EXPECT_EQ(check.replays_broken[1], 0);
  EXPECT_EQ(check.seeds_broken[1], 0);
  EXPECT_EQ(check.first_break_call[1], 0);
  EXPECT_NEAR(check.largest_relative_deviation, 0.05, 1e-6);
  const ReplayResults res = run_cpu_replay(job);
  EXPECT_EQ(res.final_at(1, 0), 0.0);  // committed to slot 2, the best arm
  EXPECT_LT(res.online_at(1, 0), res.online_at(0, 0) + 0.25);
}
