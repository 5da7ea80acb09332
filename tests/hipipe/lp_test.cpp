// HiPIPE's chunk-size LP: an independent optimum (SciPy/HiGHS), a hand-solved case, and the
// property the design rests on: for the same chunk count, LP sizes never lose to equal chunks.
#include <gtest/gtest.h>

#include <random>

#include "hipipe/random_networks.hpp"
#include "ncclbot/hipipe/feasibility.hpp"
#include "ncclbot/hipipe/list_scheduler.hpp"
#include "ncclbot/hipipe/lp_chunk_sizes.hpp"
#include "ncclbot/hipipe/schedulers.hpp"

namespace ncclbot::hipipe {
namespace {

TEST(HipipeChunkSizeLp, MatchesScipyHighsOnAFixedOrder) {
  // Reference: python3 scripts/hipipe_lp_reference.py (same network, order and message) printed
  //   makespan_us 1177.760698182
  const Network net{"ref", {{"d0", 4, 2.0, 100.0}, {"d1", 2, 10.0, 20.0}}};
  const double bytes = 64.0 * 1048576.0;
  const int K = 3, D = 2;
  auto op = [&](int k, int step) { return k * 2 * D + step; };
  const std::vector<std::vector<int>> sequences = {
      {op(0, 0), op(1, 0), op(2, 0), op(0, 3), op(1, 3), op(2, 3)},
      {op(0, 1), op(0, 2), op(1, 1), op(1, 2), op(2, 1), op(2, 2)}};
  const std::vector<std::vector<int>> orders(K, {0, 1});
  const LpChunkSolution lp = solve_chunk_sizes_lp(net, bytes, orders, sequences);
  EXPECT_NEAR(lp.makespan_us, 1177.760698182, 1e-6);
  double sum = 0;
  for (double s : lp.chunk_bytes) sum += s;
  EXPECT_NEAR(sum, bytes, 1e-6);
  // The sizes realise that makespan when timed on the same order.
  const Schedule timed = time_with_fixed_sequences(net, lp.chunk_bytes, orders, sequences);
  EXPECT_NEAR(timed.makespan_us, 1177.760698182, 1e-6);
  EXPECT_TRUE(schedule_violations(net, bytes, timed).empty());
}

TEST(HipipeChunkSizeLp, TwoChunksOnTwoBalancedDimensionsByHand) {
  // Two dimensions of 2 ranks, no latency; dim 1's bandwidth is half dim 0's so every stage of the
  // whole message lasts the same 0.5 us (M = 1000 B, b = 0.5/1e3 per byte on dim 0 and 0.5/(0.5e3)/2).
  // With chunk stage times u and v (u + v = 0.5) on the list order, the makespan is
  // max(3u, u + v) + 3v when 2v >= u, which is 1.5 for v/2 <= u <= 2v and larger outside: the LP
  // optimum is 1.5 us, which equal chunks already reach.
  const Network net{"balanced", {{"d0", 2, 0.0, 1.0}, {"d1", 2, 0.0, 0.5}}};
  const Schedule equal = schedule_equal_chunks(net, 1000.0, 2);
  EXPECT_NEAR(equal.makespan_us, 1.5, 1e-12);
  const Schedule lp = schedule_hipipe_fixed_chunks(net, 1000.0, 2);
  EXPECT_NEAR(lp.makespan_us, 1.5, 1e-9);
  // With many chunks the makespan approaches the busiest dimension's work (2 * 0.5 = 1 us) plus
  // vanishing fill and drain: up to 32 chunks must come within 10% of it.
  SchedulerOptions o;
  o.max_chunks = 32;
  o.search_points = 6;
  const Schedule many = schedule_hipipe(net, 1000.0, o);
  EXPECT_GE(many.makespan_us, 1.0);
  EXPECT_LT(many.makespan_us, 1.1);
}

TEST(HipipeChunkSizeLp, NeverWorseThanEqualChunksAtTheSameCount) {
  std::mt19937 rng(20261129);
  SchedulerOptions o;
  o.max_chunks = 16;
  for (int trial = 0; trial < 24; ++trial) {
    const Network net = test::random_network(rng, 1 + trial % 3);
    for (double bytes : test::test_sizes())
      for (int k : {1, 2, 3, 5, 8}) {
        const Schedule equal = schedule_equal_chunks(net, bytes, k);
        const Schedule lp = schedule_hipipe_fixed_chunks(net, bytes, k, o);
        EXPECT_LE(lp.makespan_us, equal.makespan_us * (1 + 1e-12))
            << "seed 20261129 trial " << trial << " bytes " << bytes << " K " << k;
        EXPECT_TRUE(schedule_violations(net, bytes, lp).empty()) << "trial " << trial << " K " << k;
      }
  }
}

TEST(HipipeChunkSizeLp, UnequalSizesWinWhenFillAndDrainMatter) {
  // Balanced two-dimension case without latency, 4 chunks: equal chunks idle the second dimension
  // during fill and the first during drain; smaller first and last chunks shorten both, so the LP
  // must strictly improve on equal chunks and make the outer chunks smaller than the inner ones.
  const Network net{"balanced", {{"d0", 2, 0.0, 1.0}, {"d1", 2, 0.0, 0.5}}};
  const Schedule equal = schedule_equal_chunks(net, 1000.0, 4);
  const Schedule lp = schedule_hipipe_fixed_chunks(net, 1000.0, 4);
  EXPECT_LT(lp.makespan_us, equal.makespan_us * (1 - 1e-6));
  EXPECT_LT(lp.chunk_bytes.front(), lp.chunk_bytes[1]);
  EXPECT_LT(lp.chunk_bytes.back(), lp.chunk_bytes[2]);
}

TEST(HipipeChunkSizeLp, HipipeBeatsOrTiesEveryBaselineItSearches) {
  std::mt19937 rng(7);
  SchedulerOptions o;
  o.max_chunks = 16;
  for (int trial = 0; trial < 12; ++trial) {
    const Network net = test::random_network(rng, 2 + trial % 2);
    for (double bytes : test::test_sizes()) {
      const double h = schedule_hipipe(net, bytes, o).makespan_us;
      EXPECT_LE(h, schedule_hierarchical(net, bytes).makespan_us * (1 + 1e-12)) << trial;
      EXPECT_LE(h, schedule_equal_chunks_best(net, bytes, o).makespan_us * (1 + 1e-12)) << trial;
    }
  }
}

}  // namespace
}  // namespace ncclbot::hipipe
