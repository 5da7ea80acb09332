// The standard normal of the BCa interval, Wilcoxon's approximation and the telemetry intervals
// (stats/normal_distribution.hpp) against SciPy, and the IEEE edge cases the header promises:
//   python3 -c "from scipy.stats import norm; print(norm.cdf(-1.0), norm.sf(-1.0), norm.sf(8.0),
//   norm.cdf(-8.0), norm.ppf(0.975), norm.ppf(0.025), norm.ppf(1e-10), norm.ppf(1 - 1e-12))"
//   -> 0.15865525393145707 0.8413447460685429 6.22096057427174e-16 6.22096057427174e-16
//      1.959963984540054 -1.9599639845400545 -6.361340902404056 7.0344869100478356
#include "ncclbot/stats/normal_distribution.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ncclbot {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(NormalDistribution, CdfAndSurvivalMatchScipy) {
  EXPECT_EQ(normal_cdf(0.0), 0.5);
  EXPECT_EQ(normal_sf(0.0), 0.5);
  EXPECT_NEAR(normal_cdf(-1.0), 0.15865525393145707, 1e-16);
  EXPECT_NEAR(normal_sf(-1.0), 0.8413447460685429, 1e-16);
  // The upper tail from the survival function keeps its digits where 1 - cdf has none left.
  EXPECT_NEAR(normal_sf(8.0), 6.22096057427174e-16, 1e-28);
  EXPECT_NEAR(normal_cdf(-8.0), 6.22096057427174e-16, 1e-28);
  EXPECT_EQ(normal_cdf(kInf), 1.0);
  EXPECT_EQ(normal_cdf(-kInf), 0.0);
  EXPECT_EQ(normal_sf(kInf), 0.0);
  EXPECT_EQ(normal_sf(-kInf), 1.0);
  EXPECT_TRUE(std::isnan(normal_cdf(std::nan(""))));
}

TEST(NormalDistribution, QuantileMatchesScipyAndIsInfiniteAtTheEnds) {
  EXPECT_EQ(normal_quantile_ieee(0.5), 0.0);
  EXPECT_NEAR(normal_quantile_ieee(0.975), 1.959963984540054, 1e-14);
  EXPECT_NEAR(normal_quantile_ieee(0.025), -1.9599639845400545, 1e-14);
  EXPECT_NEAR(normal_quantile_ieee(1e-10), -6.361340902404056, 1e-13);
  EXPECT_NEAR(normal_quantile_ieee(1.0 - 1e-12), 7.0344869100478356, 1e-9);
  EXPECT_EQ(normal_quantile_ieee(0.0), -kInf);
  EXPECT_EQ(normal_quantile_ieee(1.0), kInf);
  EXPECT_TRUE(std::isnan(normal_quantile_ieee(-0.1)));
  EXPECT_TRUE(std::isnan(normal_quantile_ieee(1.5)));
  EXPECT_TRUE(std::isnan(normal_quantile_ieee(std::nan(""))));
}

}  // namespace
}  // namespace ncclbot
