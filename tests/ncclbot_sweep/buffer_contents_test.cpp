// The result check's expected values, worked by hand for 3 ranks (send_value(r, i) = r + 1 + i % 5).
#include <gtest/gtest.h>

#include <vector>

#include "buffer_contents.hpp"

namespace {

using ncclbot::Collective;
using ncclbot::sweep_tool::buffer_layout;
using ncclbot::sweep_tool::BufferLayout;
using ncclbot::sweep_tool::check_received;
using ncclbot::sweep_tool::expected_value;
using ncclbot::sweep_tool::layout_fault;

TEST(SweepBufferContents, AllReduceSumsEveryRank) {
  const BufferLayout l = buffer_layout(Collective::kAllReduce, 40, 3);
  EXPECT_EQ(l.send_count, 10u);
  EXPECT_EQ(l.recv_count, 10u);
  // element 7: (1 + 2) + (2 + 2) + (3 + 2) = 12
  EXPECT_EQ(expected_value(Collective::kAllReduce, 1, 3, l, 7), 12.0f);
}

TEST(SweepBufferContents, AllGatherAndReduceScatterSplitTheSizeByRank) {
  // nccl-tests' size: 48 B = 12 floats gathered, 4 per rank.
  const BufferLayout ag = buffer_layout(Collective::kAllGather, 48, 3);
  EXPECT_EQ(ag.send_count, 4u);
  EXPECT_EQ(ag.recv_count, 12u);
  EXPECT_EQ(ag.call_count, 4u);
  EXPECT_EQ(expected_value(Collective::kAllGather, 0, 3, ag, 9), 3.0f + 1.0f);  // rank 2's element 1
  const BufferLayout rs = buffer_layout(Collective::kReduceScatter, 48, 3);
  EXPECT_EQ(rs.send_count, 12u);
  EXPECT_EQ(rs.recv_count, 4u);
  // rank 2's element 1 is element 9 of the sum: 3 * (9 % 5) + 1 + 2 + 3 = 18
  EXPECT_EQ(expected_value(Collective::kReduceScatter, 2, 3, rs, 1), 18.0f);
}

TEST(SweepBufferContents, ReduceLeavesNonRootsUnspecified) {
  const BufferLayout l = buffer_layout(Collective::kReduce, 8, 2);
  EXPECT_FALSE(expected_value(Collective::kReduce, 1, 2, l, 0));
  EXPECT_EQ(expected_value(Collective::kReduce, 0, 2, l, 1), 1.0f + 1 + 2 + 1);
  EXPECT_EQ(expected_value(Collective::kBroadcast, 1, 2, l, 1), 2.0f);
}

TEST(SweepBufferContents, TheCheckNamesTheFirstWrongElement) {
  const BufferLayout l = buffer_layout(Collective::kAllReduce, 12, 1);
  std::vector<float> recv{1.0f, 2.0f, 3.0f};
  EXPECT_EQ(check_received(Collective::kAllReduce, 0, 1, l, recv.data()), "");
  recv[1] = 5.0f;
  EXPECT_EQ(check_received(Collective::kAllReduce, 0, 1, l, recv.data()), "element 1 is 5, expected 2");
}

TEST(SweepBufferContents, SizesThatCannotRunAreNamed) {
  EXPECT_STREQ(layout_fault(Collective::kAllReduce, 6, 2), "not a whole number of 4-byte floats");
  EXPECT_STREQ(layout_fault(Collective::kAllGather, 12, 2),
               "not divisible into equal float blocks, one per rank");
  EXPECT_EQ(layout_fault(Collective::kAllReduce, 12, 2), nullptr);
}

}  // namespace
