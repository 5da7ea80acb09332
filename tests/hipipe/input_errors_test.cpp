// Degenerate and infeasible inputs get a clear UsageError, never a crash or a silent number.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "ncclbot/core/error.hpp"
#include "ncclbot/hipipe/closed_form.hpp"
#include "ncclbot/hipipe/lp_chunk_sizes.hpp"
#include "ncclbot/hipipe/predicted_time.hpp"
#include "ncclbot/hipipe/schedulers.hpp"

namespace ncclbot::hipipe {
namespace {

const Network kGood{"good", {{"nv", 8, 3.4, 370.0}, {"ib", 4, 14.0, 47.0}}};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(HipipeInputErrors, DegenerateNetworks) {
  Network zero_bw = kGood;
  zero_bw.dimensions[1].bandwidth_GBps = 0;
  EXPECT_NE(message_of([&] { schedule_hipipe(zero_bw, 1e6); }).find("bandwidth"), std::string::npos);
  Network one_rank_dim = kGood;
  one_rank_dim.dimensions[0].group_size = 1;
  EXPECT_NE(message_of([&] { schedule_hierarchical(one_rank_dim, 1e6); }).find("group size 1"),
            std::string::npos);
  Network negative = kGood;
  negative.dimensions[0].latency_us = -1;
  EXPECT_THROW(schedule_equal_chunks(negative, 1e6, 4), UsageError);
  Network nan_bw = kGood;
  nan_bw.dimensions[0].bandwidth_GBps = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(schedule_themis_greedy(nan_bw, 1e6, 4), UsageError);
  Network negative_bw = kGood;
  negative_bw.dimensions[0].bandwidth_GBps = -5;
  EXPECT_THROW(sequential_allreduce_us(negative_bw, 1e6), UsageError);
  Network no_dims{"empty", {}};
  EXPECT_NE(message_of([&] { schedule_hipipe(no_dims, 1e6); }).find("one rank"), std::string::npos);
}

TEST(HipipeInputErrors, DegenerateSizesAndCounts) {
  EXPECT_THROW(schedule_hipipe(kGood, 0), UsageError);
  EXPECT_THROW(schedule_hipipe(kGood, -1024), UsageError);
  EXPECT_THROW(schedule_hipipe(kGood, std::numeric_limits<double>::infinity()), UsageError);
  EXPECT_THROW(schedule_equal_chunks(kGood, 1e6, 0), UsageError);
  EXPECT_THROW(schedule_themis_greedy(kGood, 1e6, -3), UsageError);
  SchedulerOptions o;
  o.max_chunks = 0;
  EXPECT_THROW(schedule_hipipe(kGood, 1e6, o), UsageError);
  EXPECT_THROW(estimated_chunk_count(kGood, 1e6, 0), UsageError);
  EXPECT_THROW(solve_chunk_sizes_lp(kGood, 1e6, {}, {{}, {}}), UsageError);
}

TEST(HipipeInputErrors, PredictedTimeArm) {
  EXPECT_THROW(hipipe_predicted_time_us("h100-ib-a", Collective::kAllGather, 4, 8, 1 << 20), UsageError);
  EXPECT_THROW(hipipe_predicted_time_us("h100-ib-a", Collective::kAllReduce, 1, 1, 1 << 20), UsageError);
  EXPECT_THROW(hipipe_predicted_time_us("h100-ib-a", Collective::kAllReduce, 4, 8, 0), UsageError);
  EXPECT_THROW(hipipe_predicted_time_us("nope", Collective::kAllReduce, 4, 8, 1 << 20), UsageError);
}

}  // namespace
}  // namespace ncclbot::hipipe
