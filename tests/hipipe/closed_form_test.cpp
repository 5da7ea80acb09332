// The schedules against closed forms: one dimension is a ring all-reduce, one chunk is the sum of
// the stage times, and the chunk-count estimate is sqrt((sum b - b*) M / a*).
#include <gtest/gtest.h>

#include <cmath>

#include "ncclbot/hipipe/closed_form.hpp"
#include "ncclbot/hipipe/schedulers.hpp"

namespace ncclbot::hipipe {
namespace {

Network one_h100_node() {
  return {"h100-node", {{"nvlink", 8, 3.4, 370.0}}};
}
Network h100_16_nodes() {
  return {"h100-ib", {{"nvlink", 8, 3.4, 370.0}, {"ib", 16, 14.0, 47.0}}};
}

TEST(HipipeClosedForm, RingFormulaByHand) {
  // 8 ranks, 3.4 us, 370 GB/s, 1 GiB: 2*7*3.4 = 47.6 us plus 2*(7/8)*2^30 B / 370e3 B/us
  // = 1.75 * 2902.0119... = 5078.5086... us; total 5126.1086... us.
  EXPECT_NEAR(ring_allreduce_us(8, 3.4, 370.0, 1073741824.0), 5126.1086, 1e-3);
}

TEST(HipipeClosedForm, OneDimensionEveryPipelinedScheduleIsTheRingAtBest) {
  // With one dimension RS and AG share its links, so chunking only adds latency: HiPIPE must pick
  // one chunk and land exactly on the ring formula.
  const Network net = one_h100_node();
  for (double bytes : {8.0, 65536.0, 1073741824.0}) {
    const double ring = ring_allreduce_us(8, 3.4, 370.0, bytes);
    EXPECT_NEAR(schedule_hipipe(net, bytes).makespan_us, ring, 1e-9 * ring) << bytes;
    EXPECT_NEAR(schedule_hierarchical(net, bytes).makespan_us, ring, 1e-9 * ring) << bytes;
    EXPECT_NEAR(sequential_allreduce_us(net, bytes), ring, 1e-9 * ring) << bytes;
    // Four equal chunks: the dimension serves 8 stages, each 7 * 3.4 us of latency.
    EXPECT_NEAR(schedule_equal_chunks(net, bytes, 4).makespan_us, ring + 6 * 7 * 3.4, 1e-9 * ring) << bytes;
  }
}

TEST(HipipeClosedForm, OneChunkIsTheSequentialSumByHand) {
  // 8 x 16 ranks, 1 GiB. NVLink stage: 7*3.4 + (7/8) * 2^30 / 370e3 = 23.8 + 2539.2543 = 2563.0543 us.
  // IB stage (holds 2^27 B): 15*14 + (15/16) * 2^27 / 47e3 = 210 + 2677.2153 = 2887.2153 us.
  // Sequential RS, RS, AG, AG: 2 * (2563.0543 + 2887.2153) = 10900.5393 us.
  const Network net = h100_16_nodes();
  const double bytes = 1073741824.0;
  EXPECT_NEAR(sequential_allreduce_us(net, bytes), 10900.5393, 1e-3);
  EXPECT_NEAR(schedule_hierarchical(net, bytes).makespan_us, 10900.5393, 1e-3);
  EXPECT_NEAR(schedule_hipipe_fixed_chunks(net, bytes, 1).makespan_us, 10900.5393, 1e-3);
}

TEST(HipipeClosedForm, ChunkCountEstimateByHand) {
  // Same network. Per byte of M: b_nv = (7/8)/370e3 = 2.36486e-6, b_ib = (15/16)/47e3/8 = 2.49335e-6
  // per stage. Bottleneck (more work for the whole message): IB, a* = 2*210 = 420 us,
  // b* = 4.98670e-6. sum b - b* = 2 * 2.36486e-6 = 4.72973e-6.
  // K* = sqrt(4.72973e-6 * 2^30 / 420) = sqrt(12.0918) = 3.4773.
  EXPECT_NEAR(estimated_chunk_count(h100_16_nodes(), 1073741824.0, 64), 3.4773, 1e-3);
  EXPECT_EQ(estimated_chunk_count(h100_16_nodes(), 1073741824.0, 2), 2.0);  // clamped
  EXPECT_EQ(estimated_chunk_count(h100_16_nodes(), 8.0, 64), 1.0);          // tiny: no pipelining
  // No latency on the bottleneck: more chunks always help, so the estimate is the cap.
  Network no_latency = h100_16_nodes();
  no_latency.dimensions[1].latency_us = 0;
  EXPECT_EQ(estimated_chunk_count(no_latency, 1073741824.0, 64), 64.0);
}

TEST(HipipeClosedForm, CandidatesBracketTheEstimate) {
  SchedulerOptions o;
  const auto ks = chunk_count_candidates(h100_16_nodes(), 1073741824.0, o);
  // K* = 3.48: 1, then floor(1.74) = 1 .. ceil(6.95) = 7.
  EXPECT_EQ(ks, (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
  o.max_chunks = 4096;
  o.search_points = 5;
  Network no_latency = h100_16_nodes();
  no_latency.dimensions[1].latency_us = 0;
  const auto wide = chunk_count_candidates(no_latency, 1073741824.0, o);
  // Estimate 4096 -> [2048, 4096], geometric: 2048, 2435.496, 2896.309, 3444.312, 4096 (rounded), plus 1.
  EXPECT_EQ(wide, (std::vector<int>{1, 2048, 2435, 2896, 3444, 4096}));
}

}  // namespace
}  // namespace ncclbot::hipipe
