// Thompson sampling draws only the arms that can still win (policy/thompson.hpp). Its picks must be
// exactly those of the plain definition, which draws every arm in slot order from the step's
// words 0, 1, 2, ... and keeps the first smallest.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ncclbot/policy/thompson.hpp"

using namespace ncclbot;

namespace {

int full_draw_pick(const ThompsonPolicy& p, uint64_t seed, uint64_t id, uint32_t step) {
  StepRandom rng(seed, id, step);
  int pick = -1;
  double best = 0.0;
  for (int j = 0; j < p.stats.arms.k; ++j) {
    const double z = normal_quantile(uniform_open01(rng.next_u32()));
    const double theta = p.stats.mean[j] + z * (p.params.sigma / std::sqrt(p.stats.count[j]));
    if (pick < 0 || theta < best) {
      pick = j;
      best = theta;
    }
  }
  return p.stats.arms.slot[pick];
}

}  // namespace

// Random contexts of 2 to 21 arms, close and far priors, tied means, cold and warm starts: every
// pick of a 300-call run equals the full draw's, with the state driven by the policy's own picks.
TEST(ThompsonPruning, PicksEqualTheFullDrawDefinition) {
  std::mt19937_64 gen(424242);
  int compared = 0, skipped_somewhere = 0, dominated = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int k = 2 + int(gen() % 20);
    float prior[kNumArms];
    for (float& v : prior) v = -1.0f;
    PolicyContext ctx;
    const bool close = trial % 2 == 0;
    for (int j = 0; j < k; ++j) {
      ctx.mask.set(j);
      const double spread = close ? 0.02 : 1.5;
      prior[j] = float(100.0 * std::exp(spread * double(gen() % 1000) / 1000.0));
      if (trial % 7 == 0 && j > 0) prior[j] = prior[0];  // exact ties
    }
    ctx.prior_us = prior;
    ThompsonPolicy p{};
    p.params = {trial % 3 == 0 ? 0.0 : double(1 + gen() % 8), trial % 5 == 0 ? 0.5 : 0.05};
    p.reset(ctx);
    for (uint32_t t = 0; t < 300; ++t) {
      const int want =
          p.stats.untried > 0 ? p.stats.arms.slot[p.stats.first_untried()] : full_draw_pick(p, 9, 77, t);
      StepRandom rng(9, 77, t);
      const int got = p.select(rng);
      ASSERT_EQ(got, want) << "trial " << trial << " call " << t;
      ++compared;
      if (p.stats.untried == 0) {
        const int best = first_index_of_min(p.stats.mean, k);
        bool all_above = true;
        for (int j = 0; j < k; ++j) {
          if (p.lowest_draw[j] > p.stats.mean[best]) ++skipped_somewhere;
          if (j != best && !(p.lowest_draw[j] > p.highest_draw(best))) all_above = false;
        }
        if (all_above) ++dominated;
      }
      p.update(got, double(prior[got]) * (1.0 + 0.03 * double(int(gen() % 201) - 100) / 100.0));
    }
  }
  EXPECT_EQ(compared, 200 * 300);
  EXPECT_GT(skipped_somewhere, 0);  // the far-apart contexts do prune
  EXPECT_GT(dominated, 0);          // and some steps need no draw at all
}

// kZFloor / kZCeil bound every quantile a 32-bit word can give: the extremes are at words 0 and
// 2^32 - 1, -+6.3379577545537895 (scipy.stats.norm.ppf(0.5 / 2**32), and its mirror).
TEST(ThompsonPruning, FloorAndCeilingBoundEveryDraw) {
  EXPECT_NEAR(normal_quantile(uniform_open01(0u)), -6.3379577545537895, 1e-12);
  EXPECT_NEAR(normal_quantile(uniform_open01(0xffffffffu)), 6.3379577545537895, 1e-9);
  EXPECT_LT(ThompsonPolicy::kZFloor, normal_quantile(uniform_open01(0u)));
  EXPECT_LT(ThompsonPolicy::kZFloor, normal_quantile(uniform_open01(1u)));
  EXPECT_GT(ThompsonPolicy::kZCeil, normal_quantile(uniform_open01(0xffffffffu)));
  EXPECT_GT(ThompsonPolicy::kZCeil, normal_quantile(uniform_open01(0xfffffffeu)));
}

// StepRandom::word(j) is the j-th next_u32() of the same step, in any order.
TEST(ThompsonPruning, WordIsRandomAccessIntoTheSequentialStream) {
  StepRandom seq(5, 6, 7);
  uint32_t words[13];
  for (uint32_t& w : words) w = seq.next_u32();
  StepRandom ra(5, 6, 7);
  for (int j : {12, 0, 5, 4, 3, 11, 1}) EXPECT_EQ(ra.word(uint32_t(j)), words[j]) << j;
}
