// The off-policy estimators (ope/off_policy.hpp) on data small enough to compute by hand, and the
// support check. Hand calculation, one context with arms 0 and 1 (slots 0 and 1):
//   calls (arm, propensity, latency): (0, 0.5, 10), (1, 0.5, 20), (0, 0.8, 12); target: arm 0.
//   w = 2, 0, 1.25                       IPS   = (20 + 0 + 15) / 3 = 11.6666...
//   SNIPS = 35 / 3.25 = 10.7692...       q(0) = (10 + 12) / 2 = 11, q(1) = 20
//   DR = [(11 + 2(10 - 11)) + 11 + (11 + 1.25(12 - 11))] / 3 = 32.25 / 3 = 10.75
//   n_effective = 3.25^2 / (4 + 1.5625) = 1.8988764...
#include "ncclbot/ope/off_policy.hpp"

#include "ncclbot/ope/log_blocks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ncclbot/core/error.hpp"
#include "ncclbot/ope/block_bootstrap.hpp"
#include "ncclbot/stats/resample_stream.hpp"
#include "support/numpy_quantile.hpp"

using namespace ncclbot;

namespace {

OpeData hand_data() {
  OpeData d;
  OpeContext c;
  c.collective = 4;
  c.bytes = 1024;
  c.nodes = 1;
  c.ranks = 8;
  for (float& v : c.cost_us) v = -1.0f;
  c.cost_us[0] = 9.0f;
  c.cost_us[1] = 18.0f;
  c.cost_us[2] = 40.0f;  // usable, never logged
  c.mask.set(0);
  c.mask.set(1);
  c.mask.set(2);
  d.contexts.push_back(c);
  d.calls = {{0, 0, 0.5, 10.0}, {0, 1, 0.5, 20.0}, {0, 0, 0.8, 12.0}};
  d.behaviour = "hand";
  return d;
}

// Blocks of one call each (the call-level bootstrap), and of the automatic rule.
LogBlocks calls_of(const OpeData& d) {
  return log_blocks(d, BlockRule{1});
}
LogBlocks blocks_of(const OpeData& d) {
  return log_blocks(d, BlockRule{});
}

TargetProbabilities play(int slot) {
  TargetProbabilities pi(1);
  pi[0].assign(kNumArms, 0.0);
  pi[0][size_t(slot)] = 1.0;
  return pi;
}

}  // namespace

TEST(OffPolicy, EstimatesByHand) {
  const auto r = estimate_off_policy(blocks_of(hand_data()), play(0), "arm 0", OpeOptions{199, 1, 0.9});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].name, "IPS");
  EXPECT_NEAR(r[0].value_us, 35.0 / 3.0, 1e-12);
  EXPECT_EQ(r[1].name, "SNIPS");
  EXPECT_NEAR(r[1].value_us, 35.0 / 3.25, 1e-12);
  EXPECT_EQ(r[2].name, "DR");
  EXPECT_NEAR(r[2].value_us, 10.75, 1e-12);
  for (const auto& e : r) {
    EXPECT_NEAR(e.n_effective, 3.25 * 3.25 / 5.5625, 1e-12);
    EXPECT_LE(e.lo, e.hi);
  }
}

TEST(OffPolicy, RewardModelIsLoggedMeansElseCostsTimesTheLogsRatio) {
  // ratio = (10 + 20 + 12) / (9 + 18 + 9) = 42 / 36; arm 2 never logged: 40 * 42 / 36.
  const auto q = reward_model(blocks_of(hand_data()));
  EXPECT_DOUBLE_EQ(q[0][0], 11.0);
  EXPECT_DOUBLE_EQ(q[0][1], 20.0);
  EXPECT_NEAR(q[0][2], 40.0 * 42.0 / 36.0, 1e-12);
  EXPECT_TRUE(std::isnan(q[0][3]));
}

TEST(OffPolicy, ATargetArmTheLogNeverPlayedIsRefused) {
  try {
    estimate_off_policy(blocks_of(hand_data()), play(2), "--policy arm2", OpeOptions{});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Tree/Simple"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("zero propensity"), std::string::npos) << e.what();
  }
}

// The intervals come from resamples drawn from (seed, b) only: the same seed gives the same
// numbers on one thread or two, another seed other ones, and the interval holds the point here.
TEST(OffPolicy, IntervalsAreSeededAndHoldThePoint) {
  OpeData d = hand_data();
  for (int i = 0; i < 40; ++i) d.calls.push_back({0, i % 2, 0.5, 10.0 + double(i % 7)});
  const auto a = estimate_off_policy(calls_of(d), play(0), "t", OpeOptions{499, 3, 0.95, 1});
  const auto b = estimate_off_policy(calls_of(d), play(0), "t", OpeOptions{499, 3, 0.95, 2});
  const auto c = estimate_off_policy(calls_of(d), play(0), "t", OpeOptions{499, 4, 0.95});
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(a[k].lo, b[k].lo);
    EXPECT_EQ(a[k].hi, b[k].hi);
    EXPECT_LE(a[k].lo, a[k].value_us);
    EXPECT_GE(a[k].hi, a[k].value_us);
  }
  EXPECT_NE(a[0].lo, c[0].lo);
}

// With blocks of one call the bootstrap resamples a context's calls with replacement: resample b
// of the one context draws n call indices from the stream (seed, b) (context 0's seed is the
// seed). This reference gathers the drawn calls one by one, in draw order, from the hand formulas
// above, and its percentile intervals must agree (the sums differ only in rounding order).
TEST(OffPolicy, IntervalsAreThoseOfResamplingTheCallsOneByOne) {
  OpeData d = hand_data();
  for (int i = 0; i < 300; ++i)
    d.calls.push_back({0, i % 3 == 0 ? 1 : 0, i % 2 ? 0.5 : 0.8, 8.0 + double(i % 11)});
  const OpeOptions options{399, 7, 0.9};
  const auto got = estimate_off_policy(calls_of(d), play(0), "t", options);
  const auto q = reward_model(calls_of(d));
  const size_t n = d.calls.size();
  std::vector<double> ips, snips, dr;
  for (int b = 0; b < options.resamples; ++b) {
    ResampleStream rs(options.seed, uint64_t(b), ResamplePurpose::bootstrap_indices);
    double sw = 0, swr = 0, sdr = 0;
    for (size_t k = 0; k < n; ++k) {
      const OpeCall& c = d.calls[rs.next_below(uint32_t(n))];
      const double w = c.arm == 0 ? 1.0 / c.propensity : 0.0;
      sw += w;
      swr += w * c.latency_us;
      sdr += q[0][0] + w * (c.latency_us - q[0][size_t(c.arm)]);
    }
    ips.push_back(swr / double(n));
    snips.push_back(swr / sw);
    dr.push_back(sdr / double(n));
  }
  const double a = (1.0 - options.level) / 2.0;
  const std::vector<double>* want[3] = {&ips, &snips, &dr};
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_NEAR(got[k].lo, ncclbot::test::numpy_linear_quantile(*want[k], a), 1e-9 * got[k].value_us)
        << got[k].name;
    EXPECT_NEAR(got[k].hi, ncclbot::test::numpy_linear_quantile(*want[k], 1.0 - a), 1e-9 * got[k].value_us)
        << got[k].name;
    EXPECT_LT(got[k].lo, got[k].hi);
  }
}

// DR's residual term can take a resample below 0 latency. One context, each call's propensity 0.5,
// target arm 1: q(1) = (1 + 1000 + 1) / 3 = 334, so DR's per-call terms are 334 for the arm-0 calls
// and 334 + 2 (r - 334) = -332, 1666, -332 for the arm-1 calls; DR = 2004 / 6 = 334. A call-level
// resample drawing mostly the -332 terms is negative (the 2.5% quantile of the mean of six draws is
// about 334 - 1.96 x 272 = -199), so the interval's lower end is reported as 0, never below.
TEST(OffPolicy, ADrIntervalNeverGoesBelowZeroLatency) {
  OpeData d = hand_data();
  d.calls = {{0, 1, 0.5, 1.0},  {0, 0, 0.5, 10.0}, {0, 1, 0.5, 1000.0},
             {0, 0, 0.5, 10.0}, {0, 1, 0.5, 1.0},  {0, 0, 0.5, 10.0}};
  const auto r = estimate_off_policy(calls_of(d), play(1), "arm 1", OpeOptions{999, 3, 0.95});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[2].name, "DR");
  EXPECT_NEAR(r[2].value_us, 334.0, 1e-9);
  EXPECT_EQ(r[2].lo, 0.0);
  EXPECT_GT(r[2].hi, 334.0);
  for (const auto& e : r) EXPECT_GE(e.lo, 0.0) << e.name;
}
