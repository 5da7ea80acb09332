// The one tie rule of `tune` and `run` (choose_grid_point): smallest objective, then smallest mean
// loss, then the first point in grid order. Before, `tune` took the first point on an objective
// tie while `run` broke it by the mean, so the two froze different points. Hand-made summaries.
#include <gtest/gtest.h>

#include <vector>

#include "ncclbot/tune/tune.hpp"

namespace ncclbot {
namespace {

LossSummary summary(double mean, double p99, long above) {
  LossSummary s;
  s.mean = mean;
  s.p99 = p99;
  s.max = p99;
  s.above_10pct = above;
  return s;
}

TEST(GridPointChoice, SmallestObjectiveWins) {
  const std::vector<LossSummary> p = {summary(0.3, 0.9, 4), summary(0.2, 0.5, 3), summary(0.25, 0.4, 5)};
  EXPECT_EQ(choose_grid_point(p, TuneObjective::kMean), 1);
  EXPECT_EQ(choose_grid_point(p, TuneObjective::kP99), 2);
  EXPECT_EQ(choose_grid_point(p, TuneObjective::kAbove10pct), 1);
}

TEST(GridPointChoice, ObjectiveTiesGoToTheSmallerMeanThenTheFirstPoint) {
  // above_10pct ties at 2 between points 0, 1 and 3; point 3 has the smallest mean.
  const std::vector<LossSummary> p = {summary(0.3, 0.9, 2), summary(0.2, 0.5, 2), summary(0.1, 0.4, 5),
                                      summary(0.15, 0.8, 2)};
  EXPECT_EQ(choose_grid_point(p, TuneObjective::kAbove10pct), 3);
  // p99 ties at 0.5 between points 0 and 1, and their means tie too: the first of them.
  const std::vector<LossSummary> q = {summary(0.6, 0.7, 0), summary(0.2, 0.5, 1), summary(0.2, 0.5, 0)};
  EXPECT_EQ(choose_grid_point(q, TuneObjective::kP99), 1);
  const std::vector<LossSummary> one = {summary(0.6, 0.7, 0)};
  EXPECT_EQ(choose_grid_point(one, TuneObjective::kMean), 0);
}

}  // namespace
}  // namespace ncclbot
