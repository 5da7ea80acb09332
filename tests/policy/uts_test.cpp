// Unimodal Thompson Sampling (policy/uts.hpp): a trace on three arms whose draws are recomputed here
// from the Philox words and Boost's normal quantile, and a walk on a unimodal 512-arm knob context
// that only ever plays the leader or one of its neighbours.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <vector>

#include "ncclbot/core/philox.hpp"
#include "ncclbot/core/sweep.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/policy/uts.hpp"
#include "ncclbot/replay/replay.hpp"
#include "support/policy_trace.hpp"
#include "support/tiny_sweep.hpp"
#include "support/unimodal_knob_walk.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

// z of arm index j at step t of stream (seed 1, id 42): word j of the step's policy lanes, lane
// 1 + j / 4 (core/philox.hpp), through Boost's quantile instead of the policy's own.
double z_of(int t, int j) {
  const uint32_t w = philox_block(1, 42, uint32_t(t), 1u + uint32_t(j) / 4).v[j % 4];
  return boost::math::quantile(boost::math::normal_distribution<double>(), (double(w) + 0.5) / 4294967296.0);
}

}  // namespace

// Three arms with one sample each (10, 12, 20 µs), cold (n0 = 0), sigma = 0.5; gamma = 2, so the
// leader (arm 0, which leads every call: l = t + 1) plays at calls t = 0, 3, 6, ... Calls 1 and 2 try
// the untried neighbours (slots 2 and 7). From call 4 on every arm is observed: the pick is argmin of
// mean_j (1 + 0.5 z_j / sqrt(N_j)), N_j the calls arm j has had so far, z from step t's words,
// recomputed here.
TEST(Uts, ThreeArmTraceDrawsAroundTheMeans) {
  const Sweep s =
      tiny_sweep({{tiny_context(1, 1024), {{0, {10.0f}, 9.0f}, {2, {12.0f}, 12.0f}, {7, {20.0f}, 15.0f}}}});
  PolicyConfig cfg = config_of(PolicyKind::kUts);
  cfg.n0 = 0.0;
  cfg.sigma = 0.5;
  const int horizon = 40;
  const Trace tr = trace_policy(cfg, s, 0, horizon);
  const int slot_of[3] = {0, 2, 7};
  const double mean[3] = {10.0, 12.0, 20.0};
  std::vector<int> want = {0, 2, 7};
  int plays[3] = {1, 1, 1};
  for (int t = 3; t < horizon; ++t) {
    int best = 0;
    if (t % 3 != 0) {
      double lowest = HUGE_VAL;
      for (int j = 0; j < 3; ++j) {
        const double theta = mean[j] * (1.0 + 0.5 * z_of(t, j) / std::sqrt(double(plays[j])));
        if (theta < lowest) best = j, lowest = theta;
      }
    }
    ++plays[best];
    want.push_back(slot_of[best]);
  }
  EXPECT_EQ(tr.picks, want);
  // The draws did pick another arm than the leader now and then.
  EXPECT_GT(plays[1] + plays[2], 2);
  EXPECT_EQ(tr.outcome.final_slot, 0);
}

// On a context unimodal on the knob graph (support/unimodal_knob_walk.hpp) every call plays the
// leader or one of its neighbours, and UTS walks to the best arm, having tried far fewer than the
// 512 arms.
TEST(Uts, WalksAUnimodalKnobContextThroughNeighboursOnly) {
  UtsPolicyT<512> policy{};
  policy.params = {0.0, 0.1};
  std::vector<int> picks;
  const ReplayOutcome out = replay_knob_context(policy, unimodal_knob_context(), 3000, picks);
  EXPECT_LT(check_knob_walk(picks), 200u);
  EXPECT_EQ(out.final_slot, kUnimodalBestArm);
  EXPECT_EQ(out.final_loss, 0.0);
}
