// A scenario that tunes on one sweep and scores on another holds both; with knob arms in either, the
// union keeps every context's arms, samples and priors, and still refuses a context in both.
#include <gtest/gtest.h>

#include "ncclbot/core/error.hpp"
#include "ncclbot/core/sweep.hpp"
#include "study/sweep_source.hpp"

namespace {

using namespace ncclbot;

// One context on `fabric`: Ring/Simple at NCCL's knobs (time t) and at 8 channels (time t / 2).
Sweep one_context(const std::string& fabric, float t) {
  SweepBuilder b(fabric + ".csv");
  const Context ctx{fabric, Collective::kAllReduce, 2, 8, 4096};
  for (int r = 0; r < 2; ++r) {
    b.add(ctx, Arm{Algo::kRing, Proto::kSimple, 0, 0}, r, t + float(r), 7.0f, 2 + r);
    b.add(ctx, Arm{Algo::kRing, Proto::kSimple, 8, 0}, r, t / 2 + float(r), 7.0f, 4 + r);
  }
  return b.build();
}

TEST(KnobSweepMerge, TheUnionKeepsEveryKnobArm) {
  const Sweep a = one_context("a", 10.0f), b = one_context("b", 30.0f);
  const Sweep m = study::merge_sweeps(b, a);
  ASSERT_EQ(m.num_contexts(), 2);
  EXPECT_FALSE(m.slot_shaped());
  EXPECT_EQ(m.context(0).fabric, "a");  // canonical order
  for (int c = 0; c < 2; ++c) {
    const float t = c == 0 ? 10.0f : 30.0f;
    ASSERT_EQ(m.arms(c).size(), 2u);
    EXPECT_EQ(m.arms(c)[1], (Arm{Algo::kRing, Proto::kSimple, 8, 0}));
    EXPECT_EQ(m.arm_sample(c, 0, 1), t + 1.0f);
    EXPECT_EQ(m.arm_sample(c, 1, 0), t / 2);
    EXPECT_EQ(m.arm_prior(c, 1), 7.0f);
  }
  EXPECT_THROW(study::merge_sweeps(a, one_context("a", 5.0f)), UsageError);
}

}  // namespace
