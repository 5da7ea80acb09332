// Drawing every replayed call's latency afresh (Sweep::observe_afresh, SweepView::fresh): the replay
// observes the truth times the context's noise instead of one of the stored samples (a study's
// [[sweep]] observe = "fresh" is in price_on_truth_test.cpp).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "support/tiny_sweep.hpp"

namespace {

using namespace ncclbot;

// Tree/Simple (prior 5) and Ring/Simple (prior 6) of one context, two samples each.
Sweep tree_and_ring(float tree0, float tree1, float ring0, float ring1) {
  return test::tiny_sweep({{test::tiny_context(2, 1 << 20),
                            {{arm_slot(Algo::kTree, Proto::kSimple), {tree0, tree1}, 5.0f},
                             {arm_slot(Algo::kRing, Proto::kSimple), {ring0, ring1}, 6.0f}}}});
}

ReplayResults replay(const Sweep& s, const std::string& spec, int horizon, int seeds, int threads = 1) {
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0};
  job.configs = {parse_policy_spec(spec)};
  job.seeds = seeds;
  job.horizon = horizon;
  job.threads = threads;
  job.keep_per_seed = true;
  return run_cpu_replay(job);
}

// The samples say Tree (9, 9) beats Ring (10, 12); the truth says Ring (8) beats Tree (9).
Sweep misleading_samples_priced_on_truth() {
  Sweep s = tree_and_ring(9, 9, 10, 12);
  s.price_on(tree_and_ring(9, 9, 8, 8));
  return s;
}

}  // namespace

// By hand, priced on the truth: etc:m=1 probes Tree, then Ring, and keeps the lower latency it saw.
// From the samples it sees 9 and 10 or 12 and keeps Tree: online (0.125 + 0 + 8 x 0.125) / 10 =
// 0.1125, final 0.125. Drawn afresh with no noise it sees the truths 9 and 8 and keeps Ring: online
// (0.125 + 0 + 8 x 0) / 10 = 0.0125, final 0.
TEST(FreshObservations, ALearnerSeesTheTruthsNoiseNotTheStoredSamples) {
  Sweep s = misleading_samples_priced_on_truth();
  EXPECT_DOUBLE_EQ(replay(s, "etc:m=1", 10, 3).online[0], 0.1125);
  s.observe_afresh({ObservationNoise{}});  // sigma 0, no spikes: every call observes its truth
  const ReplayResults r = replay(s, "etc:m=1", 10, 3);
  EXPECT_DOUBLE_EQ(r.online[0], 0.0125);
  EXPECT_EQ(r.final_loss[0], 0.0);
}

// With noise the draws differ per call and per seed but not with the thread count, and a second run
// gives the same bits.
TEST(FreshObservations, NoisyDrawsAreDeterministicAcrossThreads) {
  Sweep s = misleading_samples_priced_on_truth();
  ObservationNoise n;
  n.sigma = 0.2;
  n.spike_prob = 0.05;
  n.spike_alpha = 1.5;
  n.spike_scale = 1.5;
  n.spike_cap = 8.0;
  s.observe_afresh({n});
  const ReplayResults one = replay(s, "thompson:n0=1,sigma=0.1", 300, 8, 1);
  const ReplayResults two = replay(s, "thompson:n0=1,sigma=0.1", 300, 8, 2);
  const ReplayResults again = replay(s, "thompson:n0=1,sigma=0.1", 300, 8, 1);
  ASSERT_EQ(one.online_per_seed.size(), 8u);
  EXPECT_EQ(one.online_per_seed, two.online_per_seed);
  EXPECT_EQ(one.online_per_seed, again.online_per_seed);
  // Thompson sampling on noisy observations of 9 against 8 is not the same every seed.
  bool differ = false;
  for (double x : one.online_per_seed) differ = differ || x != one.online_per_seed[0];
  EXPECT_TRUE(differ);
}

TEST(FreshObservations, OnlyASweepPricedOnItsTruthWithOneNoisePerContextDrawsAfresh) {
  Sweep s = tree_and_ring(9, 9, 10, 12);
  EXPECT_THROW(s.observe_afresh({ObservationNoise{}}), std::invalid_argument);
  s.price_on(tree_and_ring(9, 9, 8, 8));
  EXPECT_THROW(s.observe_afresh({}), std::invalid_argument);
  ObservationNoise bad;
  bad.sigma = -1.0;
  EXPECT_THROW(s.observe_afresh({bad}), std::invalid_argument);
  EXPECT_EQ(s.arm_view().fresh, nullptr);
  s.observe_afresh({ObservationNoise{}});
  EXPECT_NE(s.arm_view().fresh, nullptr);
}
