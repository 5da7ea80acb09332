// The synthetic sweep of `ncclbot bench`: every context distinct however many are asked for (32
// node counts x 30 sizes repeat after 480, where 481 used to fail on a duplicate context), and the
// bounds on its arguments are usage errors.
#include "ncclbot/bench/bench_sweep.hpp"

#include <gtest/gtest.h>

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
  EXPECT_THROW(make_bench_sweep(22, 4, 2), UsageError);
  EXPECT_THROW(make_bench_sweep(6, 4, 0), UsageError);
}
