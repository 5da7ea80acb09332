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

// glibc's exp is correctly rounded in practice; fdlibm's is within 1 ulp of it, over the whole range
// from underflow to overflow and near the reduction's branch points.
TEST(PortableMath, ExpWithinOneUlpOfLibm) {
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> wide(-745.0, 709.7), narrow(-2.0, 2.0), tiny(-1e-8, 1e-8);
  const auto check = [](double x) {
    const double want = std::exp(x), got = portable_exp(x);
    const double ulp = std::fabs(std::nextafter(want, std::numeric_limits<double>::infinity()) - want);
    ASSERT_LE(std::fabs(got - want), ulp) << x;
  };
  for (int i = 0; i < 200000; ++i) {
    check(wide(gen));
    check(narrow(gen));
    check(tiny(gen));
  }
  for (double x : {0.34657359027997264, 0.3465735902799727, 1.0397207708399179, 1.039720770839918,
                   -0.3465735902799727, -1.039720770839918, 1e-300, -1e-300, 709.78, -708.0, -740.0})
    check(x);
  EXPECT_EQ(portable_exp(0.0), 1.0);
  EXPECT_NEAR(portable_exp(1.0), 2.718281828459045, 4.5e-16);  // e, within its ulp
  EXPECT_EQ(portable_exp(710.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(portable_exp(-746.0), 0.0);
  EXPECT_EQ(portable_exp(std::numeric_limits<double>::infinity()), std::numeric_limits<double>::infinity());
  EXPECT_EQ(portable_exp(-std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_TRUE(std::isnan(portable_exp(std::numeric_limits<double>::quiet_NaN())));
}

// x^y against libm's pow for the exponents the noise model uses (-1/alpha with alpha in [0.5, 10])
// on uniforms in (0, 1): relative error below 1e-13.
TEST(PortableMath, PowPositiveNearLibm) {
  std::mt19937_64 gen(13);
  std::uniform_real_distribution<double> u(1e-12, 1.0), alpha(0.5, 10.0);
  for (int i = 0; i < 100000; ++i) {
    const double x = u(gen), y = -1.0 / alpha(gen);
    const double want = std::pow(x, y);
    ASSERT_NEAR(portable_pow_positive(x, y), want, want * 1e-13) << x << " " << y;
  }
  EXPECT_NEAR(portable_pow_positive(2.0, 3.0), 8.0, 8.0 * 1e-15);
}
