// The argmins of the knob-arm policies that skip most arms (policy/arm_blocks.hpp,
// policy/kinetic_argmin.hpp) against the definitions computed here by reading every arm: the
// smallest mean and the first arm holding it; the first arm at the smallest lower-confidence index
// mean_j - s * inv_j. Means and counts come from small sets, so exact ties, equal counts (parallel
// lines) and crossings at the very scale asked are common; scales rise, fall and land on crossings.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ncclbot/policy/arm_blocks.hpp"
#include "ncclbot/policy/egreedy.hpp"
#include "ncclbot/policy/greedy.hpp"
#include "ncclbot/policy/kinetic_argmin.hpp"
#include "ncclbot/policy/ucb1.hpp"

using namespace ncclbot;

namespace {

constexpr int kLarge = 512;

// Arm statistics over the first k of kLarge arms, every arm observed: means from `levels`
// distinct values, counts 1..4 (so 1 / sqrt(N) takes four values).
struct LargeArms {
  ArmStatsT<kLarge> stats;
  double inv[kLarge];
  std::mt19937_64 rng;

  LargeArms(int k, uint64_t seed) : rng(seed) {
    ArmIndexSet<kLarge> mask = ArmIndexSet<kLarge>::none();
    for (int j = 0; j < k; ++j) mask.set(j);
    PolicyContextT<kLarge> ctx;
    ctx.mask = mask;
    stats.reset(ctx, 0.0, ObsScale::kLinear);
    for (int j = 0; j < k; ++j) set(j);
  }
  // Arm j gets a new mean and count, as an update would give it.
  void set(int j) {
    const double count = double(1 + rng() % 4);
    stats.count[j] = count;
    stats.mean[j] = 100.0 + double(rng() % 8) * 0.5;
    stats.sum[j] = stats.mean[j] * count;
    inv[j] = 1.0 / std::sqrt(count);
  }
  int k() const { return stats.arms.k; }
};

// The definitions, reading every arm.
int first_min_mean(const LargeArms& a) {
  int best = 0;
  for (int j = 1; j < a.k(); ++j)
    if (a.stats.mean[j] < a.stats.mean[best]) best = j;
  return best;
}
int first_min_index(const LargeArms& a, double s) {
  int best = 0;
  double lowest = a.stats.mean[0] - s * a.inv[0];
  for (int j = 1; j < a.k(); ++j) {
    const double x = a.stats.mean[j] - s * a.inv[j];
    if (x < lowest) {
      best = j;
      lowest = x;
    }
  }
  return best;
}

// A scale at which arms i and j (unequal counts) cross: (m_i - m_j) / (inv_i - inv_j), when >= 0.
double crossing(const LargeArms& a, int i, int j) {
  const double d = a.inv[i] - a.inv[j];
  if (d == 0.0) return -1.0;
  return (a.stats.mean[i] - a.stats.mean[j]) / d;
}

}  // namespace

TEST(ArmBlocks, TheMinimaAreTheScans) {
  for (int k : {1, 2, 15, 16, 17, 100, 448, 512}) {
    LargeArms a(k, 7 + uint64_t(k));
    ArmBlocksT<kLarge> blocks;
    blocks.build(a.stats);
    for (int step = 0; step < 2000; ++step) {
      ASSERT_EQ(blocks.lowest(), a.stats.mean[first_min_mean(a)]) << "k " << k << " step " << step;
      ASSERT_EQ(blocks.argmin_mean(a.stats), first_min_mean(a)) << "k " << k << " step " << step;
      const int j = int(a.rng() % uint64_t(k));
      a.set(j);
      blocks.refresh(a.stats, j);
    }
  }
}

TEST(KineticArgmin, EveryArgminEqualsTheScan) {
  for (int k : {1, 2, 3, 17, 160, 300, 448, 512}) {
    LargeArms a(k, 11 + uint64_t(k));
    KineticArgminT<kLarge> tournament;
    tournament.build(a.stats, 1);
    double s = 0.0;
    int at_crossings = 0;
    for (int step = 0; step < 4000; ++step) {
      // Mostly a slowly rising scale, as UCB's bonus; sometimes a jump down or up, sometimes the
      // scale where two arms' lines cross.
      const uint64_t r = a.rng() % 10;
      if (r < 6)
        s += 1e-4 * double(a.rng() % 100);
      else if (r < 7)
        s = 0.5 * s;
      else if (r < 8)
        s = double(a.rng() % 2000) * 0.01;
      else {
        const double c = crossing(a, int(a.rng() % uint64_t(k)), int(a.rng() % uint64_t(k)));
        if (c >= 0.0 && c < HUGE_VAL) {
          s = c;
          ++at_crossings;
        }
      }
      ASSERT_EQ(tournament.argmin(a.stats, a.inv, s), first_min_index(a, s))
          << "k " << k << " step " << step << " scale " << s;
      const int moves = 1 + int(a.rng() % 2);
      for (int m = 0; m < moves; ++m) {
        const int j = int(a.rng() % uint64_t(k));
        a.set(j);
        tournament.moved(j);
      }
    }
    if (k > 2) {
      EXPECT_GT(at_crossings, 100) << "k " << k;
    }
  }
}

// A scale the bound cannot hold (negative, NaN, infinite) reads every arm instead.
TEST(KineticArgmin, ABoundlessScaleReadsEveryArm) {
  LargeArms a(300, 5);
  KineticArgminT<kLarge> tournament;
  tournament.build(a.stats, 1);
  for (double s : {-0.7, 1.5, -3.0, 0.25})
    EXPECT_EQ(tournament.argmin(a.stats, a.inv, s), first_min_index(a, s)) << s;
  EXPECT_EQ(tournament.argmin(a.stats, a.inv, HUGE_VAL), lower_confidence_argmin(a.stats, a.inv, HUGE_VAL));
}

// UCB1 over 300 knob arms (tournament) and over 100 (scan), driven for 3000 calls with noisy
// latencies: each pick is the one UCB1's rule (ucb1.hpp) gives when computed here over every arm.
TEST(KineticArgmin, Ucb1OverManyArmsPicksAsItsRuleReadOverEveryArm) {
  for (int k : {100, 300}) {
    std::vector<float> prior(kLarge, -1.0f);
    std::mt19937_64 rng(17);
    for (int j = 0; j < k; ++j) prior[size_t(j)] = float(50 + rng() % 20);
    PolicyContextT<kLarge> ctx;
    ctx.mask = ArmIndexSet<kLarge>::none();
    for (int j = 0; j < k; ++j) ctx.mask.set(j);
    ctx.prior_us = prior.data();
    Ucb1PolicyT<kLarge> policy;
    policy.params = {0.3, 1.0};
    policy.reset(ctx);
    EXPECT_EQ(policy.tournament.active, k >= KineticArgminT<kLarge>::kMinArms);
    std::vector<double> count(size_t(k), 1.0), sum(size_t(k), 0.0);
    for (int j = 0; j < k; ++j) sum[size_t(j)] = double(prior[size_t(j)]);
    StepRandom step_rng(1, 2, 0);
    for (int t = 0; t < 3000; ++t) {
      double total = 0.0, best_mean = HUGE_VAL;
      for (int j = 0; j < k; ++j) {
        total += count[size_t(j)];
        best_mean = std::min(best_mean, sum[size_t(j)] / count[size_t(j)]);
      }
      const double scale = 0.3 * best_mean * std::sqrt(2.0 * portable_log(total));
      int want = 0;
      double lowest = HUGE_VAL;
      for (int j = 0; j < k; ++j) {
        const double x = sum[size_t(j)] / count[size_t(j)] - scale * (1.0 / std::sqrt(count[size_t(j)]));
        if (x < lowest) {
          lowest = x;
          want = j;
        }
      }
      const int got = policy.select(step_rng);
      ASSERT_EQ(got, want) << "k " << k << " call " << t;
      // Arms are equal in truth up to their slot's offset: many near-ties.
      const double latency = 55.0 + double(got % 7) + double(rng() % 1000) * 0.01;
      policy.update(got, latency);
      count[size_t(got)] += 1.0;
      sum[size_t(got)] += latency;
    }
  }
}

// Greedy and epsilon-greedy's greedy branch (eps = 0) over knob arms (block minima) pick the
// smallest mean, lowest arm on a tie.
template <typename Policy>
void picks_the_smallest_mean(typename Policy::Params params) {
  const int k = 200;
  std::vector<float> prior(kLarge, -1.0f);
  for (int j = 0; j < k; ++j) prior[size_t(j)] = float(60 - j % 5);  // ties: arms 4, 9, 14, ... at 56
  PolicyContextT<kLarge> ctx;
  ctx.mask = ArmIndexSet<kLarge>::none();
  for (int j = 0; j < k; ++j) ctx.mask.set(j);
  ctx.prior_us = prior.data();
  Policy policy;
  policy.params = params;
  policy.reset(ctx);
  StepRandom rng(1, 2, 0);
  EXPECT_EQ(policy.select(rng), 4);
  policy.update(4, 70.0);  // (56 + 70) / 2 = 63: arm 9 is now the first at 56
  EXPECT_EQ(policy.select(rng), 9);
  policy.update(197, 10.0);  // (58 + 10) / 2 = 34
  EXPECT_EQ(policy.select(rng), 197);
}

TEST(ArmBlocks, GreedyOverManyArmsPicksTheSmallestMean) {
  picks_the_smallest_mean<GreedyPolicyT<kLarge>>({1.0});
  picks_the_smallest_mean<EpsGreedyPolicyT<kLarge>>({0.0, 0.0, 1.0});
}
