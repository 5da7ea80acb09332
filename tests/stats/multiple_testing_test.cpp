// Holm and Bonferroni against statsmodels multipletests (scripts/reference_stats.py), plus the
// resolution floor of the paired design.
#include "ncclbot/stats/multiple_testing.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "ncclbot/stats/resolution_floor.hpp"
#include "stats/reference_data.hpp"

using namespace ncclbot;
using ncclbot::test::as_doubles;

namespace {

void expect_same(const std::vector<double>& got, const std::vector<double>& want, const char* what,
                 size_t c) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " case " << c << " index " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], 1e-12) << what << " case " << c << " index " << i;
    }
  }
}

}  // namespace

TEST(Holm, MatchesStatsmodels) {
  const auto cases = test::reference_cases("holm.json");
  ASSERT_GE(cases.size(), 10u);
  for (size_t c = 0; c < cases.size(); ++c) {
    const std::vector<double> p = as_doubles(cases[c]["p"]);
    expect_same(holm_adjust(p), as_doubles(cases[c]["holm"]), "holm", c);
    expect_same(bonferroni_adjust(p), as_doubles(cases[c]["bonferroni"]), "bonferroni", c);
  }
}

TEST(Holm, HandWorkedExample) {
  // m = 4 (the NaN is untested): sorted 0.01, 0.03, 0.04, 0.5 -> 4*0.01 = 0.04, 3*0.03 = 0.09,
  // 2*0.04 = 0.08 -> running max 0.09, 1*0.5 = 0.5.
  const std::vector<double> p = {0.01, 0.04, std::nan(""), 0.03, 0.5};
  const auto adj = holm_adjust(p);
  EXPECT_DOUBLE_EQ(adj[0], 0.04);
  EXPECT_DOUBLE_EQ(adj[1], 0.09);
  EXPECT_TRUE(std::isnan(adj[2]));
  EXPECT_DOUBLE_EQ(adj[3], 0.09);
  EXPECT_DOUBLE_EQ(adj[4], 0.5);
  EXPECT_EQ(family_size(p), 4);
  EXPECT_DOUBLE_EQ(bonferroni_adjust(p)[4], 1.0);  // capped
  EXPECT_THROW(holm_adjust(std::vector<double>{1.5}), std::invalid_argument);
}

TEST(ResolutionFloor, NineScenariosAllowTwelveHypotheses) {
  // Two-sided exact sign-flip floor with 9 units: 2/512. 12 * 2/512 = 0.046875 <= 0.05, 13 * 2/512 > 0.05.
  const double floor = smallest_sign_flip_p(9, Alternative::two_sided);
  EXPECT_DOUBLE_EQ(floor, 2.0 / 512.0);
  EXPECT_DOUBLE_EQ(smallest_sign_flip_p(9, Alternative::greater), 1.0 / 512.0);
  EXPECT_DOUBLE_EQ(smallest_sign_flip_p(0, Alternative::two_sided), 1.0);
  EXPECT_EQ(holm_max_family_with_rejection(floor, 0.05), 12);
  EXPECT_EQ(holm_max_rejections(floor, 0.05, 12), 12);
  EXPECT_EQ(holm_max_rejections(floor, 0.05, 13), 0);
  // Consistency with holm_adjust itself: 12 p-values at the floor are all rejected, 13 none.
  EXPECT_LE(holm_adjust(std::vector<double>(12, floor))[0], 0.05);
  EXPECT_GT(holm_adjust(std::vector<double>(13, floor))[0], 0.05);
}
