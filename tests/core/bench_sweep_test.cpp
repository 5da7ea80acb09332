// The synthetic sweep of `ncclbot bench`: every context distinct however many are asked for (32
// node counts x 30 sizes repeat after 480, where 481 used to fail on a duplicate context), and the
// bounds on its arguments are usage errors.
#include "ncclbot/bench/bench_sweep.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "ncclbot/core/error.hpp"

using namespace ncclbot;

TEST(BenchSweep, EveryContextIsDistinctPastFourHundredEighty) {
  for (int n : {480, 481, 1000}) {
    const Sweep s = make_bench_sweep(6, n, 2);
    ASSERT_EQ(s.num_contexts(), n);
    std::set<std::tuple<int, int, uint64_t>> keys;
    for (int c = 0; c < n; ++c)
      keys.emplace(s.context(c).nodes, s.context(c).gpus_per_node, s.context(c).bytes);
    EXPECT_EQ(int(keys.size()), n);
  }
  const Sweep s = make_bench_sweep(6, 481, 2);  // the 481st context: 16 GPUs per node, the others 8
  int sixteen = 0;
  for (int c = 0; c < s.num_contexts(); ++c) sixteen += s.context(c).gpus_per_node == 16;
  EXPECT_EQ(sixteen, 1);
}

TEST(BenchSweep, ArgumentsOutOfRangeAreUsageErrors) {
  EXPECT_THROW(make_bench_sweep(6, 0, 2), UsageError);
  EXPECT_THROW(make_bench_sweep(6, kMaxBenchContexts + 1, 2), UsageError);
  EXPECT_THROW(make_bench_sweep(kMaxBenchArms + 1, 4, 2), UsageError);
  EXPECT_THROW(make_bench_sweep(6, 4, 0), UsageError);
}

// Above 21 arms the bench sweep holds knob arms: 512 distinct arms per context, each one NCCL can
// take, arm a at slot a mod 21 with channels 1 + a / 21 and its protocol's grain (a < 1344).
TEST(BenchSweep, FiveHundredTwelveKnobArmsPerContext) {
  const Sweep s = make_bench_sweep(512, 2, 1);
  EXPECT_FALSE(s.slot_shaped());
  for (int c = 0; c < 2; ++c) {
    const auto arms = s.arms(c);
    ASSERT_EQ(arms.size(), 512u);
    for (const Arm& a : arms) EXPECT_EQ(arm_fault(a), nullptr);
  }
  const auto arms = s.arms(0);
  EXPECT_NE(std::find(arms.begin(), arms.end(), Arm{Algo::kPat, Proto::kSimple, 24, 512}), arms.end());  // a = 503 = 21 x 23 + 20
}
