// The decision log in leader mode (docs/ope.md): the leader logs its own rank's calls, whose
// decisions may have been made earlier, when a follower asked ahead. Each record must carry the
// probability the policy had when it made that decision, not when the leader's call arrived.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "log_records.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/leader_protocol.hpp"
#include "plugin/decision_log.hpp"
#include "two_rank_leader.hpp"

using namespace ncclbot;
using namespace ncclbot::plugin;
using namespace ncclbot::plugin::two_rank;

namespace {

constexpr const char* kThompson = "thompson:n0=1,sigma=0.3";

// A latency for call i on `slot`: the two arms close enough that Thompson sampling keeps both in play.
double latency(uint64_t i, int slot) {
  return (slot == 0 ? 12.0 : 11.0) * (1.0 + 0.2 * std::sin(double(i)));
}

struct Log {
  std::string path;
  std::shared_ptr<DecisionLog> log;
  explicit Log(const std::string& name) {
    path = "/tmp/ncclbot-leader-log-" + std::to_string(getpid()) + "-" + name;
    std::remove(path.c_str());
    std::string error;
    log = DecisionLog::open({path, uint64_t(1) << 30, "policy=test\n"}, 0, &error);
    EXPECT_TRUE(log) << error;
  }
  std::vector<decision_log::CallRecord> calls() {
    log->flush();
    return test::call_records(path);
  }
  ~Log() { std::remove(path.c_str()); }
};

}  // namespace

// With no follower ahead, every decision is made on the leader's own call, from the state the
// protocol gives it (replay/leader_protocol.hpp: the latencies of the calls before
// leader_feedback_end(t)). Thompson sampling counts nothing pending, so a local-mode learner told
// the same latencies at those same points decides and logs the same: the same arms and the same
// probabilities, bit for bit. The follower's requests for calls already decided change nothing.
TEST(LeaderLog, WithoutAFollowerAheadItLogsWhatLocalModeLogsWithTheProtocolsDelay) {
  Table table;
  CostTable cost = table.cost();
  Log local_log("local"), leader_log("leader");
  OnlineLearner local(1, 2, 1, engine(kThompson), false);
  local.set_decision_log(local_log.log);
  auto leader = both_present(kThompson);
  leader->set_decision_log(leader_log.log, kOwn);
  hand_in_follower_table(*leader, table.prior());
  std::vector<int> slots;
  uint64_t told = 0;  // the local learner has the latencies of calls [0, told)
  for (uint64_t i = 0; i < 600; ++i) {
    for (; told < leader_feedback_end(i); ++told)
      local.observe(kKey, slots[told], latency(told, slots[told]));
    const int a = local.decide_next(kKey, kBytes, cost);
    const int b = leader->decide_at(kKey, kBytes, cost, i, kOwn);
    ASSERT_EQ(a, b) << i;
    ASSERT_GE(a, 0) << i;
    slots.push_back(a);
    leader->observe(kKey, b, latency(i, b));                            // at once: the leader holds it back
    if (i % 256 == 255) windows(*leader, i - 255, 256, table.prior());  // behind the leader: nothing new
  }
  for (; told < 600; ++told) local.observe(kKey, slots[told], latency(told, slots[told]));
  const auto want = local_log.calls(), got = leader_log.calls();
  ASSERT_EQ(got.size(), 600u);
  ASSERT_EQ(want.size(), got.size());
  int uncertain = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].call_index, i);
    ASSERT_EQ(got[i].slot, want[i].slot) << i;
    ASSERT_EQ(got[i].latency_us, want[i].latency_us) << i;
    ASSERT_EQ(got[i].propensity, want[i].propensity) << i;
    ASSERT_TRUE(got[i].propensity > 0.0 && got[i].propensity <= 1.0) << i;
    uncertain += got[i].propensity < 0.99;
  }
  EXPECT_GT(uncertain, 50);  // Thompson sampling's integral, not just its deterministic first tries
}

// The follower asks for calls 0..255 after the leader's first call and its latency: calls 1..255 are
// decided at once, before the leader reaches them, calls 1..15 from the prior alone (their cut,
// leader_feedback_end, is 0) and calls 16..255 from the state after call 0's latency (the only one
// arrived; their cut is 4 or more). Their records carry those states' probabilities (an independent
// PolicyState driven the same way), although the leader's policy has learned more latencies by the time it
// logs them.
TEST(LeaderLog, AFollowersEarlierDecisionKeepsItsOwnProbability) {
  Table table;
  CostTable cost = table.cost();
  Log leader_log("ahead");
  auto leader = both_present(kThompson);
  leader->set_decision_log(leader_log.log, kOwn);
  hand_in_follower_table(*leader, table.prior());
  const int first = leader->decide_at(kKey, kBytes, cost, 0, kOwn);
  ASSERT_GE(first, 0);
  leader->observe(kKey, first, latency(0, first));
  const std::vector<int8_t> ahead = windows(*leader, 0, 256, table.prior());
  for (uint64_t i = 1; i < 256; ++i) {
    const int s = leader->decide_at(kKey, kBytes, cost, i, kOwn);
    ASSERT_EQ(s, ahead[i]) << i;
    leader->observe(kKey, s, latency(i, s));
  }
  // The states those decisions saw: the prior, then the prior and call 0's latency.
  const auto eng = engine(kThompson);
  PolicyState state;
  ArmMask mask;
  mask.set(0);
  mask.set(5);
  const std::vector<float> prior = table.prior();
  eng->reset(state, mask, prior.data());
  const double q0 = policy_propensity(state, 0), q5 = policy_propensity(state, 5);
  eng->update(state, first, latency(0, first));
  const double p0 = policy_propensity(state, 0), p5 = policy_propensity(state, 5);
  EXPECT_NEAR(p0 + p5, 1.0, 1e-9);
  EXPECT_NEAR(q0 + q5, 1.0, 1e-9);
  ASSERT_GT(p0, 0.01);
  ASSERT_GT(p5, 0.01);
  ASSERT_NE(p0, q0);

  const auto got = leader_log.calls();
  ASSERT_EQ(got.size(), 256u);
  int seen[2] = {0, 0};
  for (size_t i = 1; i < got.size(); ++i) {
    ASSERT_EQ(got[i].call_index, i);
    ASSERT_EQ(got[i].slot, ahead[i]) << i;
    if (i < 16)
      ASSERT_EQ(got[i].propensity, got[i].slot == 0 ? q0 : q5) << i;
    else
      ASSERT_EQ(got[i].propensity, got[i].slot == 0 ? p0 : p5) << i;
    ++seen[got[i].slot == 0 ? 0 : 1];
  }
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], 0);
}

// Another rank of the communicator in the leader's process ends the log (its latencies would be
// indistinguishable): calls after stop_decision_log() are not logged, and earlier ones stay.
TEST(LeaderLog, StoppingTheLogKeepsWhatWasWritten) {
  Table table;
  CostTable cost = table.cost();
  Log leader_log("stop");
  auto leader = both_present("random");
  leader->set_decision_log(leader_log.log, kOwn);
  hand_in_follower_table(*leader, table.prior());
  for (uint64_t i = 0; i < 40; ++i) {
    const int s = leader->decide_at(kKey, kBytes, cost, i, kOwn);
    leader->observe(kKey, s, latency(i, s));
    if (i == 29) leader->stop_decision_log();
  }
  const auto got = leader_log.calls();
  ASSERT_EQ(got.size(), 30u);
  for (const auto& r : got) EXPECT_EQ(r.propensity, 0.5);  // random over two arms
}
