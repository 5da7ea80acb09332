// "Above 10%" on exact ratios: a context whose chosen arm is exactly 10% slower than its best
// (10.0 vs 11.0 microseconds) is not above; the next float up (11.000001 -> 11.000000953674316 as
// a float) is. Hand-made times; the doubles were checked with Python:
//   python3 -c "print(repr(11.0/10.0-1.0), 1+(11.0/10.0-1.0) > 1+0.1, (11.0/10.0-1.0) > 0.1)"
//   -> 0.10000000000000009 False True   (the old plain comparison counted it as above)
#include <gtest/gtest.h>

#include <vector>

#include "ncclbot/stats/bootstrap_statistic.hpp"
#include "ncclbot/stats/loss_summary.hpp"

namespace ncclbot {
namespace {

TEST(LossThreshold, ExactlyTenPercentIsNotAbove) {
  const double exact = 11.0 / 10.0 - 1.0;
  EXPECT_GT(exact, 0.10);  // why the rule exists: the plain comparison says "above"
  EXPECT_FALSE(loss_above(exact));
  EXPECT_FALSE(loss_above(0.10));
  EXPECT_TRUE(loss_above(double(11.000001f) / 10.0 - 1.0));
  EXPECT_TRUE(loss_above(0.2));
  EXPECT_FALSE(loss_above(0.0));
  EXPECT_FALSE(loss_above(33.0 / 30.0 - 1.0));  // another exact 10%: 30 vs 33
}

TEST(LossThreshold, SummaryAndBootstrapStatisticUseTheSameRule) {
  const std::vector<double> losses = {11.0 / 10.0 - 1.0, double(11.000001f) / 10.0 - 1.0, 0.0, 0.5};
  EXPECT_EQ(summarize_losses(losses).above_10pct, 2);
  EXPECT_EQ(evaluate_statistic(BootstrapStatistic::count_above, losses, 0.10), 2.0);
}

}  // namespace
}  // namespace ncclbot
