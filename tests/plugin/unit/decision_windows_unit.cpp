// The leader's decision windows (docs/plugin.md "Decision windows", replay/leader_protocol.hpp):
// the decisions of window k (calls [4k, 4k + 4)) are made from the policy state holding the leader's
// latencies of the calls before 4k - 8 and no later one, whoever asks first; the decisions whose
// latencies have not reached the policy count as pending (PendingPulls). Calls [0, kLeaderStart)
// are NCCL's own: their latencies reach the policy on the same schedule, and are never pending.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ncclbot/replay/leader_protocol.hpp"
#include "ncclbot/replay/replay.hpp"
#include "plugin/online_learner.hpp"
#include "plugin/state_file.hpp"
#include "two_rank_leader.hpp"

using namespace ncclbot;
using namespace ncclbot::plugin;
using namespace ncclbot::plugin::two_rank;

namespace {

// Noisy latencies of the two arms of two_rank::Table, close enough that UCB1 keeps changing its
// mind, so a decision depends on exactly which latencies the policy holds.
double noisy_latency(uint64_t call, int slot) {
  const double base = slot == 0 ? 15.0 : 14.0;
  return base * (1.0 + 0.3 * double((call * 2654435761u) % 101) / 101.0);
}

constexpr const char* kUcb = "ucb1:c=0.3,n0=1";

// The leader's own call i, its latency reported at once.
int play(OnlineLearner& leader, CostTable& cost, uint64_t i) {
  const int s = leader.decide_at(kKey, kBytes, cost, i, kOwn);
  leader.observe(kKey, ran(s), noisy_latency(i, ran(s)));
  return s;
}

// One leader run of `calls` calls, its latency reported right after each call; the follower asks
// for each window k = 2..240 either as soon as the leader has reported the latencies of the calls
// before its cut 4k - 8 (at the leader's call 4k - 8, before that call's latency) or only once the
// leader has also reported those of calls 4k - 8 .. 4k - 1 (at and after the cut), which the
// protocol must hold back. Returns the leader's own decisions followed by the follower's answers.
std::vector<int8_t> run(bool late_request, uint64_t calls) {
  Table table;
  CostTable cost = table.cost();
  auto leader = both_present(kUcb);
  hand_in_follower_table(*leader, table.prior());
  std::vector<int8_t> played, answered;
  auto ask = [&](uint64_t k) {
    if (k < 2 || k > 240) return;
    const auto w = window(*leader, k * kLeaderWindow, table.prior());
    answered.insert(answered.end(), w.begin(), w.end());
  };
  for (uint64_t i = 0; i < calls; ++i) {
    const int slot = leader->decide_at(kKey, kBytes, cost, i, kOwn);
    if (!late_request && (i + kLeaderPrefetch) % kLeaderWindow == 0)
      ask((i + kLeaderPrefetch) / kLeaderWindow);
    played.push_back(int8_t(slot));
    leader->observe(kKey, ran(slot), noisy_latency(i, ran(slot)));
    // Call 4k - 1: the leader has now reported the latencies of calls 4k - 8 .. 4k - 1 too.
    if (late_request && (i + 1) % kLeaderWindow == 0) ask((i + 1) / kLeaderWindow);
  }
  played.insert(played.end(), answered.begin(), answered.end());
  return played;
}

}  // namespace

TEST(DecisionWindows, TheMemoDoesNotDependOnWhenTheFollowerAsks) {
  const auto early = run(false, 2000), late = run(true, 2000);
  ASSERT_EQ(early.size(), late.size());
  ASSERT_EQ(early.size(), 2000u + 239u * kLeaderWindow);  // the follower asked for windows 2..240
  int switches = 0;
  for (size_t i = 0; i < early.size(); ++i) {
    ASSERT_EQ(early[i], late[i]) << i;
    if (i > 0 && i < 2000) switches += early[i] != early[i - 1];
  }
  EXPECT_GT(switches, 20);  // the policy keeps changing its mind: the held-back latencies would show
}

TEST(DecisionWindows, PendingDecisionsSpreadAWindowOverTheArms) {
  // ucb1:c=1,n0=1 seeded from NCCL's table: arm A (Tree/LL, slot 0) 10 us, arm B (Ring/Simple,
  // slot 5) 11 us, one pseudo-observation each (N = 1, total 2), and no latency arrives. NCCL plays
  // A on calls 0..11, which are never pending (12 pending pulls at A would make B the first pick):
  // the policy's window 3 starts as from the prior. UCB1 picks
  // the lowest mean - c * min(mean) * sqrt(2 ln(total + P)) / sqrt(N + p), each pending decision a
  // pull at its arm's mean (p_a of them, P in all):
  //   1st, P = 0:        A 10 - 10 * 1.1774        = -1.774,  B 11 - 11.774        = -0.774  -> A
  //   2nd, p = (1, 0):   A 10 - 10 * 1.4823 / 1.4142 = -0.481, B 11 - 14.823       = -3.823  -> B
  //   3rd, p = (1, 1):   A 10 - 16.651 / 1.4142    = -1.774,  B 11 - 16.651 / 1.4142 = -0.774 -> A
  //   4th, p = (2, 1):   A 10 - 17.941 / 1.7321    = -0.358,  B 11 - 17.941 / 1.4142 = -1.686 -> B
  // Blind to what is pending (P = 0 throughout, the state never changes) all four would be A.
  Table table;
  table.t[1][2] = 11.0f;
  std::vector<float> prior = table.prior();
  prior[5] = 11.0f;
  auto leader = both_present("ucb1:c=1,n0=1");
  hand_in_follower_table(*leader, prior);
  CostTable cost = table.cost();
  EXPECT_EQ(leader->decide_at(kKey, kBytes, cost, 0, kOwn), -1);  // the leader's table: it starts
  EXPECT_TRUE(leader->started(kKey));
  EXPECT_EQ(leader->memo_base(kKey), uint64_t(kLeaderStart));
  for (int8_t s : windows(*leader, 0, kLeaderStart, prior)) EXPECT_EQ(s, -1);
  // The follower asks for window 3: one state decides 12..15.
  const auto w = window(*leader, kLeaderStart, prior);
  EXPECT_EQ(w[0], 0);
  EXPECT_EQ(w[1], 5);
  EXPECT_EQ(w[2], 0);
  EXPECT_EQ(w[3], 5);
  for (uint64_t i = 0; i < kLeaderWindow; ++i)
    ASSERT_EQ(leader->decide_at(kKey, kBytes, cost, kLeaderStart + i, kOwn), w[i]);

  // Local mode counts its own unanswered decisions as pending too (a replay with that delay): with
  // no latency back, the same four decisions. With A's latency back before the next call (10 us,
  // A's mean), nothing is pending and the real observation gives the state the pending pull gave.
  OnlineLearner local(1, 2, 1, engine("ucb1:c=1,n0=1"), false);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(local.decide_next(kKey, kBytes, prior.data()), w[size_t(i)]) << i;
  OnlineLearner answered(1, 2, 1, engine("ucb1:c=1,n0=1"), false);
  EXPECT_EQ(answered.decide_next(kKey, kBytes, prior.data()), 0);
  ASSERT_TRUE(answered.observe(kKey, 0, 10.0));  // A's latency back: nothing pending
  // A now has N = 2 at mean 10, B N = 1 at 11, total 3: A 10 - 14.823/1.4142 = -0.481, B 11 - 14.823
  // = -3.823 -> B, the same as with A pending (a pending pull counts as one at A's mean, 10).
  EXPECT_EQ(answered.decide_next(kKey, kBytes, prior.data()), 5);

  // Latencies absorbed take their decisions off the pending counts: with the latencies of calls
  // 0..39 arrived, window 10 (cut: call 32) is decided from the state holding calls 0..31 (NCCL's
  // 0..11 among them), with the policy's decisions of calls 32..39 pending, as a policy driven by
  // hand decides.
  auto measured = [](int slot) { return slot == 0 ? 10.6 : 10.9; };
  std::vector<int> played(kLeaderStart, 0);  // NCCL's pick: A
  played.insert(played.end(), w.begin(), w.end());
  for (uint64_t i = 0; i < 40; ++i) {
    const int s = leader->decide_at(kKey, kBytes, cost, i, kOwn);
    if (i >= kLeaderStart + kLeaderWindow) played.push_back(s);
    leader->observe(kKey, ran(s), measured(ran(s)));
  }
  const auto w10 = window(*leader, 10 * kLeaderWindow, prior);
  const auto eng = engine("ucb1:c=1,n0=1");
  // By hand: `forget` leaves the absorbed calls' decisions pending (a wrong count), to show that
  // the window depends on getting it right.
  auto by_hand = [&](bool forget) {
    PolicyState state = hand_driven(*eng, prior);
    PendingPulls pending{};
    for (int i = 0; i < 40; ++i) {
      if (i < 32) eng->update(state, played[size_t(i)], measured(played[size_t(i)]));
      if (i >= kLeaderStart && (i >= 32 || forget)) {
        ++pending.count[played[size_t(i)]];
        ++pending.total;
      }
    }
    std::vector<int8_t> out;
    for (int j = 0; j < kLeaderWindow; ++j) {
      out.push_back(int8_t(eng->select_pending(state, 0, 0, pending)));  // UCB1 draws nothing
      ++pending.count[out.back()];
      ++pending.total;
    }
    return out;
  };
  EXPECT_EQ(w10, by_hand(false));
  EXPECT_NE(w10, by_hand(true));
}

TEST(DecisionWindows, InLockstepEachDecisionLagsByTheProtocolsCut) {
  // The follower asks for window k at its call 4k - 8, the leader's latency of every call arrives
  // before its next call: call t is decided with the latencies of calls before leader_feedback_end(t)
  // exactly, lag t - leader_feedback_end(t). Both tables are in at call 0, so the policy starts at
  // kLeaderStart (NCCL plays windows 0..2) and decides calls 12..2047 and the two windows asked for
  // past them, 2048..2055: lags 8..11 in each of the 511 windows 3..513. Median: 2044 decisions,
  // 1022nd smallest: lags <= 9 number 2 * 511 = 1022: 9. p90: 1840th smallest; <= 10 number
  // 3 * 511 = 1533: 11. Max 11.
  Table table;
  CostTable cost = table.cost();
  auto leader = both_present(kUcb);
  hand_in_follower_table(*leader, table.prior());
  for (uint64_t i = 0; i < 2048; ++i) {
    const int s = leader->decide_at(kKey, kBytes, cost, i, kOwn);  // call 0 starts the context
    // The follower, at the same call: at call 0 it asks for windows 0..2, then for window k at
    // call 4k - 8.
    if (i == 0) window(*leader, 0, table.prior());
    if ((i + kLeaderPrefetch) % kLeaderWindow == 0 || i == 0)
      window(*leader, (i + kLeaderPrefetch) / kLeaderWindow * kLeaderWindow, table.prior());
    leader->observe(kKey, ran(s), noisy_latency(i, ran(s)));
  }
  const FeedbackLagHistogram lag = leader->feedback_lag();
  EXPECT_EQ(leader->memo_base(kKey), uint64_t(kLeaderStart));
  EXPECT_EQ(lag.count(), 2044u);
  EXPECT_EQ(lag.quantile(0.5), 9u);
  EXPECT_EQ(lag.quantile(0.9), 11u);
  EXPECT_EQ(lag.max(), 11u);
  EXPECT_EQ(leader_feedback_end(2047), 2044u - 8u);
}

TEST(DecisionWindows, ARequestSentTwiceGetsTheSameAnswer) {
  Table table;
  CostTable cost = table.cost();
  auto leader = both_present(kUcb);
  hand_in_follower_table(*leader, table.prior());
  for (uint64_t i = 0; i < 100; ++i) play(*leader, cost, i);
  const auto first = window(*leader, 104, table.prior());       // ahead of the leader
  for (uint64_t i = 100; i < 103; ++i) play(*leader, cost, i);  // more latencies arrive in between
  const auto again = window(*leader, 104, table.prior());
  EXPECT_EQ(first, again);
  for (uint64_t i = 103; i < 104 + kLeaderWindow; ++i) {
    const int s = leader->decide_at(kKey, kBytes, cost, i, kOwn);
    if (i >= 104) {
      ASSERT_EQ(s, first[i - 104]) << i;
    }
  }
}

TEST(DecisionWindows, ALateRequestForAnOldWindowIsAnsweredFromTheMemoAndChangesNothing) {
  // Two leaders play the same calls with the same latencies; one is also asked, 600 calls late,
  // for old windows. It answers what it played then, and the rest of its run is unchanged.
  Table table;
  CostTable cost = table.cost();
  auto leader = both_present(kUcb), twin = both_present(kUcb);
  hand_in_follower_table(*leader, table.prior());
  hand_in_follower_table(*twin, table.prior());
  std::vector<int8_t> played;
  for (uint64_t i = 0; i < 1500; ++i) {
    const int s = leader->decide_at(kKey, kBytes, cost, i, kOwn);
    ASSERT_EQ(twin->decide_at(kKey, kBytes, cost, i, kOwn), s) << i;
    played.push_back(int8_t(s));
    leader->observe(kKey, ran(s), noisy_latency(i, ran(s)));
    twin->observe(kKey, ran(s), noisy_latency(i, ran(s)));
    if (i >= 600 && i % 50 == 0) {
      const uint64_t old = (i - 600) / kLeaderWindow * kLeaderWindow;
      const auto w = window(*leader, old, table.prior());
      for (uint64_t j = 0; j < kLeaderWindow; ++j) ASSERT_EQ(w[j], played[old + j]) << old + j;
    }
  }
  EXPECT_EQ(leader->feedback_lag().count(), twin->feedback_lag().count());
}

TEST(DecisionWindows, LatenciesHeldBackAreInTheSavedState) {
  // At finalize the last latencies are still held back; the state file must have them all, as a
  // policy updated with every latency in order holds them.
  Table table;
  CostTable cost = table.cost();
  auto eng = engine(kUcb);
  auto leader = both_present(kUcb);
  hand_in_follower_table(*leader, table.prior());
  PolicyState all = hand_driven(*eng, table.prior());
  for (uint64_t i = 0; i < 50; ++i) {
    const int s = play(*leader, cost, i);
    eng->update(all, ran(s), noisy_latency(i, ran(s)));
  }
  StateFile saved(*eng);
  leader->export_contexts(saved);
  ASSERT_EQ(saved.entries().size(), 1u);
  auto fields = [](PolicyState state) {
    std::vector<double> out;
    with_policy(state, [&](auto& p) {
      p.visit_state([&](auto* values, int n, double, double) {
        for (int i = 0; i < n; ++i) out.push_back(double(values[i]));
      });
    });
    return out;
  };
  const std::vector<double> want = fields(all), got = fields(saved.entries()[0].policy);
  EXPECT_EQ(got, want);
  // 2 pseudo-observations + 50 latencies, although the leader, its next undecided call being 52,
  // still holds back those of calls 44..49 (leader_feedback_end(52) = 44).
  EXPECT_EQ(got[6], 52.0);  // ArmStats: count[2], sum[2], mean[2], total
}

TEST(DecisionWindows, AReportThePolicyCannotUseStillCountsAsItsCall) {
  // Arrival j is call j's: a report of call 30 the policy cannot learn from (a zero latency, an
  // arm outside the context's) must still count, or every later decision would see one latency
  // fewer than the protocol says (lags up to 12 instead of 11, in lockstep).
  for (int bad = 0; bad < 2; ++bad) {
    Table table;
    CostTable cost = table.cost();
    auto leader = both_present(kUcb);
    hand_in_follower_table(*leader, table.prior());
    for (uint64_t i = 0; i < 400; ++i) {
      const int s = leader->decide_at(kKey, kBytes, cost, i, kOwn);
      if (i == 0) window(*leader, 0, table.prior());
      if ((i + kLeaderPrefetch) % kLeaderWindow == 0 || i == 0)
        window(*leader, (i + kLeaderPrefetch) / kLeaderWindow * kLeaderWindow, table.prior());
      if (i != 30)
        leader->observe(kKey, ran(s), noisy_latency(i, ran(s)));
      else if (bad == 0)
        EXPECT_FALSE(leader->observe(kKey, ran(s), 0.0));
      else
        EXPECT_FALSE(leader->observe(kKey, 2, 12.0));  // Tree/LL128: not in the context's arms
    }
    EXPECT_EQ(leader->feedback_lag().max(), 11u) << bad;
    EXPECT_EQ(leader->observations(), 399u) << bad;
  }
}

// A job whose latencies never come back (no profiler): after kPendingWithoutFeedback decisions
// without a report nothing counts as pending any more, so the policy keeps to its best arm (A, the
// prior's) instead of spreading hallucinated pulls forever; one report and it counts again.
TEST(DecisionWindows, WithoutAnyFeedbackPendingDecisionsStopCounting) {
  Table table;
  table.t[1][2] = 11.0f;
  std::vector<float> prior = table.prior();
  prior[5] = 11.0f;
  OnlineLearner local(1, 2, 1, engine("ucb1:c=1,n0=1"), false);
  int spread = 0;
  for (uint64_t i = 0; i < kPendingWithoutFeedback; ++i)
    spread += local.decide_next(kKey, kBytes, prior.data()) == 5;
  EXPECT_GT(spread, 100);  // pending pulls spread the decisions over both arms
  for (int i = 0; i < 50; ++i) EXPECT_EQ(local.decide_next(kKey, kBytes, prior.data()), 0) << i;
  ASSERT_TRUE(local.observe(kKey, 0, 10.0));  // a report: counting resumes, so B comes back
  int b = 0;
  for (int i = 0; i < 200; ++i) b += local.decide_next(kKey, kBytes, prior.data()) == 5;
  EXPECT_GT(b, 0);
}

// CUDA graphs (docs/plugin.md "CUDA graphs"): a call captured into a graph never reports a latency
// of its own, and the leader settles it as a report the policy cannot use, in its place among the
// arrivals. A leader told of the capture decides exactly as one that got an unusable report (NaN) for
// that call in that place, whether the capture comes after every earlier latency or while the
// latencies of up to 7 calls before it are still in flight; with no report at all in its place, every
// later arrival would be taken for the call before its own, and decisions change.
TEST(DecisionWindows, ACapturedCallTakesItsPlaceAmongTheArrivals) {
  Table table;
  int untold_differs = 0;
  for (uint64_t in_flight = 0; in_flight < 8; ++in_flight)
    for (uint64_t captured = 40; captured < 48; ++captured) {
      CostTable cost = table.cost();
      auto told = both_present(kUcb), reference = both_present(kUcb), untold = both_present(kUcb);
      OnlineLearner* all[] = {told.get(), reference.get(), untold.get()};
      for (auto* l : all) hand_in_follower_table(*l, table.prior());
      std::vector<int8_t> played[3];
      std::vector<std::pair<uint64_t, int>> pending[3];  // (call, arm) whose latency is still to come
      for (uint64_t i = 0; i < 300; ++i)
        for (int k = 0; k < 3; ++k) {
          OnlineLearner& l = *all[k];
          const int s = l.decide_at(kKey, kBytes, cost, i, kOwn);
          played[k].push_back(int8_t(s));
          if (i == captured) {
            if (k == 0) l.captured(kKey, ran(s));
            if (k == 1) pending[k].push_back({i, -1});  // a NaN report in call order
          } else {
            pending[k].push_back({i, ran(s)});
          }
          // Latencies come back `in_flight` calls late, in call order.
          while (!pending[k].empty() && pending[k].front().first + in_flight <= i) {
            const auto [call, arm] = pending[k].front();
            pending[k].erase(pending[k].begin());
            l.observe(kKey, arm < 0 ? 0 : arm, arm < 0 ? NAN : noisy_latency(call, arm));
          }
        }
      EXPECT_EQ(played[0], played[1]) << "in flight " << in_flight << ", captured " << captured;
      untold_differs += played[0] != played[2];
      EXPECT_EQ(told->captured_calls(), 1u);
    }
  EXPECT_GT(untold_differs, 0);
}
