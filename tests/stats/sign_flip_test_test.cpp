// Paired sign-flip permutation test against scipy.stats.permutation_test (scripts/reference_stats.py).
#include "ncclbot/stats/sign_flip_test.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "stats/reference_data.hpp"

using namespace ncclbot;

TEST(SignFlip, ExactMatchesScipy) {
  const auto cases = test::reference_cases("permutation.json");
  int exact_cases = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& k = cases[c];
    if (!k["exact"].get<bool>()) continue;
    ++exact_cases;
    const std::vector<double> d = test::as_doubles(k["diffs"]);
    SignFlipOptions opt;
    opt.alternative = parse_alternative(k["alternative"].get<std::string>());
    const SignFlipResult r = sign_flip_test(d, opt);
    EXPECT_TRUE(r.exact) << "case " << c;
    EXPECT_EQ(r.sign_vectors, k["sign_vectors"].get<uint64_t>()) << "case " << c;
    EXPECT_NEAR(r.p_value, k["p"].get<double>(), 1e-12)
        << "case " << c << " n=" << d.size() << " " << k["alternative"];
    EXPECT_NEAR(r.statistic, k["statistic"].get<double>(), 1e-12) << "case " << c;
  }
  EXPECT_GE(exact_cases, 30);
}

// Monte Carlo p-values differ from SciPy's only by sampling noise: each is (count + 1)/(B + 1) with
// count ~ Binomial(B, p), so the difference of two independent estimates has standard deviation
// sqrt(2 p (1 - p) / B) (two-sided: twice that). Five of those plus 2/B for the +1 terms makes a
// false failure rarer than one in a million per comparison, while an off-by-one-sided or a missing
// +1 on small p, or a wrong tie rule, still shows.
TEST(SignFlip, MonteCarloAgreesWithScipyWithinSamplingError) {
  const auto cases = test::reference_cases("permutation.json");
  int mc_cases = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& k = cases[c];
    if (k["exact"].get<bool>()) continue;
    ++mc_cases;
    const std::vector<double> d = test::as_doubles(k["diffs"]);
    SignFlipOptions opt;
    opt.alternative = parse_alternative(k["alternative"].get<std::string>());
    opt.method = PermutationMethod::monte_carlo;
    opt.resamples = k["resamples"].get<uint64_t>();
    opt.seed = 12345;
    const SignFlipResult r = sign_flip_test(d, opt);
    EXPECT_FALSE(r.exact);
    const double want = k["p"].get<double>();
    const double B = double(opt.resamples);
    const double one_sided = opt.alternative == Alternative::two_sided ? want / 2 : want;
    double sd = std::sqrt(2.0 * one_sided * (1 - one_sided) / B);
    if (opt.alternative == Alternative::two_sided) sd *= 2;
    EXPECT_NEAR(r.p_value, want, 5 * sd + 2.0 / B) << "case " << c << " " << k["alternative"];
  }
  EXPECT_GE(mc_cases, 6);
}

TEST(SignFlip, HandWorkedExactCounts) {
  // d = {1, 2, 3}: sums over the 8 sign vectors are 6, 4, 2, 0, 0, -2, -4, -6 (flip none, {1}, {2},
  // {3}, {1,2}, {1,3}, {2,3}, all). #{T* >= 6} = 1 -> p_greater = 1/8; #{T* <= 6} = 8 -> p_less = 1;
  // two-sided = 2/8.
  const std::vector<double> d = {1, 2, 3};
  SignFlipOptions opt;
  opt.alternative = Alternative::greater;
  EXPECT_DOUBLE_EQ(sign_flip_test(d, opt).p_value, 1.0 / 8.0);
  opt.alternative = Alternative::less;
  EXPECT_DOUBLE_EQ(sign_flip_test(d, opt).p_value, 1.0);
  opt.alternative = Alternative::two_sided;
  const SignFlipResult r = sign_flip_test(d, opt);
  EXPECT_DOUBLE_EQ(r.p_value, 2.0 / 8.0);
  EXPECT_EQ(r.sign_vectors, 8u);
  EXPECT_DOUBLE_EQ(r.statistic, 2.0);
  // Ties that hold on paper but not in floating point: flipping {0.1, 0.2, -0.3} leaves the sum of
  // d = {0.1, 0.2, -0.3, 1} unchanged on paper (T* = t), but 0.1 + 0.2 - 0.3 = 5.6e-17 in doubles.
  // SciPy's 100 eps |t| tolerance counts it. Flipped sets F with sum(F) <= 0 on paper (T* >= t):
  // {}, {-0.3}, {0.1,-0.3}, {0.2,-0.3}, {0.1,0.2,-0.3} -> p_greater = 5/16 (SciPy 1.17 agrees).
  const std::vector<double> z = {0.1, 0.2, -0.3, 1.0};
  opt.alternative = Alternative::greater;
  const SignFlipResult rz = sign_flip_test(z, opt);
  EXPECT_DOUBLE_EQ(rz.p_value, 5.0 / 16.0);
  // A zero difference doubles both counts and leaves p unchanged.
  const std::vector<double> with_zero = {1, 2, 3, 0};
  EXPECT_DOUBLE_EQ(sign_flip_test(with_zero, opt).p_value, 2.0 / 16.0);
}

TEST(SignFlip, DeterministicAcrossThreadCounts) {
  std::vector<double> d;
  for (int i = 0; i < 60; ++i) d.push_back(std::sin(i * 1.7) + 0.1);
  SignFlipOptions opt;
  opt.method = PermutationMethod::monte_carlo;
  opt.resamples = 20001;
  opt.seed = 99;
  opt.threads = 1;
  const SignFlipResult one = sign_flip_test(d, opt);
  opt.threads = 3;
  const SignFlipResult three = sign_flip_test(d, opt);
  EXPECT_EQ(one.count_greater, three.count_greater);
  EXPECT_EQ(one.count_less, three.count_less);
  EXPECT_EQ(one.p_value, three.p_value);
  opt.seed = 100;
  EXPECT_NE(sign_flip_test(d, opt).count_greater, one.count_greater);  // the seed matters
}

TEST(SignFlip, AutomaticChoosesExactUpToThirtyUnits) {
  std::vector<double> d(30, 1.0);
  const SignFlipResult r = sign_flip_test(d);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.sign_vectors, uint64_t(1) << 30);
  EXPECT_DOUBLE_EQ(r.p_value, 2.0 / double(uint64_t(1) << 30));  // only the identity reaches t
  d.push_back(1.0);
  const SignFlipResult mc = sign_flip_test(d);
  EXPECT_FALSE(mc.exact);
  EXPECT_DOUBLE_EQ(mc.p_value, 2.0 * 1.0 / 10000.0);  // +1 rule: (0 + 1) / (9999 + 1), doubled
}

TEST(SignFlip, RejectsBadInput) {
  EXPECT_THROW(sign_flip_test(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(sign_flip_test(std::vector<double>{1.0, std::nan("")}), std::invalid_argument);
  SignFlipOptions opt;
  opt.method = PermutationMethod::monte_carlo;
  opt.resamples = 0;
  EXPECT_THROW(sign_flip_test(std::vector<double>{1.0}, opt), std::invalid_argument);
}
