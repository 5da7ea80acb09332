// Watching fewer calls (docs/plugin.md "The cost of watching"): the watch switch reads whether each
// call loaded KernelCh and sets it for the call expected next (plugin/watch_switch.hpp); a learner
// with a watch rule wishes its next call watched while the arm it plays has fewer than `full`
// latencies, then with probability max(floor, full / n) (policy/watch_rule.hpp); a call run unwatched
// settles its decision unlearned, in local and in leader mode.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <vector>

#include "plugin/nccl_abi.hpp"
#include "plugin/online_learner.hpp"
#include "plugin/watch_switch.hpp"
#include "two_rank_leader.hpp"

using namespace ncclbot;
using namespace ncclbot::plugin;

namespace {

constexpr int kKernel = int(kNcclProfileKernelCh);
constexpr int kInitMask = int(kNcclProfileColl | kNcclProfileKernelCh | kNcclProfileCollApi);

// A learner that wishes each context's next call watched or not, as a table says.
struct WishingSink final : LatencySink {
  std::map<int, bool> wants;
  int asked = 0;
  int nranks() const override { return 1; }
  int nnodes() const override { return 1; }
  uint64_t bind_call(int) override { return kNoCall; }
  bool observe_ran(int, const RanKnobs&, double, uint64_t) override { return false; }
  bool watch_next(int key) override {
    ++asked;
    return wants[key];
  }
  void captured(int, int) override {}
  void observe_replay(int, int, uint64_t, double) override {}
};

// Whether each call of `keys` (in order, all of `sink`) was watched.
std::vector<bool> watched_calls(WatchSwitch& w, int* mask, const std::shared_ptr<LatencySink>& sink,
                                const std::vector<int>& keys) {
  std::vector<bool> out;
  for (int key : keys) out.push_back(w.api_call(mask, sink, key).watched);
  return out;
}

// A switch with NCCL's mask attached and a learner with a watch rule set up.
struct ActiveSwitch {
  WatchSwitch w;
  int mask = kInitMask;
  ActiveSwitch() {
    w.attach(&mask);
    w.rule_added();
  }
};

}  // namespace

TEST(WatchSwitch, DormantWithoutAWatchRuleItNeitherAsksNorWrites) {
  WatchSwitch w;
  int mask = kInitMask;
  w.attach(&mask);
  auto sink = std::make_shared<WishingSink>();
  sink->wants = {{1, false}, {2, false}};
  EXPECT_EQ(watched_calls(w, &mask, sink, {1, 2, 1, 2, 1}), std::vector<bool>(5, true));
  EXPECT_EQ(mask, kInitMask);
  EXPECT_EQ(sink->asked, 0);
}

TEST(WatchSwitch, KernelChIsSetForTheContextThatFollowedLastTime) {
  ActiveSwitch on;
  auto& [w, mask] = on;
  auto sink = std::make_shared<WishingSink>();
  sink->wants = {{1, true}, {2, false}};  // context 2 wants no latency
  // Calls 1 and 2 expect nothing yet (watched); call 3 (context 1) has seen 2 follow 1, so it switches
  // KernelCh off for call 4; call 4 (context 2) expects 1 next and switches it back on; and so on.
  EXPECT_EQ(watched_calls(w, &mask, sink, {1, 2, 1, 2, 1, 2}),
            (std::vector<bool>{true, true, true, false, true, false}));
  EXPECT_EQ(mask & ~kKernel, kInitMask & ~kKernel);  // the other bits untouched
  // After the last call (context 2), context 1 is expected: KernelCh on.
  EXPECT_EQ(mask & kKernel, kKernel);
}

TEST(WatchSwitch, ItSaysWhetherTheCallExpectedNextCame) {
  ActiveSwitch on;
  auto& [w, mask] = on;
  auto sink = std::make_shared<WishingSink>();
  std::vector<WatchSwitch::ApiCall> calls;
  for (int key : {1, 2, 1, 2, 1, 3}) calls.push_back(w.api_call(&mask, sink, key));
  // Call 3 is the first whose predecessor (2) had a successor on record: none was yet.
  EXPECT_FALSE(calls[2].predicted);
  EXPECT_TRUE(calls[3].predicted && calls[3].expected);   // 1 -> 2 seen before
  EXPECT_TRUE(calls[4].predicted && calls[4].expected);   // 2 -> 1
  EXPECT_TRUE(calls[5].predicted && !calls[5].expected);  // 1 -> 2 expected, 3 came
}

TEST(WatchSwitch, ACommunicatorThatLearnsNothingGoesUnwatched) {
  ActiveSwitch on;
  auto& [w, mask] = on;
  // A follower's communicator: no learner in this process.
  EXPECT_EQ(watched_calls(w, &mask, nullptr, {7, 7, 7, 7}), (std::vector<bool>{true, true, false, false}));
}

TEST(WatchSwitch, GoingDormantPutsKernelChBackAndADetachedMaskIsLeftAlone) {
  ActiveSwitch on;
  auto& [w, mask] = on;
  watched_calls(w, &mask, nullptr, {7, 7, 7});
  ASSERT_EQ(mask & kKernel, 0);
  w.rule_removed();
  EXPECT_EQ(mask, kInitMask);
  EXPECT_FALSE(w.active());

  w.rule_added();
  w.detach(&mask);
  mask = kInitMask & ~kKernel;
  EXPECT_TRUE(w.api_call(&mask, nullptr, 7).watched);  // not read: taken as watched
  watched_calls(w, &mask, nullptr, {7, 7, 7});
  EXPECT_EQ(mask, kInitMask & ~kKernel);  // not written
}

namespace {

// Two arms of two_rank::Table: Tree/LL (slot 0) takes 30 us, Ring/Simple (slot 5) 10 us.
double two_arm_latency(int slot) {
  return slot == 5 ? 10.0 : 30.0;
}

// A local learner driven as the profiler would: each call watched when the learner wished it
// (its wish for the call is asked just before the call, as the switch asks for the expected one).
struct WatchedRun {
  long calls = 0, watched = 0, best = 0;
  long watched_late = 0, late = 0;  // from call `late_from` on
};

WatchedRun run_local(const char* spec, long calls, long late_from) {
  OnlineLearner l(1, 1, 1, two_rank::engine(spec), false);
  two_rank::Table table;
  CostTable cost = table.cost();
  WatchedRun r;
  for (long k = 0; k < calls; ++k) {
    const bool watch = l.watch_next(two_rank::kKey);
    const int slot = l.decide_next(two_rank::kKey, two_rank::kBytes, cost);
    const int ran = two_rank::ran(slot);
    const uint64_t call = l.bind_call(two_rank::kKey);
    RanKnobs facts{ran / 3, ran % 3, 2};
    facts.watched = watch;
    l.observe_ran(two_rank::kKey, facts,
                  watch ? two_arm_latency(ran) : std::numeric_limits<double>::quiet_NaN(), call);
    ++r.calls;
    r.watched += watch;
    r.best += ran == 5;
    if (k >= late_from) {
      ++r.late;
      r.watched_late += watch;
    }
  }
  EXPECT_EQ(l.unwatched_calls(), uint64_t(r.calls - r.watched));
  EXPECT_EQ(l.observations(), uint64_t(r.watched));
  EXPECT_EQ(l.unmeasurable_latencies(), 0u);  // an unwatched call is no bad measurement
  return r;
}

}  // namespace

TEST(WatchingLearner, WithoutARuleEveryCallIsWished) {
  const WatchedRun r = run_local("greedy:n0=1", 500, 0);
  EXPECT_EQ(r.watched, r.calls);
}

TEST(WatchingLearner, ASettledArmIsWatchedOnTheFloorsShareAndTheBestArmStillWins) {
  // full=4, floor=0.25: every call until the arm played has 4 latencies, then max(0.25, 4 / n), which
  // is the floor from n = 16 on. So late calls are watched with probability 0.25: over 4,000 of them
  // the share is within 0.25 +- 0.03 (4.4 standard deviations of a binomial(4000, 0.25) share).
  const WatchedRun r = run_local("greedy:n0=1@watch:full=4,floor=0.25", 5000, 1000);
  EXPECT_GT(r.best, r.calls * 9 / 10);
  const double share = double(r.watched_late) / double(r.late);
  EXPECT_NEAR(share, 0.25, 0.03);
}

TEST(WatchingLearner, EveryCallIsWatchedUntilTheArmPlayedHasFullLatencies) {
  // full = 8: whenever the arm of the latest decision has fewer than 8 latencies (counted here), the
  // next call is wished watched; once the played arm has them, some calls go unwatched.
  OnlineLearner l(1, 1, 1, two_rank::engine("greedy:n0=1@watch:full=8,floor=0.01"), false);
  two_rank::Table table;
  CostTable cost = table.cost();
  std::map<int, int> latencies;
  int last = -1;
  long wished_later = 0, later = 0;
  for (int k = 0; k < 300; ++k) {
    const bool watch = l.watch_next(two_rank::kKey);
    if (last < 0 || latencies[last] < 8)
      EXPECT_TRUE(watch) << "call " << k;
    else {
      ++later;
      wished_later += watch;
    }
    last = two_rank::ran(l.decide_next(two_rank::kKey, two_rank::kBytes, cost));
    RanKnobs facts{last / 3, last % 3, 2};
    facts.watched = watch;
    if (watch) ++latencies[last];
    l.observe_ran(two_rank::kKey, facts,
                  watch ? two_arm_latency(last) : std::numeric_limits<double>::quiet_NaN(),
                  l.bind_call(two_rank::kKey));
  }
  ASSERT_GT(later, 200);
  EXPECT_LT(wished_later, later);
  EXPECT_GT(wished_later, 0);
}

TEST(WatchingLearner, InLeaderModeUnwatchedArrivalsKeepTheRanksDecisionsOneAndTheSame) {
  using namespace two_rank;
  auto leader = both_present("ucb1:c=0.3,n0=1@watch:full=4,floor=0.1");
  Table table;
  CostTable cost = table.cost();
  hand_in_follower_table(*leader, table.prior());
  std::vector<int8_t> own;
  long unwatched = 0;
  for (uint64_t i = 0; i < 2000; ++i) {
    const bool watch = leader->watch_next(kKey);
    const int s = leader->decide_at(kKey, kBytes, cost, i, kOwn);
    own.push_back(int8_t(s));
    RanKnobs facts{ran(s) / 3, ran(s) % 3, 2};
    facts.watched = watch;
    unwatched += !watch;
    leader->observe_ran(kKey, facts,
                        watch ? two_arm_latency(ran(s)) : std::numeric_limits<double>::quiet_NaN(),
                        LatencySink::kOldestCall);
  }
  // The follower asks for the same calls afterwards: the memo answers, the same decisions.
  const std::vector<int8_t> follower = windows(*leader, 0, 2000, table.prior());
  EXPECT_EQ(std::vector<int8_t>(follower.begin(), follower.begin() + 2000), own);
  EXPECT_GT(unwatched, 1000);
  EXPECT_EQ(leader->unwatched_calls(), uint64_t(unwatched));
  // Arrivals stay numbered by call: the decisions learned the faster arm.
  long best = 0;
  for (size_t i = 1000; i < own.size(); ++i) best += own[i] == 5;
  EXPECT_GT(best, 900);
}
