// The simulated HiPIPE arm (slot 23) in the policies: AUTO is NCCL's choice and NCCL cannot run
// HiPIPE, so AUTO never picks it even where its prior is the lowest; the oracle and the bandits see
// it as an ordinary arm, and a warm start reads its prior.
#include <gtest/gtest.h>

#include "ncclbot/policy/auto_policy.hpp"
#include "ncclbot/policy/oracle.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/loss.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

constexpr int kRingSimple = 5, kTreeSimple = 2;

// One all-reduce context: Tree/Simple (measured 120, prior 60), Ring/Simple (measured 100, prior
// 80) and HiPIPE/Simple (measured `hipipe_us`, prior 10: the lowest prior of the three).
Sweep three_arms(float hipipe_us) {
  return tiny_sweep({{tiny_context(16, 1 << 30),
                      {{kTreeSimple, {120.0f, 120.0f}, 60.0f},
                       {kRingSimple, {100.0f, 100.0f}, 80.0f},
                       {kHiPipeSlot, {hipipe_us, hipipe_us}, 10.0f}}}});
}

PolicyContext context_of(const SweepView& v, int c) {
  PolicyContext ctx;
  ctx.mask = v.mask(c);
  ctx.prior_us = v.prior_us + c * kNumArms;
  ctx.true_mean_us = v.mean_us + c * kNumArms;
  return ctx;
}

}  // namespace

TEST(HiPipeSlot, AutoNeverPicksItEvenWithTheLowestPrior) {
  const Sweep s = three_arms(50.0f);
  const SweepView v = s.view();
  AutoPolicy p;
  p.reset(context_of(v, 0));
  EXPECT_EQ(p.pick, kTreeSimple);  // the lowest prior among NCCL's arms (60 < 80), not HiPIPE's 10
  EXPECT_EQ(auto_slot(v, 0), kTreeSimple);
  // Without a prior AUTO falls back to the lowest valid NCCL slot, still not 23.
  PolicyContext no_prior = context_of(v, 0);
  no_prior.prior_us = nullptr;
  p.reset(no_prior);
  EXPECT_EQ(p.pick, kTreeSimple);
}

TEST(HiPipeSlot, OraclePicksItWhereItIsTrulyBestAndNotElsewhere) {
  {
    const Sweep s = three_arms(50.0f);
    OraclePolicy p;
    p.reset(context_of(s.view(), 0));
    EXPECT_EQ(p.pick, kHiPipeSlot);
    EXPECT_EQ(best_slot(s.view(), 0), kHiPipeSlot);
    // AUTO's loss is priced against HiPIPE: Tree/Simple 120 / 50 - 1.
    EXPECT_DOUBLE_EQ(relative_loss(s.view(), 0, auto_slot(s.view(), 0)), 120.0 / 50.0 - 1.0);
  }
  {
    const Sweep s = three_arms(300.0f);
    OraclePolicy p;
    p.reset(context_of(s.view(), 0));
    EXPECT_EQ(p.pick, kRingSimple);
  }
}

TEST(HiPipeSlot, WarmGreedyStartsFromHiPipesPriorAndColdAutoDoesNot) {
  // greedy with a heavy prior plays the prior's argmin over every arm it may choose: HiPIPE here.
  const Sweep s = three_arms(50.0f);
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0};
  for (const char* spec : {"greedy:n0=100", "auto"})
    for (auto& p : parse_policy_grid(spec)) job.configs.push_back(p);
  job.seeds = 2;
  job.horizon = 5;
  job.threads = 1;
  const ReplayResults r = run_cpu_replay(job);
  EXPECT_DOUBLE_EQ(r.online_at(0, 0), 0.0);                 // greedy: HiPIPE from the first call
  EXPECT_DOUBLE_EQ(r.online_at(1, 0), 120.0 / 50.0 - 1.0);  // AUTO: Tree/Simple throughout
  EXPECT_DOUBLE_EQ(r.final_at(0, 0), 0.0);
}
