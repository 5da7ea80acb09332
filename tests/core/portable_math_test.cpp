#include "ncclbot/core/portable_math.hpp"

#include <gtest/gtest.h>

#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>
#include <random>

using namespace ncclbot;

// glibc's log is correctly rounded in practice; fdlibm's is within 1 ulp of it.
TEST(PortableMath, LogWithinOneUlpOfLibm) {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> exponent(-300.0, 300.0);
  for (int i = 0; i < 200000; ++i) {
    const double x = std::pow(10.0, exponent(gen));
    const double want = std::log(x), got = portable_log(x);
    const double ulp = std::fabs(std::nextafter(want, std::numeric_limits<double>::infinity()) - want);
    ASSERT_LE(std::fabs(got - want), ulp) << x;
  }
  for (double x : {1.0, 2.0, 0.5, 1.0 + 1e-12, 1.0 - 1e-12, 3.0, 1e-310, 1e308}) {
    const double want = std::log(x);
    EXPECT_NEAR(portable_log(x), want, std::fabs(want) * 3e-16 + 1e-300) << x;
  }
  EXPECT_EQ(portable_log(1.0), 0.0);
  EXPECT_EQ(portable_log(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(portable_log(-1.0)));
  EXPECT_EQ(portable_log(std::numeric_limits<double>::infinity()), std::numeric_limits<double>::infinity());
}

// Reference: Boost.Math's normal quantile (an independent implementation).
TEST(PortableMath, NormalQuantileMatchesBoost) {
  const boost::math::normal_distribution<double> n01;
  for (double p : {1e-300, 1e-20, 1e-10, 1e-5, 0.001, 0.01, 0.02425, 0.1, 0.3, 0.5, 0.5 + 1e-9, 0.7, 0.9,
                   0.975, 0.999, 1.0 - 1e-9}) {
    const double want = boost::math::quantile(n01, p);
    EXPECT_NEAR(normal_quantile(p), want, 1e-14 * std::fabs(want) + 1e-15) << p;
  }
  EXPECT_EQ(normal_quantile(0.5), 0.0);
}
