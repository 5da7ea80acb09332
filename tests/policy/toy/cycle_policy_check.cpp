// The toy policy (cycle_policy.hpp) reaches every registry user of this test build from its header
// and its registry lines alone: the spec parser, the live list the bench and the overhead bench
// time, the union the plugin keeps, and the CPU replay engine. Expected values by hand.
#include <gtest/gtest.h>

#include "ncclbot/core/error.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

// Slots 0, 2 and 7 with means 12, 11.5 and 14.75 µs.
Sweep cycle_check_sweep() {
  return tiny_sweep({{tiny_context(1, 1024),
                      {{0, {10.0f, 14.0f}, 9.0f}, {2, {12.0f, 11.0f}, 12.0f}, {7, {20.0f, 9.5f}, 15.0f}}}});
}

}  // namespace

TEST(ToyPolicy, TheSpecParserKnowsItsNameAndItsKey) {
  const PolicySpec spec = parse_policy_spec("cycle:stride=2");
  EXPECT_EQ(spec.config.kind, PolicyKind::kCycle);
  EXPECT_EQ(spec.config.stride, 2);
  EXPECT_EQ(spec.text, "cycle:stride=2");
  EXPECT_EQ(default_policy_spec(PolicyKind::kCycle), "cycle:stride=1");
  EXPECT_THROW(parse_policy_spec("cycle:stride=0"), UsageError);
  EXPECT_THROW(parse_policy_spec("cycle:stride=1.5"), UsageError);
  EXPECT_EQ(parse_policy_grid("cycle:stride=1|3").size(), 2u);
}

TEST(ToyPolicy, ItIsLiveSoTheBenchesTimeIt) {
  const std::vector<PolicyKind> live = live_policies();
  ASSERT_FALSE(live.empty());
  EXPECT_EQ(live.back(), PolicyKind::kCycle);
  EXPECT_EQ(policy_use(PolicyKind::kCycle), PolicyUse::kLive);
}

// Stride 2 over the valid slots {0, 2, 7}: turns 0, 2, 1, 0, 2, 1 -> slots 0, 7, 2, 0, 7, 2.
TEST(ToyPolicy, TheUnionPlaysTheArmsStrideApart) {
  const Sweep s = cycle_check_sweep();
  AnyPolicy any = make_policy(parse_policy_spec("cycle:stride=2").config);
  policy_reset(any, sweep_policy_context(s.view(), 0, -1));
  const int expected[] = {0, 7, 2, 0, 7, 2};
  for (int t = 0; t < 6; ++t) {
    StepRandom rng(1, 2, uint32_t(t));
    EXPECT_EQ(policy_select(any, rng), expected[t]) << t;
    policy_update(any, expected[t], 10.0);
  }
}

// Stride 1 for 6 calls plays each arm twice: online loss = mean of mu/mu* - 1 over the arms, with
// mu* = 11.5: (12/11.5 - 1 + 0 + 14.75/11.5 - 1) / 3.
TEST(ToyPolicy, TheCpuEngineReplaysIt) {
  const Sweep s = cycle_check_sweep();
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0};
  job.configs = {parse_policy_spec("cycle")};
  job.horizon = 6;
  const ReplayResults r = run_cpu_replay(job);
  EXPECT_NEAR(r.online_at(0, 0), (12.0 / 11.5 - 1.0 + 14.75 / 11.5 - 1.0) / 3.0, 1e-12);
}
