// Every fallback of the leader is one fixed span of call indices, decided once on the leader, so
// every rank reads the same decision for every index (docs/plugin.md "Rank consistency"). Each
// case below compares what the leader's own rank plays with what a follower is told.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "plugin/leader_link.hpp"
#include "plugin/online_learner.hpp"
#include "plugin/state_file.hpp"

using namespace ncclbot;
using namespace ncclbot::plugin;

namespace {

constexpr int kKey = 4 * 65 + 13;  // AllReduce, 4096 bytes
constexpr uint64_t kBytes = 4096;

std::shared_ptr<const PolicyEngine> engine(const char* spec) {
  std::string error;
  auto e = PolicyEngine::create(spec, 5, &error);
  EXPECT_TRUE(e) << error;
  return e;
}

// NCCL's table with two usable arms: Tree/LL (slot 0, 10 us) and Ring/Simple (slot 5, 20 us).
struct Table {
  float t[7][3];
  Table() {
    for (auto& row : t)
      for (float& v : row) v = -1.0f;
    t[0][0] = 10.0f;
    t[1][2] = 20.0f;
  }
  CostTable cost() { return CostTable(reinterpret_cast<float**>(t), 7, 3); }
  std::vector<float> prior() {
    std::vector<float> p(kNumArms, -1.0f);
    p[0] = 10.0f;
    p[5] = 20.0f;
    return p;
  }
};

std::vector<int8_t> window(OnlineLearner& l, uint64_t start, std::vector<float> prior) {
  std::vector<int8_t> out(kDecisionWindow, int8_t(-2));
  EXPECT_TRUE(l.decide_range(kKey, kBytes, prior.data(), start, kDecisionWindow, out.data()));
  return out;
}

}  // namespace

TEST(RankAgreement, CallsAnsweredBeforeEveryRankJoinedStayNcclsForEveryone) {
  Table table;
  OnlineLearner leader(1, 2, 1, engine("random"), true);
  leader.set_active(false);
  // The follower runs ahead and fetches windows 0 and 1 while the leader waits for its HELLO.
  const auto early = window(leader, 0, table.prior());
  const auto early2 = window(leader, 256, table.prior());
  for (int8_t s : early) EXPECT_EQ(s, -1);
  for (int8_t s : early2) EXPECT_EQ(s, -1);
  leader.set_active(true);
  CostTable cost = table.cost();
  for (uint64_t i = 0; i < 512; ++i) ASSERT_EQ(leader.decide_at(kKey, kBytes, cost, i), -1) << i;
  EXPECT_EQ(leader.memo_base(kKey), 512u);  // the policy starts after everything answered
  const auto later = window(leader, 512, table.prior());
  int policy_picks = 0;
  for (uint64_t i = 512; i < 768; ++i) {
    const int own = leader.decide_at(kKey, kBytes, cost, i);
    ASSERT_EQ(own, later[size_t(i - 512)]) << i;
    policy_picks += own >= 0;
  }
  EXPECT_EQ(policy_picks, 256);  // random over two arms: never NCCL's
}

TEST(RankAgreement, AContextRestoredFromTheStateFileStartsAfterCallsAlreadyAnswered) {
  // The leader's own init restores a context after a follower, faster, was already told NCCL's
  // choice for window 0 of it: the restored policy must not re-decide those calls.
  Table table;
  auto eng = engine("random");
  OnlineLearner previous_job(1, 2, 1, eng, false);
  previous_job.decide_next(kKey, kBytes, table.prior().data());
  StateFile file(*eng);
  previous_job.export_contexts(file);
  OnlineLearner leader(1, 2, 1, eng, true);
  leader.set_active(false);
  for (int8_t s : window(leader, 0, table.prior())) ASSERT_EQ(s, -1);
  ASSERT_EQ(leader.import_contexts(file), 1);
  leader.set_active(true);
  CostTable cost = table.cost();
  for (uint64_t i = 0; i < 256; ++i) ASSERT_EQ(leader.decide_at(kKey, kBytes, cost, i), -1) << i;
  EXPECT_GE(leader.decide_at(kKey, kBytes, cost, 256), 0);
}

TEST(RankAgreement, AFollowerFarBehindStillGetsTheOriginalDecisions) {
  // Nothing is ever trimmed from the memo, so no index goes stale: 300,000 calls later a follower
  // asking for window 0 reads what the leader played then.
  Table table;
  OnlineLearner leader(1, 2, 1, engine("random"), true);
  CostTable cost = table.cost();
  std::vector<int8_t> played(300000);
  for (size_t i = 0; i < played.size(); ++i) played[i] = int8_t(leader.decide_at(kKey, kBytes, cost, i));
  const auto first = window(leader, 0, table.prior());
  for (size_t i = 0; i < first.size(); ++i) ASSERT_EQ(first[i], played[i]) << i;
}

TEST(RankAgreement, AFullMemoRetiresTheContextToTheCommittedArmForEveryone) {
  Table table;
  MemoLimits limits;
  limits.per_context = 1000;
  OnlineLearner leader(1, 2, 1, engine("greedy:n0=1"), true, limits);
  CostTable cost = table.cost();
  std::vector<int> played;
  for (uint64_t i = 0; i < 1300; ++i) {
    played.push_back(leader.decide_at(kKey, kBytes, cost, i));
    leader.observe(kKey, played.back(), played.back() == 0 ? 30.0 : 8.0);  // slot 5 turns out faster
  }
  EXPECT_EQ(leader.retired_at(kKey), 1000u);
  // greedy plays slot 0 twice (prior 10 < 20; then means 20 = 20, the lower slot wins the tie),
  // then slot 5 for good (means 23.3 vs 14, falling towards 8). From call 1000 on every rank plays
  // the committed arm, the smaller mean: slot 5.
  for (uint64_t i = 1000; i < 1300; ++i) ASSERT_EQ(played[i], 5) << i;
  const auto w3 = window(leader, 768, table.prior());  // spans the retirement at 1000
  for (uint64_t i = 768; i < 1024; ++i) ASSERT_EQ(w3[i - 768], played[i]) << i;
}

TEST(RankAgreement, AnEmptyMemoBudgetRetiresAtOnceAndConsistently) {
  Table table;
  std::atomic<int64_t> budget{0};
  MemoLimits limits;
  limits.budget = &budget;
  OnlineLearner leader(1, 2, 1, engine("greedy:n0=1"), true, limits);
  CostTable cost = table.cost();
  EXPECT_EQ(leader.decide_at(kKey, kBytes, cost, 0), 0);  // greedy's commitment on the prior: slot 0
  EXPECT_EQ(leader.retired_at(kKey), 0u);
  const auto w = window(leader, 0, table.prior());
  for (int8_t s : w) EXPECT_EQ(s, 0);
  EXPECT_EQ(budget.load(), 0);
}

TEST(RankAgreement, AFollowerTableMissingAnArmRetiresTheContextToNcclsChoice) {
  Table table;
  OnlineLearner leader(1, 2, 1, engine("random"), true);
  CostTable cost = table.cost();
  std::vector<int> played;
  for (uint64_t i = 0; i < 100; ++i) played.push_back(leader.decide_at(kKey, kBytes, cost, i));
  std::vector<float> follower_prior = table.prior();
  follower_prior[5] = -1.0f;  // Ring/Simple is not usable on the follower
  const auto w = window(leader, 0, follower_prior);
  EXPECT_EQ(leader.table_mismatches(), 1u);
  EXPECT_EQ(leader.retired_at(kKey), 100u);  // everything decided so far stays as it was
  for (uint64_t i = 0; i < 100; ++i) ASSERT_EQ(w[i], played[i]);
  for (uint64_t i = 100; i < 256; ++i) ASSERT_EQ(w[i], -1);
  for (uint64_t i = 100; i < 300; ++i) ASSERT_EQ(leader.decide_at(kKey, kBytes, cost, i), -1);
}

TEST(RankAgreement, AFollowerTooFarAheadIsToldToAskAgain) {
  Table table;
  OnlineLearner leader(1, 2, 1, engine("random"), true);
  std::vector<int8_t> out(kDecisionWindow);
  const auto prior = table.prior();
  EXPECT_TRUE(leader.decide_range(kKey, kBytes, prior.data(), kMaxFollowerLead, kDecisionWindow, out.data()));
  EXPECT_FALSE(
      leader.decide_range(kKey, kBytes, prior.data(), kMaxFollowerLead + 256, kDecisionWindow, out.data()));
  CostTable cost = table.cost();
  for (uint64_t i = 0; i < 256; ++i) leader.decide_at(kKey, kBytes, cost, i);
  EXPECT_TRUE(
      leader.decide_range(kKey, kBytes, prior.data(), kMaxFollowerLead + 256, kDecisionWindow, out.data()));
}

namespace {

// A leader server in this process whose decisions come from one learner; `hold` makes it answer
// "later" (a stalled leader).
struct LiveLeader {
  std::shared_ptr<OnlineLearner> learner = std::make_shared<OnlineLearner>(9, 2, 1, engine("random"), true);
  std::atomic<bool> hold{false};
  std::atomic<int> hellos{0};
  std::string address;
  LeaderKey key;

  LiveLeader() {
    std::string why;
    EXPECT_TRUE(leader_key_from_text("live-leader-test-secret", &key, &why));
    LeaderHandler h;
    h.ctx = this;
    h.hello = [](void* c, const WireHello&) {
      ++static_cast<LiveLeader*>(c)->hellos;
      return true;
    };
    h.decide = [](void* c, const WireRequest& r, WireDecisions* d) {
      auto* self = static_cast<LiveLeader*>(c);
      if (self->hold.load()) {
        d->status = DecisionStatus::kLater;
        return;
      }
      std::vector<float> prior(kNumArms, -1.0f);
      std::copy(r.prior, r.prior + kNumNcclArms, prior.begin());
      d->status =
          self->learner->decide_range(int(r.key), r.bytes, prior.data(), r.start, int(r.count), d->slots)
              ? DecisionStatus::kOk
              : DecisionStatus::kLater;
    };
    for (int port = 42000 + int(::getpid() % 4000), tries = 0; tries < 50; ++port, ++tries) {
      address = "127.0.0.1:" + std::to_string(port);
      if (LeaderServer::start(address, key, h, LeaderLimits{}, &why)) return;
    }
    ADD_FAILURE() << why;
  }
};

// Rank 1 of the 2-rank communicator 9, connected and acknowledged.
std::shared_ptr<FollowerLink> joined_follower(const LiveLeader& leader) {
  std::string error;
  auto link = FollowerLink::connect(leader.address, leader.key, 2000, &error);
  EXPECT_TRUE(link) << error;
  WireHello h;
  h.comm_id = 9;
  h.nranks = 2;
  h.nnodes = 1;
  h.rank = 1;
  if (link && !link->hello(h, 2000)) return nullptr;
  return link;
}

}  // namespace

// The servers outlive the tests (as in a job), so their leaders are never freed.
TEST(RankAgreement, ABrokenConnectionReconnectsAndKeepsTheLeadersDecisions) {
  LiveLeader& leader = *new LiveLeader;
  Table table;
  auto link = joined_follower(leader);
  ASSERT_TRUE(link);
  CostTable cost = table.cost();
  const auto prior = table.prior();
  for (uint64_t i = 0; i < 2000; ++i) {
    if (i == 700 || i == 1300) link->break_connection_for_test();
    const int own = leader.learner->decide_at(kKey, kBytes, cost, i);
    ASSERT_EQ(link->decision(9, kKey, i, kBytes, 2, 1, prior.data(), 2000, nullptr), own) << i;
  }
  EXPECT_GE(leader.hellos.load(), 3);  // announced again on each new connection
}

TEST(RankAgreement, AFollowerWaitsOutAStalledLeaderInsteadOfFallingBack) {
  LiveLeader& leader = *new LiveLeader;
  Table table;
  auto link = joined_follower(leader);
  ASSERT_TRUE(link);
  const auto prior = table.prior();
  leader.hold = true;
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(350));
    leader.hold = false;
  });
  int warnings = 0;
  const int slot = link->decision(9, kKey, 0, kBytes, 2, 1, prior.data(), 100, [&](int) { ++warnings; });
  release.join();
  CostTable cost = table.cost();
  EXPECT_EQ(slot, leader.learner->decide_at(kKey, kBytes, cost, 0));
  EXPECT_GE(warnings, 2);  // 100 ms timeout, 350 ms stall
}
