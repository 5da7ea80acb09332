// Themis's greedy per-chunk dimension order, checked against loads worked out by hand.
#include <gtest/gtest.h>

#include "ncclbot/hipipe/feasibility.hpp"
#include "ncclbot/hipipe/schedulers.hpp"

namespace ncclbot::hipipe {
namespace {

TEST(HipipeThemisGreedy, OrdersFollowTheLoadsByHand) {
  // NVLink 8 x 370 GB/s, leaf 4 x 47 GB/s, spine 8 x 23.5 GB/s; 1 GiB in 4 chunks of 268.435456 MB.
  // Chunk 0 (all loads 0, stable order 0,1,2):
  //   L0 += 268.435 * 7/8 = 234.881; s = 33.554
  //   L1 += 33.554 * 3/4 / (47/370) = 198.114; s = 8.389
  //   L2 += 8.389 * 7/8 / (23.5/370) = 115.566
  // Chunk 1: ascending loads -> 2 (115.6), 1 (198.1), 0 (234.9):
  //   L2 += 268.435 * 7/8 / 0.063514 = 3698.1 -> 3813.7; s = 33.554
  //   L1 += 33.554 * 3/4 / 0.127027 = 198.114 -> 396.23; s = 8.389
  //   L0 += 8.389 * 7/8 = 7.340 -> 242.22
  // Chunk 2: ascending -> 0 (242.2), 1 (396.2), 2 (3813.7).
  const Network net{"3d", {{"nvlink", 8, 3.4, 370.0}, {"leaf", 4, 14.0, 47.0}, {"spine", 8, 14.0, 23.5}}};
  const auto orders = themis_orders(net, 1073741824.0, 4);
  ASSERT_EQ(orders.size(), 4u);
  EXPECT_EQ(orders[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(orders[1], (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(orders[2], (std::vector<int>{0, 1, 2}));
  const Schedule s = schedule_themis_greedy(net, 1073741824.0, 4);
  EXPECT_EQ(s.scheduler, "themis");
  EXPECT_TRUE(schedule_violations(net, 1073741824.0, s).empty());
  // The second chunk's all-gather runs the order reversed: spine is its last stage.
  EXPECT_EQ(s.ops[1 * 6 + 5].dim, 2);
  EXPECT_EQ(s.ops[1 * 6 + 0].dim, 2);
}

TEST(HipipeThemisGreedy, OneChunkIsTheDefaultOrder) {
  const Network net{"2d", {{"a", 4, 1.0, 100.0}, {"b", 2, 1.0, 10.0}}};
  EXPECT_EQ(themis_orders(net, 1e6, 1), (std::vector<std::vector<int>>{{0, 1}}));
  EXPECT_DOUBLE_EQ(schedule_themis_greedy(net, 1e6, 1).makespan_us,
                   schedule_hierarchical(net, 1e6).makespan_us);
}

}  // namespace
}  // namespace ncclbot::hipipe
