// Two one-sided t-tests (TOST) of paired differences against a margin, against a hand calculation
// (one degree of freedom: the t distribution is Cauchy, F(t) = 1/2 + atan(t)/pi) and SciPy.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "ncclbot/stats/equivalence_test.hpp"

namespace ncclbot {
namespace {

double cauchy_cdf(double t) {
  return 0.5 + std::atan(t) / std::numbers::pi;
}

// diffs {1, 3}: mean 2, sd sqrt(2), se 1, df 1. Margin 4: t = (2 + 4) / 1 = 6 against the lower null,
// (2 - 4) / 1 = -2 against the upper one; the interval is 2 -+ tan(0.45 pi) at alpha 0.05.
TEST(EquivalenceTest, OneDegreeOfFreedomByHand) {
  const std::vector<double> d{1.0, 3.0};
  const EquivalenceResult r = equivalence_test(d, 4.0, 0.05);
  EXPECT_DOUBLE_EQ(r.mean, 2.0);
  EXPECT_DOUBLE_EQ(r.standard_error, 1.0);
  EXPECT_EQ(r.df, 1);
  EXPECT_NEAR(r.p_lower, 1.0 - cauchy_cdf(6.0), 1e-12);
  EXPECT_NEAR(r.p_upper, cauchy_cdf(-2.0), 1e-12);
  EXPECT_NEAR(r.p, cauchy_cdf(-2.0), 1e-12);  // 0.1476: not shown equivalent at 0.05
  const double q = std::tan(0.45 * std::numbers::pi);
  EXPECT_NEAR(r.low, 2.0 - q, 1e-9);
  EXPECT_NEAR(r.high, 2.0 + q, 1e-9);
}

// Nine paired differences, margin 0.01, alpha 0.05; the expected values are SciPy 1.17's:
//   d = [0.012, -0.004, 0.007, 0.001, -0.009, 0.015, 0.003, -0.002, 0.006]
//   stats.ttest_1samp(d, -0.01, alternative='greater').pvalue, stats.ttest_1samp(d, 0.01,
//   alternative='less').pvalue, stats.t.interval(0.9, 8, loc=mean(d), scale=stats.sem(d))
TEST(EquivalenceTest, NineDifferencesAsSciPy) {
  const std::vector<double> d{0.012, -0.004, 0.007, 0.001, -0.009, 0.015, 0.003, -0.002, 0.006};
  const EquivalenceResult r = equivalence_test(d, 0.01, 0.05);
  EXPECT_NEAR(r.p_lower, 0.0004283528113920351, 1e-12);
  EXPECT_NEAR(r.p_upper, 0.014663765572160857, 1e-12);
  EXPECT_NEAR(r.p, 0.014663765572160857, 1e-12);
  EXPECT_NEAR(r.low, -0.0015366888194557945, 1e-12);
  EXPECT_NEAR(r.high, 0.007981133263900236, 1e-12);
}

// Equal differences: no spread, so each one-sided p is 0 or 1 by where the mean lies.
TEST(EquivalenceTest, EqualDifferencesDecideByTheMean) {
  const std::vector<double> inside{0.5, 0.5, 0.5}, outside{2.0, 2.0};
  EXPECT_EQ(equivalence_test(inside, 1.0, 0.05).p, 0.0);
  const EquivalenceResult r = equivalence_test(outside, 1.0, 0.05);
  EXPECT_EQ(r.p_lower, 0.0);
  EXPECT_EQ(r.p_upper, 1.0);
  EXPECT_EQ(r.p, 1.0);
}

TEST(EquivalenceTest, RefusesWhatItCannotTest) {
  const std::vector<double> one{1.0}, two{1.0, 2.0}, bad{1.0, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THROW(equivalence_test(one, 1.0, 0.05), std::invalid_argument);
  EXPECT_THROW(equivalence_test(two, 0.0, 0.05), std::invalid_argument);
  EXPECT_THROW(equivalence_test(two, 1.0, 0.5), std::invalid_argument);
  EXPECT_THROW(equivalence_test(bad, 1.0, 0.05), std::invalid_argument);
}

}  // namespace
}  // namespace ncclbot
