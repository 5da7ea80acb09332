// The replay method (ope/replay_method.hpp) on hand-made logs: which calls it accepts and the value
// computed by hand; the rejection step's acceptance rate p_min / p_i under a non-uniform behaviour;
// a deterministic learning target on constant latencies reproduces exactly its own run (the truth);
// logs that do not allow the method are InputErrors.
#include "ncclbot/ope/replay_method.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <vector>

#include "ncclbot/core/error.hpp"

using namespace ncclbot;

namespace {

// Context with usable slots 0, 1, 2 (Tree LL, LL128, Simple) costing 10, 20, 30 us: NCCL picks 0.
OpeContext three_arm_context(uint64_t bytes) {
  OpeContext c;
  c.collective = 4;  // allreduce
  c.bytes = bytes;
  c.nodes = 1;
  c.ranks = 8;
  for (float& v : c.cost_us) v = -1.0f;
  c.cost_us[0] = 10.0f;
  c.cost_us[1] = 20.0f;
  c.cost_us[2] = 30.0f;
  c.nccl_slot = 0;
  for (int s = 0; s < 3; ++s) c.mask.set(s);
  return c;
}

// UCB1 as docs and ucb1.hpp state it, written out here for a cold start (n0 = 0): an arm never
// played first (the lowest slot), else argmin_i mean_i - c * min_j mean_j * sqrt(2 ln t) / sqrt(N_i)
// with t = sum_i N_i, ties to the lowest slot.
struct ReferenceUcb1 {
  double c;
  int arms;
  std::vector<double> sum = std::vector<double>(3, 0.0), count = std::vector<double>(3, 0.0);
  int select() const {
    for (int i = 0; i < arms; ++i)
      if (count[size_t(i)] == 0.0) return i;
    double t = 0.0, best_mean = HUGE_VAL;
    for (int i = 0; i < arms; ++i) {
      t += count[size_t(i)];
      best_mean = std::min(best_mean, sum[size_t(i)] / count[size_t(i)]);
    }
    int pick = 0;
    double lowest = HUGE_VAL;
    for (int i = 0; i < arms; ++i) {
      const double mean = sum[size_t(i)] / count[size_t(i)];
      const double index = mean - c * best_mean * std::sqrt(2.0 * std::log(t)) / std::sqrt(count[size_t(i)]);
      if (index < lowest) {
        lowest = index;
        pick = i;
      }
    }
    return pick;
  }
  void update(int arm, double latency_us) {
    sum[size_t(arm)] += latency_us;
    count[size_t(arm)] += 1.0;
  }
};

}  // namespace

TEST(ReplayMethod, AUniformLogAcceptsExactlyTheTargetsArmAndAveragesItsLatencies) {
  OpeData data;
  data.contexts = {three_arm_context(1024), three_arm_context(4096)};
  // Context 0: slots 0,1,2,0,1,2 with latencies 11,20,30,13,21,31 -> auto accepts 11 and 13.
  // Context 1: slots 2,0,1,0,0,1 with latencies 5,7,6,9,8,6,  -> auto accepts 7, 9, 8.
  const int slots0[] = {0, 1, 2, 0, 1, 2}, slots1[] = {2, 0, 1, 0, 0, 1};
  const double lat0[] = {11, 20, 30, 13, 21, 31}, lat1[] = {5, 7, 6, 9, 8, 6};
  for (int i = 0; i < 6; ++i) {
    data.calls.push_back({0, slots0[i], 1.0 / 3.0, lat0[i], uint64_t(i)});
    data.calls.push_back({1, slots1[i], 1.0 / 3.0, lat1[i], uint64_t(i)});
  }
  const ReplayMethodResult r = replay_method(data, parse_policy_spec("auto"), 5, 0.95);
  EXPECT_EQ(r.accepted, 5u);
  EXPECT_EQ(r.calls, 12u);
  EXPECT_DOUBLE_EQ(r.acceptance_rate, 5.0 / 12.0);
  ASSERT_EQ(r.accepted_by_context.size(), 2u);
  EXPECT_EQ(r.accepted_by_context[0], 2u);
  EXPECT_EQ(r.accepted_by_context[1], 3u);
  // Each context has 6 logged calls: the value is the plain mean of the two context means.
  EXPECT_DOUBLE_EQ(r.value_us, (12.0 + 8.0) / 2.0);
  // Variance of each mean: sample variance / A_x -> (2 / 2) and (1 / 3); weights 6/12 each.
  const double se = std::sqrt(0.25 * (2.0 / 2.0) + 0.25 * (1.0 / 3.0));
  const double z = boost::math::quantile(boost::math::normal(), 0.975);
  EXPECT_NEAR(r.lo, 10.0 - z * se, 1e-12);
  EXPECT_NEAR(r.hi, 10.0 + z * se, 1e-12);
}

TEST(ReplayMethod, RejectionKeepsPMinOverPOfTheMatchingCalls) {
  OpeData data;
  data.contexts = {three_arm_context(1024)};
  // A behaviour that plays slot 0 with probability 0.8 and slots 1, 2 with 0.1 each (in a fixed
  // cycle of 10 calls): auto matches every slot-0 call and keeps each with probability 0.1 / 0.8.
  constexpr int kCycles = 4000;
  for (int k = 0; k < kCycles; ++k)
    for (int i = 0; i < 10; ++i) {
      const int slot = i < 8 ? 0 : i - 7;
      data.calls.push_back({0, slot, slot == 0 ? 0.8 : 0.1, 10.0 + slot, uint64_t(10 * k + i)});
    }
  const ReplayMethodResult r = replay_method(data, parse_policy_spec("auto"), 1, 0.95);
  const double n = 8.0 * kCycles, p = 0.125;
  EXPECT_NEAR(double(r.accepted), n * p, 4.0 * std::sqrt(n * p * (1 - p)));
  EXPECT_DOUBLE_EQ(r.value_us, 10.0);  // only slot-0 calls are ever accepted
}

TEST(ReplayMethod, ADeterministicLearnerOnConstantLatenciesReplaysItsOwnRun) {
  // UCB1 from a cold start on arms that always take 10, 20 and 30 us; a uniform log of 600 calls.
  OpeData data;
  data.contexts = {three_arm_context(1024)};
  for (int i = 0; i < 600; ++i) {
    const int slot = int((uint64_t(i) * 2654435761u) % 3);
    data.calls.push_back({0, slot, 1.0 / 3.0, 10.0 * (slot + 1), uint64_t(i)});
  }
  const PolicySpec ucb = parse_policy_spec("ucb1:c=0.5,n0=0");
  const ReplayMethodResult r = replay_method(data, ucb, 3, 0.95);
  ASSERT_GT(r.accepted, 50u);
  ReplayTruthInputs sweep;
  sweep.arm_mean.assign(1, std::vector<double>(kNumArms, NAN));
  sweep.samples.assign(1, std::vector<std::vector<float>>(kNumArms));
  for (int s = 0; s < 3; ++s) {
    sweep.arm_mean[0][size_t(s)] = 10.0 * (s + 1);
    sweep.samples[0][size_t(s)] = {float(10 * (s + 1)), float(10 * (s + 1))};
  }
  // The accepted calls are UCB1's own first A decisions with their (constant) latencies.
  EXPECT_DOUBLE_EQ(r.value_us, replay_method_truth(log_blocks(data, BlockRule{}), ucb, r, sweep, 3, 9));
  EXPECT_LT(r.value_us, 20.0);  // it learns: mostly the 10 us arm
  // The method by its definition, on a UCB1 written out here: every propensity is the context's
  // smallest (1/3), so a call is accepted exactly when the target's arm is the logged one, and only
  // then does the target learn its latency.
  ReferenceUcb1 reference{0.5, 3};
  uint64_t accepted = 0;
  double sum = 0.0;
  for (const OpeCall& call : data.calls) {
    if (reference.select() != call.arm) continue;
    reference.update(call.arm, call.latency_us);
    ++accepted;
    sum += call.latency_us;
  }
  EXPECT_EQ(r.accepted, accepted);
  EXPECT_NEAR(r.value_us, sum / double(accepted), 1e-12);
}

TEST(ReplayMethod, LogsThatDoNotAllowItAreInputErrors) {
  OpeData greedy;
  greedy.contexts = {three_arm_context(1024)};
  for (int i = 0; i < 30; ++i) greedy.calls.push_back({0, i % 3, 1.0, 10.0, uint64_t(i)});
  EXPECT_THROW(replay_method(greedy, parse_policy_spec("ucb1:c=0.1,n0=1"), 0, 0.95), InputError);
  OpeData partial;
  partial.contexts = {three_arm_context(1024)};
  for (int i = 0; i < 30; ++i) partial.calls.push_back({0, i % 2, 0.5, 10.0, uint64_t(i)});
  try {
    replay_method(partial, parse_policy_spec("ucb1:c=0.1,n0=1"), 0, 0.95);
    FAIL() << "a context with an arm never played was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("2 of 3 arms played"), std::string::npos) << e.what();
  }
}
