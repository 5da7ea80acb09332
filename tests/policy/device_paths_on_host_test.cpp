// The policies' GPU-only ways, run on the host against the host's ways. Each processor compiles its
// own variant of two hot paths (the GPU's avoids arrays indexed at run time and branches that split
// a warp); both variants are plain host-and-device code, so the host can check that they agree
// before any device runs them:
//   - Thompson sampling's pick among the arms that can still win: select_by_drawing() (GPU) draws
//     each, select_by_buckets() (host) bounds them by their word's bucket first;
//   - the smallest mean: min_of_chains() (GPU, four chains) and min_of_pairs() (host, pairs of
//     doubles), against a plain scan.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "ncclbot/policy/thompson.hpp"

using namespace ncclbot;

namespace {

// A Thompson state with every one of `k` arms tried: priors from a few values (exact ties in means
// and counts), sigma wide or narrow so that few or many arms stay in the running.
template <int N>
ThompsonPolicyT<N> tried_thompson_state(std::mt19937_64& gen, int k, float* prior) {
  PolicyContextT<N> ctx;
  ctx.mask = ArmMaskT<N>{};
  for (int j = 0; j < N; ++j) prior[j] = -1.0f;
  for (int j = 0; j < k; ++j) {
    ctx.mask.set(j);
    prior[j] = float(100.0 * (1.0 + 0.01 * double(gen() % 4)));
  }
  ctx.prior_us = prior;
  ThompsonPolicyT<N> p{};
  p.params = {double(1 + gen() % 3), gen() % 2 ? 0.5 : 0.02};
  p.reset(ctx);
  return p;
}

// Random states of `k_of(trial)` arms in a policy with room for N, driven by the policy's own picks
// and latencies from a handful of values (so means tie exactly): at every step with arms still in
// the running, the GPU's pick by drawing equals the host's pick by buckets from the same step's
// words. Returns {steps compared, steps another arm than the best mean won}.
template <int N, typename ArmsOf>
std::pair<int, int> compare_thompson_paths(int trials, uint32_t steps, ArmsOf k_of) {
  std::mt19937_64 gen(20261203);
  int compared = 0, contested = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const int k = k_of(trial);
    std::vector<float> prior(N);
    ThompsonPolicyT<N> p = tried_thompson_state<N>(gen, k, prior.data());
    for (uint32_t t = 0; t < steps; ++t) {
      const int best = first_index_of_min(p.stats.mean, k);
      const ArmIndexSet<N> rivals = p.rivals_of(best);
      if (rivals.any()) {
        StepRandom for_drawing(uint64_t(trial), 31, t), for_buckets(uint64_t(trial), 31, t);
        const int drawn = p.select_by_drawing(for_drawing, best);
        const int bucketed = p.select_by_buckets(for_buckets, best, rivals);
        EXPECT_EQ(drawn, bucketed) << "trial " << trial << " (" << k << " arms) step " << t;
        if (drawn != bucketed) return {compared, contested};
        ++compared;
        contested += drawn != best;
      }
      StepRandom rng(uint64_t(trial), 31, t);
      const int slot = p.select(rng);
      p.update(slot, double(prior[size_t(slot)]) * (1.0 + 0.01 * double(gen() % 3)));
    }
  }
  return {compared, contested};
}

// The minimum as a plain scan keeps it: strict '<' in index order.
double min_by_plain_scan(const double* x, int n) {
  double m = x[0];
  for (int j = 1; j < n; ++j)
    if (x[j] < m) m = x[j];
  return m;
}

bool same_double_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

// Random states of 2 to 21 arms in the slot-shaped policy.
TEST(DevicePathsOnHost, ThompsonDrawingPicksWhatTheBucketsPick) {
  const auto [compared, contested] =
      compare_thompson_paths<kNumArms>(400, 200, [](int trial) { return 2 + trial % 20; });
  EXPECT_GT(compared, 20000);  // most steps had arms in the running
  EXPECT_GT(contested, 2000);  // and often another arm than the best mean won
}

// The same with room for 512 arms and 30 to 512 of them, so the rival sets span several words and
// the best arm's word block lies in any of them.
TEST(DevicePathsOnHost, ThompsonDrawingPicksWhatTheBucketsPickAcrossManyWords) {
  const auto [compared, contested] =
      compare_thompson_paths<512>(24, 150, [](int trial) { return 30 + (trial * 97) % 483; });
  EXPECT_GT(compared, 2000);
  EXPECT_GT(contested, 200);
}

// Every arm count from 1 to 21, the smallest value at every position (every chain and the tail)
// alone or tied with copies elsewhere, the other values from a few (more ties): the GPU's four
// chains and the host's pairs both return the plain scan's minimum, bit for bit. (No -0.0: it is
// the one value equal to another of other bits, where the order of comparisons would show, and no
// mean is -0.0.)
TEST(DevicePathsOnHost, MinOfChainsEqualsAPlainScan) {
  std::mt19937_64 gen(7);
  int compared = 0;
  for (int n = 1; n <= kNumNcclArms; ++n)
    for (int at = 0; at < n; ++at)
      for (int trial = 0; trial < 50; ++trial) {
        double x[kNumArms];
        for (int j = 0; j < n; ++j) x[j] = 2.0 + double(gen() % 3);
        x[at] = 1.0 + 0.25 * double(trial % 2);              // below every other value
        if (trial % 3 == 0) x[gen() % uint64_t(n)] = x[at];  // an exact tie somewhere
        const double want = min_by_plain_scan(x, n);
        ASSERT_TRUE(same_double_bits(min_of_chains(x, n), want)) << n << " arms, smallest at " << at;
        ASSERT_TRUE(same_double_bits(min_of(x, n), want)) << n << " arms, smallest at " << at;
        ++compared;
      }
  EXPECT_EQ(compared, 50 * (kNumNcclArms * (kNumNcclArms + 1) / 2));
}
