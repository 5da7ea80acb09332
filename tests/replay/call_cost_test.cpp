// A policy's own per-call cost (ReplayTask::call_cost_us, ReplayJob::call_cost_us): every call pays
// (mu[a_t] + cost) / mu* - 1, the final loss stays the committed arm's, and a cost of 0 changes no
// bit. Level shifts (the cost relative to the best arm at each call's levels) are checked in
// call_dynamics_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ncclbot/core/error.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay.hpp"
#include "support/same_bits.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!ncclbot::test::same_bits(a[i], b[i])) return false;
  return true;
}

ReplayOutcome cold_greedy(const Sweep& s, int delay, double cost_us) {
  PolicyConfig greedy;
  greedy.kind = PolicyKind::kGreedy;
  greedy.n0 = 0.0;
  ReplayTask task;
  task.sweep = s.view();
  task.horizon = 20;
  task.delay = delay;
  task.call_cost_us = cost_us;
  task.seed = 3;
  task.stream_id = 9;
  return visit_policy(greedy, [&](auto& p) { return replay_one(p, task); });
}

}  // namespace

// Cold greedy on 15, 12 and 10 us (docs/replay.md's worked case), T = 20, with 0.5 us per call:
// every call adds 0.5 / 10 = 0.05 to the online loss.
//   D = 0: (0.5 + 0.2) / 20 + 0.05 = 0.085;  D = 2: (2 * 0.5 + 2 * 0.2) / 20 + 0.05 = 0.12.
TEST(CallCost, EveryCallPaysThePoliciesOwnCostRelativeToTheBestArm) {
  const Sweep s = three_arms_15_12_10();
  EXPECT_NEAR(cold_greedy(s, 0, 0.5).online_loss, 0.085, 1e-15);
  EXPECT_NEAR(cold_greedy(s, 2, 0.5).online_loss, 0.12, 1e-15);
  EXPECT_EQ(cold_greedy(s, 0, 0.5).final_loss, 0.0);  // the committed arm is still the best one
  EXPECT_EQ(cold_greedy(s, 0, 0.5).final_slot, cold_greedy(s, 0, 0.0).final_slot);
}

TEST(CallCost, AZeroCostChangesNoBitInTheEngine) {
  const Sweep s = three_arms_15_12_10();
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0};
  job.configs = {parse_policy_spec("ucb1:c=0.3,n0=0"), parse_policy_spec("egreedy:eps=0.2,n0=0")};
  job.seeds = 9;  // two batches of four seeds and one alone (replay_batch and replay_one)
  job.horizon = 50;
  const ReplayResults free = run_cpu_replay(job);
  job.call_cost_us = {0.0, 0.0};
  const ReplayResults zero = run_cpu_replay(job);
  EXPECT_TRUE(same_bits(free.online, zero.online));
  EXPECT_TRUE(same_bits(free.final_loss, zero.final_loss));
  // Costs per config: 1 us on a 10 us best arm is 0.1 on every call of that config only.
  job.call_cost_us = {1.0, 0.0};
  const ReplayResults costly = run_cpu_replay(job);
  EXPECT_NEAR(costly.online_at(0, 0), free.online_at(0, 0) + 0.1, 1e-12);
  EXPECT_TRUE(ncclbot::test::same_bits(costly.online_at(1, 0), free.online_at(1, 0)));
  EXPECT_TRUE(same_bits(costly.final_loss, free.final_loss));
}

TEST(CallCost, ABadCostListIsAUsageError) {
  const Sweep s = three_arms_15_12_10();
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0};
  job.configs = {parse_policy_spec("ucb1:c=0.3,n0=0")};
  for (const std::vector<double>& bad :
       {std::vector<double>{1.0, 2.0}, std::vector<double>{-0.1}, std::vector<double>{std::nan("")},
        std::vector<double>{std::numeric_limits<double>::infinity()}}) {
    job.call_cost_us = bad;
    EXPECT_THROW(run_cpu_replay(job), UsageError);
  }
}
