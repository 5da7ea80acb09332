// The feasibility checker catches each kind of broken schedule, and every scheduler's output passes
// it on seeded random networks.
#include <gtest/gtest.h>

#include <random>

#include "hipipe/random_networks.hpp"
#include "ncclbot/hipipe/feasibility.hpp"
#include "ncclbot/hipipe/list_scheduler.hpp"
#include "ncclbot/hipipe/schedulers.hpp"

namespace ncclbot::hipipe {
namespace {

const Network kTwoDims{"two", {{"nv", 4, 1.0, 100.0}, {"ib", 4, 5.0, 25.0}}};
constexpr double kBytes = 1 << 24;

TEST(HipipeFeasibility, AcceptsAListSchedule) {
  EXPECT_TRUE(schedule_violations(kTwoDims, kBytes, schedule_equal_chunks(kTwoDims, kBytes, 4)).empty());
}

TEST(HipipeFeasibility, CatchesTwoOperationsOnOneDimensionAtOnce) {
  Schedule s = schedule_equal_chunks(kTwoDims, kBytes, 2);
  // Start chunk 1's first reduce-scatter together with chunk 0's: both on dimension 0.
  Operation& op = s.ops[1 * 4 + 0];
  const double length = op.end_us - op.start_us;
  op.start_us = 0;
  op.end_us = length;
  const auto v = schedule_violations(kTwoDims, kBytes, s);
  ASSERT_FALSE(v.empty());
  bool found = false;
  for (const auto& line : v) found |= line.find("at once") != std::string::npos;
  EXPECT_TRUE(found);
}

TEST(HipipeFeasibility, CatchesAStageBeforeItsPredecessor) {
  Schedule s = schedule_hierarchical(kTwoDims, kBytes);
  Operation& op = s.ops[1];  // chunk 0's second stage, moved to time 0
  op.end_us -= op.start_us;
  op.start_us = 0;
  EXPECT_FALSE(schedule_violations(kTwoDims, kBytes, s).empty());
}

TEST(HipipeFeasibility, CatchesWrongDurationsSizesAndMakespan) {
  Schedule shorter = schedule_hierarchical(kTwoDims, kBytes);
  shorter.ops[0].end_us *= 0.5;
  EXPECT_FALSE(schedule_violations(kTwoDims, kBytes, shorter).empty());
  Schedule sizes = schedule_equal_chunks(kTwoDims, kBytes, 2);
  sizes.chunk_bytes[0] *= 0.9;  // no longer sums to the message (and durations disagree)
  EXPECT_FALSE(schedule_violations(kTwoDims, kBytes, sizes).empty());
  Schedule makespan = schedule_hierarchical(kTwoDims, kBytes);
  makespan.makespan_us *= 0.9;
  EXPECT_FALSE(schedule_violations(kTwoDims, kBytes, makespan).empty());
  Schedule order = schedule_hierarchical(kTwoDims, kBytes);
  order.rs_orders[0] = {0, 0};
  EXPECT_FALSE(schedule_violations(kTwoDims, kBytes, order).empty());
}

TEST(HipipeFeasibility, EverySchedulerOnRandomNetworks) {
  std::mt19937 rng(424242);
  SchedulerOptions o;
  o.max_chunks = 12;
  for (int trial = 0; trial < 16; ++trial) {
    const Network net = test::random_network(rng, 1 + trial % 3);
    for (double bytes : test::test_sizes())
      for (const Schedule& s : schedule_all(net, bytes, o)) {
        const auto v = schedule_violations(net, bytes, s);
        EXPECT_TRUE(v.empty()) << "seed 424242 trial " << trial << " " << s.scheduler << ": "
                               << (v.empty() ? "" : v.front());
      }
  }
}

TEST(HipipeFeasibility, FixedSequenceTimingRejectsACycle) {
  const Schedule s = schedule_equal_chunks(kTwoDims, kBytes, 2);
  auto seq = dimension_sequences(kTwoDims, s);
  // Dimension 0 serving chunk 0's all-gather before its reduce-scatter contradicts the chunk order.
  std::swap(seq[0].front(), seq[0].back());
  EXPECT_THROW(time_with_fixed_sequences(kTwoDims, s.chunk_bytes, s.rs_orders, seq), std::logic_error);
}

}  // namespace
}  // namespace ncclbot::hipipe
