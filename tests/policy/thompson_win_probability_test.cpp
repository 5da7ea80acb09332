// thompson_win_probability (policy/thompson_win_probability.hpp), the propensity the decision log
// records for Thompson sampling, against independent references: the two-arm closed form
// P(theta_0 < theta_1) = Phi((m_1 - m_0) / sqrt(s_0^2 + s_1^2)) (a difference of independent
// normals), symmetry (K identical arms win 1/K each), probabilities over a contest summing to 1, and
// a Monte Carlo of the draws with the standard library's normal generator (4 standard errors).
#include "ncclbot/policy/thompson_win_probability.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

using namespace ncclbot;

namespace {

// Arms as (mean, spread); the probability asked is arm `played`'s.
ThompsonContest contest(const std::vector<std::pair<double, double>>& arms, size_t played = 0) {
  ThompsonContest c;
  c.n = int(arms.size());
  c.played = int(played);
  for (int i = 0; i < c.n; ++i) {
    c.mean[i] = arms[size_t(i)].first;
    c.spread[i] = arms[size_t(i)].second;
  }
  return c;
}

ThompsonContest asked_for(const std::vector<std::pair<double, double>>& arms, size_t i) {
  return contest(arms, i);
}

double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

}  // namespace

TEST(ThompsonWinProbability, TwoArmsMatchTheClosedForm) {
  // (m0, s0, m1, s1): close, far, tied means, and very unequal spreads (a step-like factor).
  const double cases[][4] = {{4.0, 0.05, 4.02, 0.05},  {4.0, 0.05, 4.3, 0.04},    {4.0, 0.02, 4.0, 0.07},
                             {2.0, 0.1, 2.05, 0.001},  {2.0, 0.001, 2.0005, 0.2}, {6.0, 0.3, 5.0, 0.3},
                             {3.0, 0.01, 3.0001, 1e-5}};
  for (const auto& k : cases) {
    const double expected = normal_cdf((k[2] - k[0]) / std::sqrt(k[1] * k[1] + k[3] * k[3]));
    EXPECT_NEAR(thompson_win_probability(contest({{k[0], k[1]}, {k[2], k[3]}})), expected, 1e-9)
        << k[0] << " " << k[1] << " " << k[2] << " " << k[3];
  }
}

TEST(ThompsonWinProbability, RandomTwoArmContestsMatchTheClosedForm) {
  // Spreads from 1e-5 to 0.3 in either order (ratios up to 10^4) and gaps within 7 joint sds.
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 20000; ++i) {
    double s0 = std::pow(10.0, -3.0 + 2.5 * u(gen)), s1 = std::pow(10.0, -5.0 + 4.5 * u(gen));
    if (u(gen) < 0.5) std::swap(s0, s1);
    const double joint = std::sqrt(s0 * s0 + s1 * s1), gap = joint * (-7.0 + 14.0 * u(gen));
    ASSERT_NEAR(thompson_win_probability(contest({{4.0, s0}, {4.0 + gap, s1}})), normal_cdf(gap / joint),
                1e-9)
        << "case " << i << ": s0 " << s0 << " s1 " << s1 << " gap " << gap;
  }
}

TEST(ThompsonWinProbability, IdenticalArmsWinEqually) {
  for (int k = 1; k <= 12; ++k) {
    std::vector<std::pair<double, double>> arms(size_t(k), {4.2, 0.03});
    EXPECT_NEAR(thompson_win_probability(contest(arms)), 1.0 / k, 1e-9) << k << " arms";
  }
}

TEST(ThompsonWinProbability, AContestsProbabilitiesSumToOne) {
  const std::vector<std::pair<double, double>> arms = {{4.00, 0.05}, {4.03, 0.02},  {4.10, 0.1},
                                                       {3.98, 0.2},  {4.05, 0.001}, {4.5, 0.05}};
  double total = 0;
  for (size_t i = 0; i < arms.size(); ++i) total += thompson_win_probability(asked_for(arms, i));
  EXPECT_NEAR(total, 1.0, 6e-9);
}

TEST(ThompsonWinProbability, MatchesAMonteCarloOfTheDraws) {
  const std::vector<std::pair<double, double>> arms = {{4.00, 0.05}, {4.03, 0.02}, {4.10, 0.1}, {3.98, 0.2}};
  constexpr int kDraws = 2000000;
  std::mt19937_64 gen(20261202);
  std::normal_distribution<double> z;
  std::vector<int> wins(arms.size(), 0);
  for (int d = 0; d < kDraws; ++d) {
    size_t best = 0;
    double best_theta = INFINITY;
    for (size_t i = 0; i < arms.size(); ++i) {
      const double theta = arms[i].first + arms[i].second * z(gen);
      if (theta < best_theta) {
        best_theta = theta;
        best = i;
      }
    }
    ++wins[best];
  }
  for (size_t i = 0; i < arms.size(); ++i) {
    const double p = thompson_win_probability(asked_for(arms, i));
    const double se = std::sqrt(p * (1 - p) / kDraws);
    EXPECT_NEAR(double(wins[i]) / kDraws, p, 4 * se) << "arm " << i;
  }
}

TEST(ThompsonWinProbability, AnArmThatCannotWinGetsNothingAndALoneArmEverything) {
  EXPECT_EQ(thompson_win_probability(contest({{4.0, 0.01}})), 1.0);
  EXPECT_LT(thompson_win_probability(contest({{5.0, 0.01}, {4.0, 0.01}})), 1e-12);
  EXPECT_NEAR(thompson_win_probability(contest({{4.0, 0.01}, {5.0, 0.01}})), 1.0, 1e-9);
}
