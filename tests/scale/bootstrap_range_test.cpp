// A bootstrap distribution computed in pieces is, concatenated, bit for bit the distribution
// bootstrap_interval() keeps, for every statistic and any split; the percentile interval taken
// from it is bootstrap_interval()'s. (The library's numbers themselves are checked against SciPy in
// tests/stats; here the property is identity with them.)
#include "ncclbot/scale/bootstrap_range.hpp"
#include "support/same_bits.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>

using namespace ncclbot;

namespace {

// Heavy-tailed, with ties (the p99 walk's order matters) and values on both sides of 0.1.
std::vector<double> losses(size_t n) {
  std::vector<double> x;
  for (size_t i = 0; i < n; ++i) x.push_back(std::pow(double((i * 37) % 23), 2.0) / 300.0);
  return x;
}

using ncclbot::test::same_bits;

}  // namespace

TEST(BootstrapRange, PiecesConcatenateToTheLibraryDistribution) {
  const std::vector<double> x = losses(157);
  for (BootstrapStatistic st : {BootstrapStatistic::mean, BootstrapStatistic::p99, BootstrapStatistic::max,
                                BootstrapStatistic::count_above}) {
    BootstrapOptions o;
    o.statistic = st;
    o.method = IntervalMethod::percentile;
    o.resamples = 1001;
    o.seed = 0x1234567890abcdefull;
    o.keep_distribution = true;
    const BootstrapResult ref = bootstrap_interval(x, o);
    for (uint64_t pieces : {1u, 2u, 3u, 7u}) {
      std::vector<double> theta;
      for (uint64_t r = 0; r < pieces; ++r) {
        const uint64_t first = o.resamples * r / pieces, end = o.resamples * (r + 1) / pieces;
        BootstrapOptions piece = o;
        piece.threads = unsigned(1 + r % 2);  // the thread count must not matter either
        const std::vector<double> part = bootstrap_distribution_range(x, piece, first, end - first);
        theta.insert(theta.end(), part.begin(), part.end());
      }
      ASSERT_EQ(theta.size(), ref.distribution.size());
      for (size_t b = 0; b < theta.size(); ++b)
        ASSERT_TRUE(same_bits(theta[b], ref.distribution[b]))
            << to_string(st) << " pieces " << pieces << " resample " << b;
      const BootstrapResult r = percentile_interval_from_distribution(x, theta, o);
      EXPECT_TRUE(same_bits(r.estimate, ref.estimate)) << to_string(st);
      EXPECT_TRUE(same_bits(r.low, ref.low)) << to_string(st);
      EXPECT_TRUE(same_bits(r.high, ref.high)) << to_string(st);
      EXPECT_TRUE(same_bits(r.standard_error, ref.standard_error)) << to_string(st);
      EXPECT_EQ(r.level_low, ref.level_low);
      EXPECT_EQ(r.level_high, ref.level_high);
    }
  }
}

TEST(BootstrapRange, OneValueAndAnEmptyRange) {
  const std::vector<double> x = {0.25};
  BootstrapOptions o;
  o.method = IntervalMethod::percentile;
  o.resamples = 5;
  // Every resample of one value is that value: the interval is a point.
  const BootstrapResult r =
      percentile_interval_from_distribution(x, bootstrap_distribution_range(x, o, 0, 5), o);
  EXPECT_EQ(r.estimate, 0.25);
  EXPECT_EQ(r.low, 0.25);
  EXPECT_EQ(r.high, 0.25);
  EXPECT_TRUE(bootstrap_distribution_range(x, o, 3, 0).empty());
}

// Which intervals another place (the ranks, the device) may compute from a distribution: percentile
// intervals of finite data with a level in (0, 1); the rest stays with bootstrap_interval().
TEST(BootstrapRange, WhichIntervalsAPieceworkDistributionMayServe) {
  const std::vector<double> x = {0.1, 0.2, 0.3};
  BootstrapOptions o;
  o.method = IntervalMethod::percentile;
  o.resamples = 99;
  o.level = 0.95;
  EXPECT_TRUE(percentile_interval_computable_elsewhere(x, o));
  BootstrapOptions bca = o;
  bca.method = IntervalMethod::bca;
  EXPECT_FALSE(percentile_interval_computable_elsewhere(x, bca));
  BootstrapOptions none = o;
  none.resamples = 0;
  EXPECT_FALSE(percentile_interval_computable_elsewhere(x, none));
  BootstrapOptions level = o;
  level.level = 1.0;
  EXPECT_FALSE(percentile_interval_computable_elsewhere(x, level));
  EXPECT_FALSE(percentile_interval_computable_elsewhere(std::vector<double>{}, o));
  EXPECT_FALSE(percentile_interval_computable_elsewhere(std::vector<double>{0.1, NAN}, o));
}
