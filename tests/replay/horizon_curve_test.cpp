// Loss vs horizon (replay/horizon_curve.hpp): every point of the curve is, bit for bit, the online
// loss the CPU engine gives for a replay of that horizon, whatever the feedback schedule, per-call
// cost or thread count.
#include <gtest/gtest.h>

#include <tuple>

#include "ncclbot/core/error.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/horizon_curve.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "support/every_mechanism.hpp"
#include "support/same_bits.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

ReplayJob curve_job(const Sweep& s, int delay, int window) {
  ReplayJob job;
  job.sweep = &s;
  for (int c = 0; c < s.num_contexts(); ++c) job.contexts.push_back(c);
  for (const char* spec :
       {"auto", "greedy:n0=1", "ucb1:c=0.2,n0=4", "thompson:n0=2", "etc:m=2", "ducb:gamma=0.95"})
    for (auto& p : parse_policy_grid(spec)) job.configs.push_back(p);
  job.seeds = 3;
  job.seed_base = 11;
  job.delay = delay;
  job.window = window;
  job.call_cost_us = std::vector<double>(job.configs.size(), 0.04);
  job.threads = 2;
  return job;
}

}  // namespace

// With call dynamics too: the contexts on one node count are a communicator, whose first uses before
// each horizon are charged as the engine charges them at that horizon (replay/first_use.hpp).
TEST(HorizonCurve, EveryPointIsTheReplayOfThatHorizon) {
  Sweep s = random_tiny_sweep(5, 6, true);
  const std::vector<int> horizons = {1, 7, 40, 130};
  for (const auto& [delay, window, dynamic] : std::vector<std::tuple<int, int, bool>>{
           {0, 1, false}, {3, 1, false}, {12, 8, false}, {0, 1, true}, {12, 8, true}}) {
    s.set_dynamics(dynamic ? every_mechanism() : SweepDynamics{});
    ReplayJob job = curve_job(s, delay, window);
    const HorizonCurve curve = replay_horizon_curve(job, horizons);
    ASSERT_EQ(curve.online.size(), job.configs.size());
    for (size_t h = 0; h < horizons.size(); ++h) {
      job.horizon = horizons[h];
      const ReplayResults r = run_cpu_replay(job);
      for (int cfg = 0; cfg < int(job.configs.size()); ++cfg) {
        const std::vector<double> want = r.online_of(cfg);
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_TRUE(same_bits(curve.online[size_t(cfg)][h][i], want[i]))
              << job.configs[size_t(cfg)].text << " T " << horizons[h] << " D " << delay << " W " << window
              << " context " << i << ": " << curve.online[size_t(cfg)][h][i] << " vs " << want[i];
      }
    }
    job.threads = 1;
    const HorizonCurve one_thread = replay_horizon_curve(job, horizons);
    for (size_t c = 0; c < curve.online.size(); ++c)
      for (size_t h = 0; h < horizons.size(); ++h)
        for (size_t i = 0; i < curve.online[c][h].size(); ++i)
          ASSERT_TRUE(same_bits(curve.online[c][h][i], one_thread.online[c][h][i]));
  }
}

// The curve by hand, not only against the engine it shares its replay with: cold greedy on 15, 12
// and 10 us plays arms 0, 1, 2 and then 2 for good (losses 0.5, 0.2, 0, 0, ...), so the online loss
// of the first h calls is 0.5 / 1, 0.7 / 2, 0.7 / 3 and 0.7 / 20. With D = 2 it probes 0, 1, 2,
// then plays 0 and 1 once more before settling (delayed_feedback_test.cpp's trace): 1.4 / 5 at
// h = 5 and 1.4 / 20 at h = 20. A cost of 0.5 us a call adds 0.5 / 10 = 0.05 at every h.
TEST(HorizonCurve, ColdGreedyOnThreeArmsGivesTheHandComputedCurve) {
  const std::vector<int> horizons = {1, 2, 3, 5, 20};
  const std::vector<double> undelayed = {0.5, 0.35, 0.7 / 3, 0.7 / 5, 0.7 / 20};
  const std::vector<double> delayed = {0.5, 0.35, 0.7 / 3, 1.4 / 5, 1.4 / 20};
  const Sweep s = three_arms_15_12_10();
  ReplayJob job;
  job.sweep = &s;
  job.seeds = 2;  // a deterministic policy: every seed gives the same curve
  job.contexts = {0};
  job.configs = {parse_policy_spec("greedy:n0=0")};
  for (const double cost : {0.0, 0.5}) {
    job.call_cost_us = {cost};
    for (const int delay : {0, 2}) {
      job.delay = delay;
      const HorizonCurve curve = replay_horizon_curve(job, horizons);
      for (size_t h = 0; h < horizons.size(); ++h) {
        const double want = (delay == 0 ? undelayed : delayed)[h] + cost / 10.0;
        EXPECT_NEAR(curve.online[0][h][0], want, 1e-12) << "D " << delay << " h " << horizons[h];
      }
    }
  }
}

TEST(HorizonCurve, BadHorizonsAreUsageErrors) {
  const Sweep s = random_tiny_sweep(2, 3, false);
  const ReplayJob job = curve_job(s, 0, 1);
  EXPECT_THROW(replay_horizon_curve(job, {}), UsageError);
  EXPECT_THROW(replay_horizon_curve(job, {0, 5}), UsageError);
  EXPECT_THROW(replay_horizon_curve(job, {5, 5}), UsageError);
  EXPECT_THROW(replay_horizon_curve(job, {9, 5}), UsageError);
  // The job is checked as every engine checks it.
  ReplayJob bad = job;
  bad.policy_start = -1;
  EXPECT_THROW(replay_horizon_curve(bad, {5}), UsageError);
  bad = job;
  bad.contexts = {s.num_contexts()};
  EXPECT_THROW(replay_horizon_curve(bad, {5}), UsageError);
}
