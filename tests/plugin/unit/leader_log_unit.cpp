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
#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/leader_protocol.hpp"
#include "plugin/context_key.hpp"
#include "plugin/decision_log_writer.hpp"
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
// leader_feedback_end(t), NCCL's calls 0..11 among them). Thompson sampling counts nothing pending,
// so a policy driven by hand with the same latencies at those same points, its Philox step t -
// kLeaderStart, decides the same arms with the same probabilities, bit for bit; NCCL's calls are
// logged with probability 1. The follower's requests for calls already decided change nothing.
TEST(LeaderLog, WithoutAFollowerAheadItLogsThePolicysDecisionsWithTheProtocolsDelay) {
  Table table;
  CostTable cost = table.cost();
  Log leader_log("leader");
  auto leader = both_present(kThompson);
  leader->set_decision_log(leader_log.log, kOwn);
  hand_in_follower_table(*leader, table.prior());
  const auto eng = engine(kThompson);
  PolicyState state = hand_driven(*eng, table.prior());
  const uint64_t stream = replay_stream_id(key_collective(kKey), 1, 2, kBytes);
  std::vector<int> slots;
  std::vector<double> want;  // the hand-driven policy's probability of each call's arm
  uint64_t told = 0;         // the hand-driven policy has the latencies of calls [0, told)
  for (uint64_t i = 0; i < 600; ++i) {
    const int b = leader->decide_at(kKey, kBytes, cost, i, kOwn);
    if (i < uint64_t(kLeaderStart)) {
      ASSERT_EQ(b, -1) << i;
      slots.push_back(0);  // NCCL's pick
      want.push_back(1.0);
    } else {
      for (; told < leader_feedback_end(i); ++told)
        eng->update(state, slots[told], latency(told, slots[told]));
      const int a = eng->select(state, stream, i - uint64_t(kLeaderStart));
      ASSERT_EQ(a, b) << i;
      slots.push_back(a);
      want.push_back(policy_propensity(state, a));
    }
    leader->observe(kKey, slots.back(), latency(i, slots.back()));      // at once: the leader holds it back
    if (i % 256 == 255) windows(*leader, i - 255, 256, table.prior());  // behind the leader: nothing new
  }
  const auto got = leader_log.calls();
  ASSERT_EQ(got.size(), 600u);
  int uncertain = 0, played[2] = {0, 0};
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].call_index, i);
    ASSERT_EQ(got[i].slot, slots[i]) << i;
    ASSERT_EQ(got[i].latency_us, latency(i, slots[i])) << i;
    ASSERT_EQ(got[i].propensity, want[i]) << i;
    ASSERT_TRUE(got[i].propensity > 0.0 && got[i].propensity <= 1.0) << i;
    uncertain += got[i].propensity < 0.99;
    if (i >= size_t(kLeaderStart)) ++played[slots[i] == 0 ? 0 : 1];
  }
  EXPECT_GT(uncertain, 50);  // Thompson sampling's integral, not just its deterministic first tries
  EXPECT_GT(played[0], 0);
  EXPECT_GT(played[1], 0);
}

// The leader plays calls 0..4 (NCCL's) and reports their latencies; then the follower asks for calls
// 12..267, decided at once, before the leader reaches them: window 3 (calls 12..15, cut
// leader_feedback_end = 4) from the prior and the latencies of calls 0..3, the later windows (cut 8
// or more) from the state after call 4's latency too (the last one arrived). Their records carry
// those states' probabilities (an independent PolicyState driven the same way), although the
// leader's policy has learned more latencies by the time it logs them.
TEST(LeaderLog, AFollowersEarlierDecisionKeepsItsOwnProbability) {
  Table table;
  CostTable cost = table.cost();
  Log leader_log("ahead");
  auto leader = both_present(kThompson);
  leader->set_decision_log(leader_log.log, kOwn);
  hand_in_follower_table(*leader, table.prior());
  constexpr uint64_t kFirst = 5;  // the leader's calls before the follower asks
  for (uint64_t i = 0; i < kFirst; ++i) {
    ASSERT_EQ(leader->decide_at(kKey, kBytes, cost, i, kOwn), -1) << i;
    leader->observe(kKey, 0, latency(i, 0));  // NCCL's pick: slot 0
  }
  const std::vector<int8_t> ahead = windows(*leader, kLeaderStart, 256, table.prior());
  for (uint64_t i = kFirst; i < kLeaderStart + 256; ++i) {
    const int s = leader->decide_at(kKey, kBytes, cost, i, kOwn);
    if (i < uint64_t(kLeaderStart))
      ASSERT_EQ(s, -1) << i;
    else
      ASSERT_EQ(s, ahead[i - kLeaderStart]) << i;
    leader->observe(kKey, ran(s), latency(i, ran(s)));
  }
  // The states those decisions saw: the prior and calls 0..3, then call 4's latency too.
  const auto eng = engine(kThompson);
  PolicyState state = hand_driven(*eng, table.prior());
  for (uint64_t i = 0; i < 4; ++i) eng->update(state, 0, latency(i, 0));
  const double q0 = policy_propensity(state, 0), q5 = policy_propensity(state, 5);
  eng->update(state, 0, latency(4, 0));
  const double p0 = policy_propensity(state, 0), p5 = policy_propensity(state, 5);
  EXPECT_NEAR(p0 + p5, 1.0, 1e-9);
  EXPECT_NEAR(q0 + q5, 1.0, 1e-9);
  ASSERT_GT(p0, 0.01);
  ASSERT_GT(p5, 0.01);
  ASSERT_NE(p0, q0);

  const auto got = leader_log.calls();
  ASSERT_EQ(got.size(), size_t(kLeaderStart) + 256u);
  int seen[2] = {0, 0};
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].call_index, i);
    if (i < size_t(kLeaderStart)) {
      ASSERT_EQ(got[i].slot, 0) << i;
      ASSERT_EQ(got[i].propensity, 1.0) << i;
      continue;
    }
    ASSERT_EQ(got[i].slot, ahead[i - kLeaderStart]) << i;
    if (i < size_t(kLeaderStart + kLeaderWindow))
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
    leader->observe(kKey, ran(s), latency(i, ran(s)));
    if (i == 29) leader->stop_decision_log();
  }
  const auto got = leader_log.calls();
  ASSERT_EQ(got.size(), 30u);
  for (const auto& r : got)  // NCCL's calls, then random over two arms
    EXPECT_EQ(r.propensity, r.call_index < uint64_t(kLeaderStart) ? 1.0 : 0.5) << r.call_index;
}

// Over knob arms (KnobLeaderLearner) the leader logs its own calls as knob call records: NCCL's
// calls before kLeaderStart as NCCL's pick at NCCL's knobs with probability 1, then each decided
// arm with its channels and the chunk getChunkSize handed NCCL, its probability over the context's
// knob arms (ε-greedy's, in (0, 1]). A call whose channel count NCCL lowered is logged as run, with
// the arm decided beside it. The learner credits what ran, so the log and the policy agree.
TEST(LeaderLog, OverKnobArmsTheLeaderLogsKnobCallsWithTheArmThatRan) {
  Table table;
  CostTable cost = table.cost();
  Log leader_log("knobs");
  const KnobSpec spec = parse_knob_spec("channels=0,4,8;chunk=0,128K");
  auto leader =
      std::make_unique<KnobLeaderLearner>(1, 2, 1, engine("egreedy:eps=0.3,n0=1"), true, MemoLimits{}, spec);
  leader->add_member(kOwn);
  leader->add_member(kFollower);
  leader->set_decision_log(leader_log.log, kOwn);
  int16_t none[1];
  ASSERT_TRUE(leader->decide_range(kKey, kBytes, table.prior().data(), 0, 0, none, kFollower));
  // The follower's table is in: the context starts at call 12.
  std::vector<DecidedArm> decided, ran;
  for (uint64_t i = 0; i < 300; ++i) {
    const int a = leader->decide_at(kKey, kBytes, cost, i, kOwn);
    DecidedArm d = leader->decided_arm(kKey, a);
    if (d.nccl_own()) d = DecidedArm::of_slot(0);  // NCCL's pick on Table: Tree/LL at its own knobs
    decided.push_back(d);
    if (d.chunk_bytes != 0) leader->chunk_set(kKey, i, d.chunk_bytes);  // getChunkSize handed it over
    DecidedArm r = d;
    if (i % 3 == 1 && d.channels == 8) r.channels = 4;  // NCCL lowered the count (its 32 KiB cells)
    ran.push_back(r);
    leader->observe_ran(kKey, RanKnobs{r.slot / kNumProtos, r.slot % kNumProtos, r.channels ? r.channels : 2},
                        10.0 + r.channels * 0.1 + i % 3, LatencySink::kOldestCall);
  }
  leader_log.log->flush();
  std::vector<decision_log::CallRecord> got;
  test::for_each_record(leader_log.path, [&](uint32_t kind, const unsigned char* r) {
    if (kind == decision_log::kKindKnobCall) got.push_back(decision_log::decode_call(r));
    EXPECT_NE(kind, decision_log::kKindCall);  // no slot call record over knob arms
  });
  ASSERT_EQ(got.size(), 300u);
  int knob_arms = 0, overridden = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const DecidedArm logged{int8_t(got[i].slot), got[i].channels, got[i].chunk_bytes};
    ASSERT_EQ(got[i].call_index, i);
    ASSERT_TRUE(got[i].knobs);
    ASSERT_EQ(logged, ran[i]) << i;
    ASSERT_EQ(got[i].overridden, !(ran[i] == decided[i])) << i;
    if (got[i].overridden) {
      ++overridden;
      ASSERT_EQ(
          (DecidedArm{int8_t(got[i].decided_slot), got[i].decided_channels, got[i].decided_chunk_bytes}),
          decided[i])
          << i;
    }
    if (i < size_t(kLeaderStart)) {
      ASSERT_EQ(got[i].propensity, 1.0) << i;
    }
    ASSERT_TRUE(got[i].propensity > 0.0 && got[i].propensity <= 1.0) << i;
    knob_arms += ran[i].channels != 0 || ran[i].chunk_bytes != 0;
  }
  EXPECT_GT(knob_arms, 100);
  EXPECT_GT(overridden, 3);
}

// A knob context restored from a state file for other slots (Tree/Simple and Ring/Simple) is reseeded
// when this job's tables (Tree/LL and Ring/Simple) start it: its arms renumber (Ring/Simple at NCCL's
// knobs was index 6 behind Tree/Simple's six arms, is 3 behind Tree/LL's three). Decisions made before
// the start and measured after it are logged as the arm they named: NCCL's pick, Ring/Simple at its
// own knobs, as it ran (not overridden), not whatever arm the old index names in the new set.
TEST(LeaderLog, AKnobContextReseededAtItsStartRenumbersWhatItHolds) {
  const KnobSpec spec = parse_knob_spec("channels=0,4,8;chunk.LL=0;chunk.LL128=0;chunk.Simple=0,128K");
  const auto eng = engine("ucb1:c=0.5,n0=1");
  std::vector<float> before(kNumArms, -1.0f), now(kNumArms, -1.0f);
  before[2] = 12.0f;  // Tree/Simple
  before[5] = 10.0f;  // Ring/Simple
  now[0] = 12.0f;     // Tree/LL
  now[5] = 10.0f;
  KnobLeaderLearner previous(1, 2, 1, eng, false, MemoLimits{}, spec);
  for (int i = 0; i < 20; ++i)
    previous.observe(kKey, previous.decide_next(kKey, kBytes, before.data()), 10.0 + i % 3);
  KnobStateFile file(*eng, &spec);
  previous.export_contexts(file);

  Log leader_log("reseeded");
  KnobLeaderLearner leader(1, 2, 1, eng, true, MemoLimits{}, spec);
  leader.add_member(kOwn);
  leader.add_member(kFollower);
  ASSERT_EQ(leader.import_contexts(file), 1);
  leader.set_decision_log(leader_log.log, kOwn);
  float t[7][3];
  for (auto& row : t)
    for (float& v : row) v = -1.0f;
  t[0][0] = 12.0f;
  t[1][2] = 10.0f;
  CostTable cost(reinterpret_cast<float**>(t), 7, 3);
  const RanKnobs ring_simple{1, 2, 2};  // NCCL's pick ran, at its own channel count (2 here)
  for (uint64_t i = 0; i < 6; ++i) ASSERT_EQ(leader.decide_at(kKey, kBytes, cost, i, kOwn), -1) << i;
  for (uint64_t i = 0; i < 3; ++i) leader.observe_ran(kKey, ring_simple, 20.0, LatencySink::kOldestCall);
  int16_t out[kLeaderWindow];
  ASSERT_TRUE(leader.decide_range(kKey, kBytes, now.data(), 8, kLeaderWindow, out, kFollower));  // starts it
  ASSERT_TRUE(leader.started(kKey));
  for (uint64_t i = 3; i < 6; ++i) leader.observe_ran(kKey, ring_simple, 20.0, LatencySink::kOldestCall);
  leader_log.log->flush();
  std::vector<decision_log::CallRecord> got;
  test::for_each_record(leader_log.path, [&](uint32_t kind, const unsigned char* r) {
    if (kind == decision_log::kKindKnobCall) got.push_back(decision_log::decode_call(r));
  });
  ASSERT_EQ(got.size(), 6u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].call_index, i);
    EXPECT_EQ(got[i].slot, 5) << i;
    EXPECT_EQ(got[i].channels, 0) << i;
    EXPECT_EQ(got[i].chunk_bytes, 0u) << i;
    EXPECT_FALSE(got[i].overridden) << i << ": decided " << int(got[i].decided_slot) << " "
                                    << got[i].decided_channels << " " << got[i].decided_chunk_bytes;
  }
}
