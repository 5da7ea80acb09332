// The four metrics of a set of losses (stats/loss_summary.hpp) against NumPy, whose "linear"
// percentile is the documented definition. The values were made with
//   python3 -c "import numpy as np; x=[0.0,0.5,0.02,0.13,0.1,1.75,0.004,0.3,0.0,0.11];
//   print(np.mean(x), np.percentile(x,99), np.max(x), np.percentile(x,[0,25,50,100]))"
//   -> 0.2914 1.6375000000000002 1.75 [0. 0.008 0.105 1.75]
// and by hand: sorted 0, 0, 0.004, 0.02, 0.1, 0.11, 0.13, 0.3, 0.5, 1.75; p99 sits at 0.99 x 9 = 8.91,
// 0.5 + 0.91 x (1.75 - 0.5) = 1.6375; above 10%: 0.11, 0.13, 0.3, 0.5, 1.75 (0.1 itself is not).
#include "ncclbot/stats/loss_summary.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace ncclbot {
namespace {

const std::vector<double> kLosses = {0.0, 0.5, 0.02, 0.13, 0.1, 1.75, 0.004, 0.3, 0.0, 0.11};

TEST(LossSummary, TheFourMetricsMatchNumpy) {
  const LossSummary s = summarize_losses(kLosses);
  EXPECT_NEAR(s.mean, 0.2914, 1e-15);
  EXPECT_NEAR(s.p99, 1.6375, 1e-15);
  EXPECT_EQ(s.max, 1.75);
  EXPECT_EQ(s.above_10pct, 5);
}

TEST(LossSummary, LinearPercentilesMatchNumpy) {
  EXPECT_EQ(percentile_linear(kLosses, 0.0), 0.0);
  EXPECT_NEAR(percentile_linear(kLosses, 25.0), 0.008, 1e-15);  // 2.25: 0.004 + 0.25 x 0.016
  EXPECT_NEAR(percentile_linear(kLosses, 50.0), 0.105, 1e-15);  // 4.5: halfway from 0.1 to 0.11
  EXPECT_EQ(percentile_linear(kLosses, 100.0), 1.75);
  // Two values: the 99th percentile is 99% of the way from the first to the second.
  EXPECT_NEAR(percentile_linear(std::vector<double>{1.0, 0.0}, 99.0), 0.99, 1e-15);
  EXPECT_EQ(percentile_linear(std::vector<double>{0.3}, 99.0), 0.3);
  EXPECT_THROW(percentile_linear(std::vector<double>{}, 50.0), std::invalid_argument);
}

TEST(LossSummary, NoLossesGiveZeros) {
  const LossSummary s = summarize_losses(std::vector<double>{});
  EXPECT_EQ(s.mean, 0.0);
  EXPECT_EQ(s.p99, 0.0);
  EXPECT_EQ(s.max, 0.0);
  EXPECT_EQ(s.above_10pct, 0);
}

}  // namespace
}  // namespace ncclbot
