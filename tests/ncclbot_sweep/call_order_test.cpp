// The call order of a sweep round: a permutation, the same for the same (seed, context, iteration) on
// every rank and run, and different from one iteration to the next.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "call_order.hpp"

namespace {

using ncclbot::sweep_tool::call_order;

TEST(SweepCallOrder, IsAPermutationOfTheArms) {
  for (int n : {0, 1, 2, 7, 30}) {
    std::vector<int> order = call_order(42, 3, 5, n);
    std::sort(order.begin(), order.end());
    std::vector<int> all(static_cast<size_t>(n));
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(order, all) << n << " arms";
  }
}

TEST(SweepCallOrder, SameInputsSameOrder) {
  EXPECT_EQ(call_order(7, 2, 9, 12), call_order(7, 2, 9, 12));
}

TEST(SweepCallOrder, ChangesEveryIterationAndWithTheSeedAndContext) {
  // 8 arms have 40,320 orders: 20 iterations drawn uniformly repeat one with probability < 0.5%;
  // a fixed seed makes the outcome certain either way.
  std::set<std::vector<int>> seen;
  for (uint32_t i = 0; i < 20; ++i) seen.insert(call_order(1, 0, i, 8));
  EXPECT_EQ(seen.size(), 20u);
  EXPECT_NE(call_order(1, 0, 0, 8), call_order(2, 0, 0, 8));
  EXPECT_NE(call_order(1, 0, 0, 8), call_order(1, 1, 0, 8));
}

TEST(SweepCallOrder, EveryArmComesFirstAboutEquallyOften) {
  // 4 arms over 4,000 iterations: each first about 1,000 times (a binomial sd of 27; 150 is 5.5 sd).
  std::vector<int> first(4, 0);
  for (uint32_t i = 0; i < 4000; ++i) ++first[size_t(call_order(3, 0, i, 4)[0])];
  for (int count : first) EXPECT_NEAR(count, 1000, 150);
}

}  // namespace
