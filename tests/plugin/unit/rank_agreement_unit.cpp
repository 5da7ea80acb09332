// Every fallback of the leader is one fixed span of call indices, decided once on the leader, so
// every rank reads the same decision for every index (docs/plugin.md "Rank consistency"). Each
// case below compares what the leader's own rank plays with what a follower is told; the last ones
// drive a follower's link through a leader that loses an ACK, refuses, stalls or disappears.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/replay/leader_protocol.hpp"
#include "plugin/follower_link.hpp"
#include "plugin/leader_server.hpp"
#include "plugin/loopback_port.hpp"
#include "plugin/online_learner.hpp"
#include "plugin/state_file.hpp"
#include "plugin_bench/allocation_counter.hpp"
#include "two_rank_leader.hpp"

using namespace ncclbot;
using namespace ncclbot::plugin;
using namespace ncclbot::plugin::two_rank;

TEST(RankAgreement, CallsAnsweredBeforeEveryRankJoinedStayNcclsForEveryone) {
  Table table;
  OnlineLearner leader(1, 2, 1, engine("random"), true);
  leader.set_active(false);
  leader.add_member(kOwn);
  // The follower runs ahead and fetches calls 0..511 while the leader waits for its HELLO.
  const auto early = windows(leader, 0, 256, table.prior());
  const auto early2 = windows(leader, 256, 256, table.prior());
  for (int8_t s : early) EXPECT_EQ(s, -1);
  for (int8_t s : early2) EXPECT_EQ(s, -1);
  leader.add_member(kFollower);  // its HELLO
  leader.set_active(true);
  CostTable cost = table.cost();
  for (uint64_t i = 0; i < 512; ++i) ASSERT_EQ(leader.decide_at(kKey, kBytes, cost, i, kOwn), -1) << i;
  // The follower's tables sent before it was counted do not count: its next request starts the
  // context, after everything answered.
  EXPECT_FALSE(leader.started(kKey));
  const auto later = windows(leader, 512, 256, table.prior());
  EXPECT_TRUE(leader.started(kKey));
  EXPECT_EQ(leader.memo_base(kKey), 512u);
  int policy_picks = 0;
  for (uint64_t i = 512; i < 768; ++i) {
    const int own = leader.decide_at(kKey, kBytes, cost, i, kOwn);
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
  for (int i = 0; i < 7; ++i) previous_job.decide_next(kKey, kBytes, table.prior().data());
  StateFile file(*eng);
  previous_job.export_contexts(file);
  OnlineLearner leader(1, 2, 1, eng, true);
  leader.set_active(false);
  leader.add_member(kOwn);
  leader.add_member(kFollower);
  for (int8_t s : windows(leader, 0, 256, table.prior())) ASSERT_EQ(s, -1);  // calls 0..255
  ASSERT_EQ(leader.import_contexts(file), 1);
  leader.set_active(true);
  CostTable cost = table.cost();
  for (uint64_t i = 0; i < 256; ++i) ASSERT_EQ(leader.decide_at(kKey, kBytes, cost, i, kOwn), -1) << i;
  const auto w1 = windows(leader, 256, 256, table.prior());  // the follower's table: the context starts
  EXPECT_EQ(leader.memo_base(kKey), 256u);
  const int first = leader.decide_at(kKey, kBytes, cost, 256, kOwn);
  EXPECT_GE(first, 0);
  EXPECT_EQ(first, w1[0]);
  // The restored policy continues where the previous job stopped (Philox step 7, not 0).
  OnlineLearner continued(1, 2, 1, eng, false);
  ASSERT_EQ(continued.import_contexts(file), 1);
  for (int i = 0; i < 256; ++i)
    ASSERT_EQ(continued.decide_next(kKey, kBytes, table.prior().data()), w1[size_t(i)]) << i;
}

TEST(RankAgreement, AContextRestoredForOtherArmsStartsAfreshOnTheArmsEveryRankOffers) {
  // A state file from a job whose tables offered Tree/LL and Ring/Simple; this job's ranks offer
  // Tree/LL and Tree/Simple only. The restored policy would name Ring/Simple, which no rank can
  // play: the context starts afresh on the arms every rank offered.
  Table table;
  auto eng = engine("random");
  OnlineLearner previous_job(1, 2, 1, eng, false);
  previous_job.decide_next(kKey, kBytes, table.prior().data());
  StateFile file(*eng);
  previous_job.export_contexts(file);
  Table now;
  now.t[1][2] = -1.0f;
  now.t[0][2] = 15.0f;
  std::vector<float> now_prior(kNumArms, -1.0f);
  now_prior[0] = 10.0f;
  now_prior[2] = 15.0f;
  auto leader = both_present("random");
  ASSERT_EQ(leader->import_contexts(file), 1);
  hand_in_follower_table(*leader, now_prior);
  CostTable cost = now.cost();
  std::set<int> played;
  for (uint64_t i = 0; i < 300; ++i) {
    const int s = leader->decide_at(kKey, kBytes, cost, i, kOwn);
    if (i < uint64_t(kLeaderStart))
      ASSERT_EQ(s, -1) << i;  // NCCL's, before the policy's start
    else
      played.insert(s);
  }
  EXPECT_EQ(played, (std::set<int>{0, 2}));
  EXPECT_EQ(leader->table_mismatches(), 0u);
}

TEST(RankAgreement, AFollowerFarBehindStillGetsTheOriginalDecisions) {
  // Nothing is ever trimmed from the memo, so no index goes stale: 300,000 calls later a follower
  // asking for windows 0..31 reads what the leader played then.
  Table table;
  auto leader = both_present("random");
  CostTable cost = table.cost();
  std::vector<int8_t> played(300000);
  played[0] = int8_t(leader->decide_at(kKey, kBytes, cost, 0, kOwn));  // before the follower's table: NCCL's
  const auto early = windows(*leader, 0, 256, table.prior());          // the context starts at kLeaderStart
  for (size_t i = 1; i < played.size(); ++i)
    played[i] = int8_t(leader->decide_at(kKey, kBytes, cost, i, kOwn));
  const auto first = windows(*leader, 0, 256, table.prior());
  EXPECT_EQ(leader->memo_base(kKey), uint64_t(kLeaderStart));
  for (size_t i = 0; i < size_t(kLeaderStart); ++i) EXPECT_EQ(played[i], -1) << i;
  EXPECT_GE(played[kLeaderStart], 0);
  for (size_t i = 0; i < first.size(); ++i) {
    ASSERT_EQ(first[i], played[i]) << i;
    ASSERT_EQ(early[i], played[i]) << i;
  }
}

TEST(RankAgreement, AFullMemoRetiresTheContextToTheCommittedArmForEveryone) {
  Table table;
  MemoLimits limits;
  limits.per_context = 1000;
  auto leader = both_present("greedy:n0=1", limits);
  hand_in_follower_table(*leader, table.prior());
  CostTable cost = table.cost();
  std::vector<int> played;
  for (uint64_t i = 0; i < 1300; ++i) {
    played.push_back(leader->decide_at(kKey, kBytes, cost, i, kOwn));
    const int ran = played.back() >= 0 ? played.back() : 0;  // NCCL's pick: slot 0
    leader->observe(kKey, ran, ran == 0 ? 30.0 : 8.0);       // slot 5 turns out faster
  }
  EXPECT_EQ(leader->memo_base(kKey), uint64_t(kLeaderStart));
  EXPECT_EQ(leader->retired_at(kKey), uint64_t(kLeaderStart) + 1000u);
  // NCCL plays slot 0 on calls 0..11; greedy starts at call 12 with the latencies of calls 0..3
  // (mean (10 + 4 * 30) / 5 = 26 > 20) and plays slot 5 for good (its mean falling towards 8). From
  // call 1012 on every rank plays the committed arm, the smaller mean: slot 5.
  for (uint64_t i = 1012; i < 1300; ++i) ASSERT_EQ(played[i], 5) << i;
  const auto w3 = windows(*leader, 768, 256, table.prior());  // spans the retirement at 1000
  for (uint64_t i = 768; i < 1024; ++i) ASSERT_EQ(w3[i - 768], played[i]) << i;
}

TEST(RankAgreement, AnEmptyMemoBudgetRetiresAtOnceAndConsistently) {
  Table table;
  std::atomic<int64_t> budget{0};
  MemoLimits limits;
  limits.budget = &budget;
  auto leader = both_present("greedy:n0=1", limits);
  hand_in_follower_table(*leader, table.prior());
  CostTable cost = table.cost();
  for (uint64_t i = 0; i < uint64_t(kLeaderStart); ++i)  // NCCL's: no memo needed
    EXPECT_EQ(leader->decide_at(kKey, kBytes, cost, i, kOwn), -1) << i;
  EXPECT_EQ(leader->retired_at(kKey), UINT64_MAX);
  // Greedy's commitment on the prior: slot 0.
  EXPECT_EQ(leader->decide_at(kKey, kBytes, cost, kLeaderStart, kOwn), 0);
  EXPECT_EQ(leader->retired_at(kKey), uint64_t(kLeaderStart));
  for (int8_t s : window(*leader, 0, table.prior())) EXPECT_EQ(s, -1);
  for (int8_t s : window(*leader, kLeaderStart, table.prior())) EXPECT_EQ(s, 0);
  EXPECT_EQ(budget.load(), 0);
}

TEST(RankAgreement, NoPolicyDecisionBeforeEveryRanksTableIsIn) {
  // The leader runs 100 calls ahead of the follower's first request: they are NCCL's choice (the
  // leader does not wait), and the policy starts right after them, at the next window boundary: call
  // 100 (a multiple of kLeaderWindow = 4).
  Table table;
  auto leader = both_present("random");
  CostTable cost = table.cost();
  std::vector<int> played;
  for (uint64_t i = 0; i < 100; ++i) played.push_back(leader->decide_at(kKey, kBytes, cost, i, kOwn));
  for (int s : played) ASSERT_EQ(s, -1);
  EXPECT_FALSE(leader->started(kKey));
  const auto w = windows(*leader, 0, 256, table.prior());
  EXPECT_TRUE(leader->started(kKey));
  EXPECT_EQ(leader->memo_base(kKey), 100u);
  for (uint64_t i = 0; i < 100; ++i) ASSERT_EQ(w[i], -1) << i;
  for (uint64_t i = 100; i < 256; ++i) {
    ASSERT_GE(w[i], 0) << i;
    ASSERT_EQ(leader->decide_at(kKey, kBytes, cost, i, kOwn), w[i]) << i;
  }
}

TEST(RankAgreement, AnArmMissingFromAFollowersTableIsNeverPlayedEvenByCallsDecidedBeforeItsTable) {
  // The leader plays 100 calls before the follower's first request, whose table lacks Ring/Simple
  // (another NCCL_PROTO, say). No decision may name Ring/Simple: the follower could not play it and
  // would keep NCCL's choice alone. So the context never starts: NCCL's choice, for everyone.
  Table table;
  auto leader = both_present("random");
  CostTable cost = table.cost();
  std::vector<int> played;
  for (uint64_t i = 0; i < 100; ++i) played.push_back(leader->decide_at(kKey, kBytes, cost, i, kOwn));
  std::vector<float> follower_prior = table.prior();
  follower_prior[5] = -1.0f;  // Ring/Simple is not usable on the follower
  const auto w = windows(*leader, 0, 256, follower_prior);
  EXPECT_EQ(leader->table_mismatches(), 1u);
  EXPECT_EQ(leader->retired_at(kKey), 100u);  // past everything answered: all of it NCCL's anyway
  for (uint64_t i = 100; i < 300; ++i) played.push_back(leader->decide_at(kKey, kBytes, cost, i, kOwn));
  for (uint64_t i = 0; i < 300; ++i) {
    ASSERT_EQ(played[i], -1) << i;  // nothing the follower cannot play (was: the policy's arms)
    if (i < 256) {
      ASSERT_EQ(w[i], played[i]) << i;
    }
  }
}

TEST(RankAgreement, AnArmMissingFromTheLeadersTableIsNeverPlayedEither) {
  // The follower asks first with Tree/LL and Ring/Simple; the leader's own table has Tree/LL only.
  // The context must not be seeded from the follower's table alone.
  Table table;
  auto leader = both_present("random");
  const auto w = window(*leader, 0, table.prior());
  Table own;
  own.t[1][2] = -1.0f;
  CostTable cost = own.cost();
  for (uint64_t i = 0; i < 300; ++i) ASSERT_EQ(leader->decide_at(kKey, kBytes, cost, i, kOwn), -1) << i;
  for (int8_t s : w) ASSERT_EQ(s, -1);
  for (int8_t s : window(*leader, 256, table.prior())) ASSERT_EQ(s, -1);
  EXPECT_EQ(leader->table_mismatches(), 1u);
}

TEST(RankAgreement, EveryRankInTheLeadersProcessHandsInItsTableToo) {
  // Two ranks of a 3-rank communicator live in the leader's process: the context waits for the
  // second one's first call as well (here after the follower's first three windows).
  Table table;
  OnlineLearner leader(1, 3, 1, engine("random"), true);
  const uint64_t second = OnlineLearner::local_member(1);
  leader.add_member(kOwn);
  leader.add_member(second);
  leader.add_member(kFollower);
  CostTable cost = table.cost();
  EXPECT_EQ(leader.decide_at(kKey, kBytes, cost, 0, kOwn), -1);
  for (int8_t s : windows(leader, 0, 3 * kLeaderWindow, table.prior())) ASSERT_EQ(s, -1);
  EXPECT_FALSE(leader.started(kKey));
  EXPECT_EQ(leader.decide_at(kKey, kBytes, cost, 0, second), -1);  // answered before its table counted
  EXPECT_TRUE(leader.started(kKey));
  EXPECT_EQ(leader.memo_base(kKey), uint64_t(3 * kLeaderWindow));  // past the follower's windows
  const int a = leader.decide_at(kKey, kBytes, cost, 3 * kLeaderWindow, kOwn);
  EXPECT_GE(a, 0);
  EXPECT_EQ(leader.decide_at(kKey, kBytes, cost, 3 * kLeaderWindow, second), a);
}

TEST(RankAgreement, ALaterTableMissingAnArmRetiresFromTheFirstUndecidedCall) {
  // Once started, a follower's request whose table lacks one of the policy's arms (a call of
  // another data type, say) retires the context to NCCL's choice from the first undecided call.
  Table table;
  auto leader = both_present("random");
  hand_in_follower_table(*leader, table.prior());
  CostTable cost = table.cost();
  std::vector<int> played;
  for (uint64_t i = 0; i < 100; ++i) played.push_back(leader->decide_at(kKey, kBytes, cost, i, kOwn));
  std::vector<float> follower_prior = table.prior();
  follower_prior[5] = -1.0f;
  const auto w = windows(*leader, 0, 256, follower_prior);
  EXPECT_EQ(leader->table_mismatches(), 1u);
  EXPECT_EQ(leader->retired_at(kKey), 100u);  // everything decided so far stays as it was
  for (uint64_t i = 0; i < 100; ++i) ASSERT_EQ(w[i], played[i]);
  for (uint64_t i = 100; i < 256; ++i) ASSERT_EQ(w[i], -1);
  for (uint64_t i = 100; i < 300; ++i) ASSERT_EQ(leader->decide_at(kKey, kBytes, cost, i, kOwn), -1);
}

TEST(RankAgreement, AFollowerTooFarAheadIsToldToAskAgain) {
  Table table;
  auto leader = both_present("random");
  std::vector<int8_t> out(kLeaderWindow);
  const auto prior = table.prior();
  // Before the context starts nobody waits: even far ahead, the answer is NCCL's choice at once.
  EXPECT_TRUE(leader->decide_range(kKey + 1, kBytes * 2, prior.data(), 100 * kMaxFollowerLead, kLeaderWindow,
                                   out.data(), kFollower));
  for (int8_t s : out) EXPECT_EQ(s, -1);
  hand_in_follower_table(*leader, prior);
  CostTable cost = table.cost();
  leader->decide_at(kKey, kBytes, cost, 0, kOwn);
  ASSERT_TRUE(leader->started(kKey));
  EXPECT_TRUE(leader->decide_range(kKey, kBytes, prior.data(), kMaxFollowerLead, kLeaderWindow, out.data(),
                                   kFollower));
  EXPECT_FALSE(leader->decide_range(kKey, kBytes, prior.data(), kMaxFollowerLead + 256, kLeaderWindow,
                                    out.data(), kFollower));
  for (uint64_t i = 1; i < 256; ++i) leader->decide_at(kKey, kBytes, cost, i, kOwn);
  EXPECT_TRUE(leader->decide_range(kKey, kBytes, prior.data(), kMaxFollowerLead + 256, kLeaderWindow,
                                   out.data(), kFollower));
}

namespace {

// The follower of the tests below: rank 1 of the 2-rank communicator 9.
WireHello rank_one() {
  WireHello h;
  h.comm_id = 9;
  h.nranks = 2;
  h.nnodes = 1;
  h.rank = 1;
  return h;
}

// The leader's learner of communicator 9, with its own rank present; followers join by HELLO.
std::shared_ptr<OnlineLearner> learner_of_nine() {
  auto l = std::make_shared<OnlineLearner>(9, 2, 1, engine("random"), true);
  l->add_member(kOwn);
  return l;
}

bool count_hello(OnlineLearner& l, const WireHello& h) {
  l.add_member(OnlineLearner::follower_member(h.rank, h.ordinal));
  return true;
}

void answer(OnlineLearner& l, const WireRequest& r, WireDecisions* d) {
  std::vector<float> prior(kNumArms, -1.0f);
  std::copy(r.prior, r.prior + kNumNcclArms, prior.begin());
  d->status = l.decide_window(int(r.key), r.bytes, prior.data(), r.start, int(r.count), d->arms,
                              OnlineLearner::follower_member(r.rank, r.ordinal))
                  ? DecisionStatus::kOk
                  : DecisionStatus::kLater;
}

LeaderKey test_key(const char* secret = "live-leader-test-secret") {
  LeaderKey key;
  std::string why;
  EXPECT_TRUE(leader_key_from_text(secret, &key, &why)) << why;
  return key;
}

// A leader server in this process whose decisions come from one learner; `hold` makes it answer
// "later" (a stalled leader). It keeps the first call index of every request it reads, in order.
struct LiveLeader {
  std::shared_ptr<OnlineLearner> learner = learner_of_nine();
  std::atomic<bool> hold{false};
  std::atomic<int> hellos{0};
  std::string address;
  LeaderKey key = test_key();
  std::mutex requests_mu;
  std::vector<uint64_t> request_starts;

  std::vector<uint64_t> requests() {
    std::lock_guard<std::mutex> lock(requests_mu);
    return request_starts;
  }

  LiveLeader() {
    std::string why;
    LeaderHandler h;
    h.ctx = this;
    h.hello = [](void* c, const WireHello& hello) {
      auto* self = static_cast<LiveLeader*>(c);
      ++self->hellos;
      return count_hello(*self->learner, hello);
    };
    h.decide = [](void* c, const WireRequest& r, WireDecisions* d) {
      auto* self = static_cast<LiveLeader*>(c);
      {
        std::lock_guard<std::mutex> lock(self->requests_mu);
        self->request_starts.push_back(r.start);
      }
      if (self->hold.load()) {
        d->status = DecisionStatus::kLater;
        return;
      }
      answer(*self->learner, r, d);
    };
    for (int port = 42000 + int(::getpid() % 4000), tries = 0; tries < 50; ++port, ++tries) {
      address = "127.0.0.1:" + std::to_string(port);
      if (LeaderServer::start(address, key, h, LeaderLimits{}, &why)) return;
    }
    ADD_FAILURE() << why;
  }
};

// A leader served by hand, one thread per connection, so that a test can lose the ACK of a HELLO
// the leader counted (the connection cut between the two), pause accepting (a leader process that
// is stopped: the kernel still queues connections), or make the leader process vanish (its
// listening socket and connections closed: connecting is then refused).
struct HandServedLeader {
  std::shared_ptr<OnlineLearner> learner = learner_of_nine();
  LeaderKey key = test_key();
  std::string address;
  std::atomic<int> cut_after_hello{0};  // connections to cut after counting a HELLO, before the ACK
  std::atomic<bool> refuse{false};
  std::atomic<bool> accepting{true};
  std::atomic<bool> dead{false}, listener_closed{false};
  std::atomic<int> hellos{0};
  std::mutex mu;
  std::vector<int> conns;
  int listen_fd = -1;

  HandServedLeader() {
    listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    ::setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    for (int tries = 0; tries < 20; ++tries) {
      const int port = ncclbot::plugin::free_loopback_port();
      a.sin_port = htons(uint16_t(port));
      if (::bind(listen_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        address = "127.0.0.1:" + std::to_string(port);
        break;
      }
    }
    EXPECT_FALSE(address.empty());
    EXPECT_EQ(::listen(listen_fd, 64), 0);
    std::thread([this] { accept_loop(); }).detach();
  }

  void accept_loop() {
    while (!dead.load()) {
      if (!accepting.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      pollfd p{listen_fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0 || !accepting.load()) continue;
      const int c = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::lock_guard<std::mutex> lock(mu);
      if (dead.load()) {
        ::close(c);
        break;
      }
      conns.push_back(c);
      std::thread([this, c] { serve(c); }).detach();
    }
    ::close(listen_fd);
    listener_closed = true;
  }

  struct Conn {
    HandServedLeader* leader;
    bool cut = false;
  };

  void serve(int fd) {
    uint8_t nonce[kNonceBytes];
    std::random_device rd;
    for (uint8_t& b : nonce) b = uint8_t(rd());
    LeaderSession session(key, nonce);
    Conn conn{this};
    LeaderHandler h;
    h.ctx = &conn;
    h.hello = [](void* c, const WireHello& hello) {
      auto* conn = static_cast<Conn*>(c);
      HandServedLeader& self = *conn->leader;
      ++self.hellos;
      if (self.refuse.load()) return false;
      count_hello(*self.learner, hello);
      if (self.cut_after_hello.load() > 0) {
        --self.cut_after_hello;
        conn->cut = true;
      }
      return true;
    };
    h.decide = [](void* c, const WireRequest& r, WireDecisions* d) {
      answer(*static_cast<Conn*>(c)->leader->learner, r, d);
    };
    const auto greeting = session.greeting();
    bool ok = ::send(fd, greeting.data(), greeting.size(), MSG_NOSIGNAL) == ssize_t(greeting.size());
    uint8_t buf[4096];
    while (ok) {
      const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
      if (r <= 0) break;
      std::vector<uint8_t> out;
      ok = session.feed(buf, size_t(r), h, &out);
      if (conn.cut) break;  // counted, and the ACK never leaves
      if (!out.empty() && ::send(fd, out.data(), out.size(), MSG_NOSIGNAL) != ssize_t(out.size())) break;
    }
    std::lock_guard<std::mutex> lock(mu);
    conns.erase(std::find(conns.begin(), conns.end(), fd));
    ::close(fd);
  }

  // The leader process is gone: nothing listens on its port any more.
  void vanish() {
    dead = true;
    while (!listener_closed.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard<std::mutex> lock(mu);
    for (int c : conns) ::shutdown(c, SHUT_RDWR);
  }
};

// Leaders outlive their tests, as in a job (their threads may still run), so they are never freed;
// the list keeps them reachable, which leak checkers count as in use.
template <class Leader>
Leader& lasting() {
  static auto* kept = new std::vector<void*>();
  auto* leader = new Leader;
  kept->push_back(leader);
  return *leader;
}

// Rank 1 of communicator 9, connected and acknowledged.
template <class Leader>
std::shared_ptr<FollowerLink> joined_follower(const Leader& leader) {
  std::string error;
  auto link = FollowerLink::connect(leader.address, leader.key, 2000, &error);
  EXPECT_TRUE(link) << error;
  if (link && link->hello(rank_one(), 2000) != FollowerLink::Joined::kAcked) return nullptr;
  return link;
}

// Runs `f` on a thread and waits up to `limit` for it: a follower that hangs must fail the test,
// not the run (the thread is then left behind, blocked).
template <class F>
bool finishes_within(std::chrono::milliseconds limit, F f) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread([done, f]() mutable {
    f();
    *done = true;
  }).detach();
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done->load() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return done->load();
}

// A live leader with rank 1 joined, and the cost table both sides decide from.
struct JoinedFollower {
  LiveLeader& leader = lasting<LiveLeader>();
  Table table;
  std::shared_ptr<FollowerLink> link = joined_follower(leader);
  CostTable cost = table.cost();
  std::vector<float> prior = table.prior();
};

}  // namespace

TEST(RankAgreement, ABrokenConnectionReconnectsAndKeepsTheLeadersDecisions) {
  JoinedFollower j;
  auto& [leader, table, link, cost, prior] = j;
  ASSERT_TRUE(link);
  int policy = 0;
  for (uint64_t i = 0; i < 2000; ++i) {
    if (i == 700 || i == 1300) link->break_connection_for_test();
    const int own = leader.learner->decide_at(kKey, kBytes, cost, i, kOwn);
    ASSERT_EQ(link->decision(rank_one(), kKey, i, kBytes, prior.data(), 2000, nullptr).slot, own) << i;
    policy += own >= 0;
  }
  EXPECT_EQ(policy, 2000 - kLeaderStart);  // the context started with the follower's first request
  EXPECT_GE(leader.hellos.load(), 3);      // announced again on each new connection
  EXPECT_EQ(leader.learner->members(), 2u);
}

// The follower's hot path (docs/plugin.md "Rank consistency"): once a stream's windows come in ahead
// of its calls, a decision allocates nothing on the calling thread, including the one call in four
// that asks for the next window (encoded into the link's outbox and written after the lock is let
// go). Counted per decision call, so the leader's own decisions in between are not.
TEST(RankAgreement, AFollowersDecisionsAllocateNothingOnceItsStreamRuns) {
  JoinedFollower j;
  auto& [leader, table, link, cost, prior] = j;
  ASSERT_TRUE(link);
  uint64_t allocations = 0, counted = 0;
  for (uint64_t i = 0; i < 3000; ++i) {
    const int own = leader.learner->decide_at(kKey, kBytes, cost, i, kOwn);
    if (i >= 1000) ncclbot::bench::start_counting_allocations();
    const int slot = link->decision(rank_one(), kKey, i, kBytes, prior.data(), 2000, nullptr).slot;
    if (i >= 1000) {
      allocations += ncclbot::bench::stop_counting_allocations();
      ++counted;
    }
    ASSERT_EQ(slot, own) << i;
  }
  EXPECT_EQ(counted, 2000u);
  EXPECT_EQ(allocations, 0u);
}

TEST(RankAgreement, AFollowerWaitsOutAStalledLeaderInsteadOfFallingBack) {
  LiveLeader& leader = lasting<LiveLeader>();
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
  const int slot =
      link->decision(rank_one(), kKey, 0, kBytes, prior.data(), 100, [&](int) { ++warnings; }).slot;
  release.join();
  CostTable cost = table.cost();
  EXPECT_EQ(slot, leader.learner->decide_at(kKey, kBytes, cost, 0, kOwn));
  EXPECT_GE(warnings, 2);  // 100 ms timeout, 350 ms stall
  EXPECT_FALSE(link->leader_gone());
}

TEST(RankAgreement, AHelloCountedWhoseAckIsLostIsSentAgainNotGivenUp) {
  // The leader counts the HELLO, then the connection breaks before the ACK arrives. Passing through
  // now would split the ranks (the leader may play the policy); the follower reconnects, says
  // HELLO again, and the leader, counting it once, ACKs the repeat.
  HandServedLeader& leader = lasting<HandServedLeader>();
  leader.cut_after_hello = 1;
  std::string error;
  auto link = FollowerLink::connect(leader.address, leader.key, 2000, &error);
  ASSERT_TRUE(link) << error;
  EXPECT_EQ(link->hello(rank_one(), 3000), FollowerLink::Joined::kAcked);
  EXPECT_EQ(leader.hellos.load(), 2);
  EXPECT_EQ(leader.learner->members(), 2u);  // counted once
  Table table;
  CostTable cost = table.cost();
  const auto prior = table.prior();
  int policy = 0;
  for (uint64_t i = 0; i < 600; ++i) {
    const int own = leader.learner->decide_at(kKey, kBytes, cost, i, kOwn);
    ASSERT_EQ(link->decision(rank_one(), kKey, i, kBytes, prior.data(), 2000, nullptr).slot, own) << i;
    policy += own >= 0;
  }
  EXPECT_EQ(policy, 600 - kLeaderStart);
}

TEST(RankAgreement, OnlyASignedRefusalLetsAnAnnouncedRankPassThrough) {
  HandServedLeader& leader = lasting<HandServedLeader>();
  leader.refuse = true;
  std::string error;
  auto link = FollowerLink::connect(leader.address, leader.key, 2000, &error);
  ASSERT_TRUE(link) << error;
  EXPECT_EQ(link->hello(rank_one(), 3000), FollowerLink::Joined::kRefused);
  EXPECT_EQ(leader.learner->members(), 1u);  // never counted, so the leader stays on NCCL's choice
  EXPECT_TRUE(link->healthy());              // and the connection stays
  Table table;
  const auto prior = table.prior();
  EXPECT_EQ(link->decision(rank_one(), kKey, 0, kBytes, prior.data(), 2000, nullptr).slot, -1);
  // Another rank of the process is still welcome on the same connection.
  leader.refuse = false;
  WireHello second = rank_one();
  second.ordinal = 1;
  EXPECT_EQ(link->hello(second, 3000), FollowerLink::Joined::kAcked);
}

TEST(RankAgreement, AFollowerWithAnotherSecretSaysNothingAndPassesThroughAtOnce) {
  // The leader cannot sign a refusal for a key it does not hold. So the follower checks the
  // leader's WELCOME before sending anything: with another secret it fails there, and no HELLO of
  // it ever reaches the leader (which would not count it anyway).
  HandServedLeader& leader = lasting<HandServedLeader>();
  std::string error;
  const auto t0 = std::chrono::steady_clock::now();
  auto link = FollowerLink::connect(leader.address, test_key("another-jobs-secret-0000"), 5000, &error);
  EXPECT_FALSE(link);
  EXPECT_NE(error.find("secret"), std::string::npos) << error;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));  // final: no retrying
  EXPECT_EQ(leader.hellos.load(), 0);
}

TEST(RankAgreement, AFollowerPassesThroughOnceTheLeaderProcessIsGone) {
  // A crashed rank 0 must not turn into a hang inside getCollInfo: once reconnecting is refused
  // (nobody listens on the leader's port) for a whole timeout, the follower plays NCCL's choice.
  HandServedLeader& leader = lasting<HandServedLeader>();
  auto link = joined_follower(leader);
  ASSERT_TRUE(link);
  Table table;
  CostTable cost = table.cost();
  const auto prior = table.prior();
  for (uint64_t i = 0; i < 300; ++i) {
    const int own = leader.learner->decide_at(kKey, kBytes, cost, i, kOwn);
    ASSERT_EQ(link->decision(rank_one(), kKey, i, kBytes, prior.data(), 2000, nullptr).slot, own) << i;
  }
  leader.vanish();
  int slot = -2;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(finishes_within(std::chrono::seconds(10), [&] {
    slot = link->decision(rank_one(), kKey, 600, kBytes, prior.data(), 300, nullptr).slot;
  })) << "the follower still waits for a leader that is gone";
  EXPECT_EQ(slot, -1);
  EXPECT_TRUE(link->leader_gone());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(300));  // refused all along
  EXPECT_FALSE(link->healthy());
}

TEST(RankAgreement, AFollowerKeepsWaitingForALeaderThatIsStoppedButAlive) {
  // A stopped leader process (or one too busy to accept) still has its port: the kernel queues the
  // connections instead of refusing them. That is not a dead leader: the follower waits.
  HandServedLeader& leader = lasting<HandServedLeader>();
  auto link = joined_follower(leader);
  ASSERT_TRUE(link);
  Table table;
  const auto prior = table.prior();
  leader.accepting = false;
  link->break_connection_for_test();
  std::thread resume([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    leader.accepting = true;
  });
  int warnings = 0;
  const int slot =
      link->decision(rank_one(), kKey, 0, kBytes, prior.data(), 100, [&](int) { ++warnings; }).slot;
  resume.join();
  EXPECT_FALSE(link->leader_gone());
  EXPECT_GE(warnings, 3);
  CostTable cost = table.cost();
  EXPECT_EQ(slot, leader.learner->decide_at(kKey, kBytes, cost, 0, kOwn));
}

TEST(RankAgreement, TheLeaderKeepsListeningWhenItRunsOutOfDescriptors) {
  // Followers read "connection refused" as a dead leader, so a live one must never stop listening:
  // an accept() failing with EMFILE is waited out.
  LiveLeader& leader = lasting<LiveLeader>();
  const int port = std::stoi(leader.address.substr(leader.address.rfind(':') + 1));
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  int highest = 0;
  for (int fd = 0; fd < 65536 && fd < int(saved.rlim_cur); ++fd)
    if (::fcntl(fd, F_GETFD) >= 0) highest = fd;
  rlimit low = saved;
  low.rlim_cur = rlim_t(highest + 8);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> fillers;
  for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fillers.push_back(fd);
  ASSERT_FALSE(fillers.empty());
  ::close(fillers.back());  // one number left, for the client's socket
  fillers.pop_back();
  const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(client, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(uint16_t(port));
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);  // queued by the kernel
  std::this_thread::sleep_for(std::chrono::milliseconds(300));                 // accept() fails meanwhile
  for (int fd : fillers) ::close(fd);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  timeval tv{3, 0};
  ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  uint8_t greeting[kGreetingBytes];
  size_t have = 0;
  while (have < sizeof greeting) {
    const ssize_t n = ::recv(client, greeting + have, sizeof greeting - have, 0);
    if (n <= 0) break;
    have += size_t(n);
  }
  ::close(client);
  EXPECT_EQ(have, sizeof greeting);
  auto link = joined_follower(leader);  // and it serves followers as before
  EXPECT_TRUE(link);
}

TEST(RankAgreement, AFollowerAsksForEachWindowOnceAtItsLookahead) {
  // Window k (calls 4k .. 4k + 3) goes out at the follower's call 4k - 8 (docs/plugin.md "Decision
  // windows"), once: never again while it is awaited or held, never before.
  LiveLeader& leader = lasting<LiveLeader>();
  Table table;
  auto link = joined_follower(leader);
  ASSERT_TRUE(link);
  CostTable cost = table.cost();
  const auto prior = table.prior();
  for (uint64_t i = 0; i < 300; ++i) {
    const int own = leader.learner->decide_at(kKey, kBytes, cost, i, kOwn);
    ASSERT_EQ(link->decision(rank_one(), kKey, i, kBytes, prior.data(), 2000, nullptr).slot, own) << i;
    // decision() sent its requests before returning; the leader reads them in order.
    const uint64_t last = (i + kLeaderPrefetch) / kLeaderWindow * kLeaderWindow;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while ((leader.requests().empty() || leader.requests().back() < last) &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    ASSERT_EQ(leader.requests().back(), last) << i;
  }
  const auto asked = leader.requests();
  ASSERT_EQ(asked.size(), (299 + kLeaderPrefetch) / kLeaderWindow + 1);
  for (size_t k = 0; k < asked.size(); ++k) ASSERT_EQ(asked[k], k * kLeaderWindow) << k;
}

TEST(RankAgreement, AFollowerCountsTheDecisionsThatWaitedForTheirWindow) {
  LiveLeader& leader = lasting<LiveLeader>();
  Table table;
  auto link = joined_follower(leader);
  ASSERT_TRUE(link);
  const auto prior = table.prior();
  FollowerWaits waits;
  leader.hold = true;  // the first window comes 300 ms late
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    leader.hold = false;
  });
  CostTable cost = table.cost();
  const int first = link->decision(rank_one(), kKey, 0, kBytes, prior.data(), 2000, nullptr, &waits).slot;
  release.join();
  EXPECT_EQ(first, leader.learner->decide_at(kKey, kBytes, cost, 0, kOwn));
  EXPECT_EQ(waits.decisions.load(), 1u);
  EXPECT_EQ(waits.waited.load(), 1u);
  EXPECT_GE(waits.longest_ns.load(), uint64_t(250) * 1000 * 1000);
  // The rest of window 0 is held: no more waiting.
  for (uint64_t i = 1; i < kLeaderWindow; ++i) {
    const int own = leader.learner->decide_at(kKey, kBytes, cost, i, kOwn);
    ASSERT_EQ(link->decision(rank_one(), kKey, i, kBytes, prior.data(), 2000, nullptr, &waits).slot, own)
        << i;
  }
  EXPECT_EQ(waits.decisions.load(), uint64_t(kLeaderWindow));
  EXPECT_EQ(waits.waited.load(), 1u);
}

TEST(RankAgreement, ASlowFollowerPlaysWhatTheLeaderPlayedLongBefore) {
  // The leader runs 3,000 calls ahead, learning from its latencies all along; the follower then
  // plays the same calls, asking for windows the leader decided long ago: the memo answers.
  LiveLeader& leader = lasting<LiveLeader>();
  Table table;
  auto link = joined_follower(leader);
  ASSERT_TRUE(link);
  CostTable cost = table.cost();
  const auto prior = table.prior();
  std::vector<int> played;
  for (uint64_t i = 0; i < 3000; ++i) {
    played.push_back(leader.learner->decide_at(kKey, kBytes, cost, i, kOwn));
    if (i == 0) {  // the follower's first call hands in its table: the context starts at kLeaderStart
      ASSERT_EQ(link->decision(rank_one(), kKey, 0, kBytes, prior.data(), 2000, nullptr).slot, played[0]);
    }
    const int ran = played.back() >= 0 ? played.back() : 0;
    leader.learner->observe(kKey, ran, ran == 0 ? 10.0 + double(i % 7) : 11.0 + double(i % 5));
  }
  int policy = 0;
  for (uint64_t i = 0; i < 3000; ++i) {
    ASSERT_EQ(link->decision(rank_one(), kKey, i, kBytes, prior.data(), 2000, nullptr).slot, played[i]) << i;
    policy += played[i] >= 0;
  }
  EXPECT_EQ(policy, 3000 - kLeaderStart);
}

// The knob leader's learner (KnobLeaderLearner) keeps its contexts in the state file like the slot
// one: its arms are the crossing of the table's slots with its lists, its policy is saved and read
// back bit for bit, and a learner restored from it decides, arm for arm, as the saved one goes on
// deciding (the Philox steps carry over). The arms it decides name knobs, not slots.
TEST(RankAgreement, AKnobLearnersStateCarriesItsArmsAndPolicy) {
  Table table;
  auto eng = engine("ucb1:c=0.5,n0=1");
  const KnobSpec spec = parse_knob_spec("channels=0,4,8;chunk=0,128K");
  KnobLeaderLearner job(1, 2, 1, eng, false, MemoLimits{}, spec);
  const auto latency = [](const DecidedArm& a) {
    return 10.0 + (a.slot == 5 ? 3.0 : 0.0) - a.channels * 0.25 + (a.chunk_bytes ? 1.0 : 0.0);
  };
  std::set<std::pair<int, uint32_t>> knobs_played;
  for (int i = 0; i < 40; ++i) {
    const int a = job.decide_next(kKey, kBytes, table.prior().data());
    ASSERT_GE(a, 0);
    const DecidedArm arm = job.decided_arm(kKey, a);
    knobs_played.insert({arm.channels, arm.chunk_bytes});
    job.observe(kKey, a, latency(arm));
  }
  EXPECT_EQ(knobs_played.size(), 6u);  // every channel count with both chunks: UCB1 tries each arm
  KnobStateFile saved(*eng, &spec);
  job.export_contexts(saved);
  KnobStateFile loaded(*eng, &spec);
  std::string why;
  ASSERT_TRUE(loaded.decode(saved.encode(), &why)) << why;
  KnobLeaderLearner continued(1, 2, 1, eng, false, MemoLimits{}, spec);
  ASSERT_EQ(continued.import_contexts(loaded), 1);
  for (int i = 0; i < 60; ++i) {
    const int a = job.decide_next(kKey, kBytes, table.prior().data());
    ASSERT_EQ(continued.decide_next(kKey, kBytes, table.prior().data()), a) << i;
    ASSERT_EQ(continued.decided_arm(kKey, a), job.decided_arm(kKey, a));
    job.observe(kKey, a, latency(job.decided_arm(kKey, a)));
    continued.observe(kKey, a, latency(job.decided_arm(kKey, a)));
  }
}
