// Delayed feedback (replay/replay.hpp, ReplayTask::delay): the latency of call t reaches the policy
// just before call t + D + 1 selects, and nothing changes its state in between.
#include <gtest/gtest.h>

#include <vector>

#include "ncclbot/core/error.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/leader_protocol.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay.hpp"
#include "ncclbot/replay/stream_id.hpp"
#include "support/policy_trace.hpp"
#include "support/same_bits.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

// Records, for each select, how many latencies had arrived, and every latency it was given.
struct SpyPolicy {
  struct Params {};
  Params params;
  std::vector<int>* arrived_before_select;
  std::vector<double>* received;
  int arrived = 0;
  void reset(const PolicyContext&) { arrived = 0; }
  int select(StepRandom& rng) {
    arrived_before_select->push_back(arrived);
    return int(rng.next_u32() % 3);  // slots 0..2, all valid below
  }
  void update(int, double latency_us) {
    ++arrived;
    received->push_back(latency_us);
  }
  int commit(StepRandom&) const { return 0; }
};

// What a SpyPolicy saw in one replay of `task` (seed 5, stream 77), and what the job played.
struct SpyRun {
  std::vector<int> arrived_before_select;
  std::vector<double> received;
  std::vector<int> picks;
  std::vector<float> observed;
};

SpyRun spy_replay(ReplayTask task) {
  SpyRun r;
  SpyPolicy spy{{}, &r.arrived_before_select, &r.received};
  task.seed = 5;
  task.stream_id = 77;
  replay_one(spy, task, [&](int, int slot, float x) {
    r.picks.push_back(slot);
    r.observed.push_back(x);
  });
  return r;
}

double online_loss(const PolicyConfig& cfg, const Sweep& s, int delay, int horizon) {
  ReplayTask task;
  task.sweep = s.view();
  task.horizon = horizon;
  task.delay = delay;
  task.seed = 3;
  task.stream_id = 9;
  return visit_policy(cfg, [&](auto& p) { return replay_one(p, task).online_loss; });
}

}  // namespace

// Cold greedy on arms of 15, 12 and 10 µs (losses 0.5, 0.2, 0), T = 20. An arm with a pull pending
// is not untried (greedy.hpp, select_pending); while every unobserved arm has one, the best
// observed arm, or with none observed the fewest pulls (lowest slot).
//   D = 0: plays 0, 1, 2, then 2 forever: (0.5 + 0.2) / 20 = 0.035.
//   D = 2: calls 0-2 probe 0, 1, 2; call 0's latency arrives before call 3, which plays the best
//          observed arm 0 (1 and 2 pending); call 1's before call 4: arm 1 (12 < 15); call 2's
//          before call 5: no arm untried, arm 2 from then on: (2 * 0.5 + 2 * 0.2) / 20 = 0.07.
//   D = 5: calls 0-2 probe 0, 1, 2, calls 3-5 again 0, 1, 2 (none observed: the fewest pulls),
//          call 6 arm 0 (only 0 observed), call 7 arm 1, then arm 2: (3 * 0.5 + 3 * 0.2) / 20.
TEST(DelayedFeedback, ColdGreedyOnThreeArmsLosesWhatTheHandTraceSays) {
  PolicyConfig greedy;
  greedy.kind = PolicyKind::kGreedy;
  greedy.n0 = 0.0;
  const Sweep s = three_arms_15_12_10();
  EXPECT_DOUBLE_EQ(online_loss(greedy, s, 0, 20), (0.5 + 0.2) / 20);
  EXPECT_DOUBLE_EQ(online_loss(greedy, s, 2, 20), (2 * 0.5 + 2 * 0.2) / 20);
  EXPECT_DOUBLE_EQ(online_loss(greedy, s, 5, 20), (3 * 0.5 + 3 * 0.2) / 20);
}

TEST(DelayedFeedback, CallTsLatencyArrivesJustBeforeCallTPlusDPlusOneAndInOrder) {
  const Sweep s = tiny_sweep(
      {{tiny_context(1, 1024),
        {{0, {15.0f, 16.0f, 17.0f}, {}}, {1, {12.0f, 13.0f, 14.0f}, {}}, {2, {10.0f, 11.0f, 9.0f}, {}}}}});
  for (int delay : {0, 1, 3, 7, 40}) {
    ReplayTask task;
    task.sweep = s.view();
    task.horizon = 30;
    task.delay = delay;
    const auto [arrived, received, picks, observed] = spy_replay(task);
    ASSERT_EQ(arrived.size(), 30u);
    for (int t = 0; t < 30; ++t)
      EXPECT_EQ(arrived[size_t(t)], std::max(0, t - delay)) << "D " << delay << " t " << t;
    // The policy received exactly the latencies the job paid, in call order, minus the last D.
    const size_t n = size_t(std::max(0, 30 - delay));
    ASSERT_EQ(received.size(), n) << delay;
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(received[i], double(observed[i])) << "D " << delay << " call " << i;
  }
}

// Decision windows (ReplayTask::window = W): call t is decided with the latencies of the calls
// before max(0, floor(t / W) * W - D), so the state changes only where a window starts.
TEST(DelayedFeedback, AWindowsCallsAreDecidedWithTheLatenciesBeforeItsCut) {
  const Sweep s = tiny_sweep(
      {{tiny_context(1, 1024),
        {{0, {15.0f, 16.0f, 17.0f}, {}}, {1, {12.0f, 13.0f, 14.0f}, {}}, {2, {10.0f, 11.0f, 9.0f}, {}}}}});
  struct Schedule {
    int window, delay;
  };
  for (const Schedule sc : {Schedule{8, 12}, Schedule{8, 0}, Schedule{4, 3}, Schedule{1, 5}}) {
    ReplayTask task;
    task.sweep = s.view();
    task.horizon = 43;
    task.delay = sc.delay;
    task.window = sc.window;
    const auto [arrived, received, picks, observed] = spy_replay(task);
    ASSERT_EQ(arrived.size(), 43u);
    for (int t = 0; t < 43; ++t)
      EXPECT_EQ(arrived[size_t(t)], std::max(0, t / sc.window * sc.window - sc.delay))
          << "W " << sc.window << " D " << sc.delay << " t " << t;
    // The final commit sees the latencies before 40 - D (T = 43 is in the window starting at 40).
    const size_t n = size_t(std::max(0, 43 / sc.window * sc.window - sc.delay));
    ASSERT_EQ(received.size(), n);
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(received[i], double(observed[i]));
  }
  // The plugin's protocol (replay/leader_protocol.hpp) by hand: W = 4, D = 8.
  ReplayTask leader;
  leader.window = kLeaderWindow;
  leader.delay = kLeaderPrefetch;
  for (const auto& [t, end] :
       std::vector<std::pair<int, int>>{{0, 0}, {11, 0}, {12, 4}, {15, 4}, {16, 8}, {102, 92}}) {
    EXPECT_EQ(DelayedReplayCursor::feedback_end(leader, t), end) << t;
    EXPECT_EQ(leader_feedback_end(uint64_t(t)), uint64_t(end)) << t;
  }
}

// A policy start S (the plugin's leader mode): calls before S play AUTO's arm (the prior's argmin
// by NCCL's rule), the policy first selects at call S having seen every latency due by then, and
// its draws are those of a replay started at call 0 (step t - S).
TEST(DelayedFeedback, BeforeThePolicyStartsNcclsPickPlaysAndTheStepsCountFromTheStart) {
  const Sweep s =
      tiny_sweep({{tiny_context(1, 1024),
                   {{0, {15.0f, 16.0f}, 14.0f}, {1, {12.0f, 13.0f}, 9.0f}, {2, {10.0f, 11.0f}, 20.0f}}}});
  for (const int start : {1, 5, 16}) {
    ReplayTask task;
    task.sweep = s.view();
    task.horizon = 40;
    task.policy_start = start;
    const SpyRun run = spy_replay(task);
    const auto& arrived = run.arrived_before_select;
    const auto& picks = run.picks;
    ASSERT_EQ(arrived.size(), size_t(40 - start));
    for (int t = 0; t < start; ++t) EXPECT_EQ(picks[size_t(t)], 1) << t;                // prior 9 us: slot 1
    for (size_t k = 0; k < arrived.size(); ++k) EXPECT_EQ(arrived[k], start + int(k));  // D = 0
    // The spy picks from its step's draw: the same picks as a replay without a start, shifted.
    task.policy_start = 0;
    task.horizon = 40 - start;
    EXPECT_EQ(std::vector<int>(picks.begin() + start, picks.end()), spy_replay(task).picks) << start;
  }
}

// Pending-aware UCB1 (policy_context.hpp) in a replay: warm UCB1 (c = 1, n0 = 1) on priors of 10
// and 11 µs decides its first window of 4 from the prior alone, spreading it A, B, A, B as
// tests/policy/pending_pulls_test.cpp derives; a plain delay of 3 decides the same first 4 calls
// the same way (no latency has arrived before call 4 either way).
TEST(DelayedFeedback, PendingAwareUcb1SpreadsItsFirstWindow) {
  const Sweep s =
      tiny_sweep({{tiny_context(1, 1024), {{0, {10.0f, 10.5f}, 10.0f}, {1, {11.0f, 11.5f}, 11.0f}}}});
  PolicyConfig cfg;
  cfg.kind = PolicyKind::kUcb1;
  cfg.c = 1.0;
  cfg.n0 = 1.0;
  for (const auto& [window, delay] : std::vector<std::pair<int, int>>{{4, 0}, {1, 3}}) {
    ReplayTask task;
    task.sweep = s.view();
    task.horizon = 4;
    task.window = window;
    task.delay = delay;
    task.seed = 1;
    task.stream_id = 2;
    std::vector<int> picks;
    visit_policy(cfg, [&](auto& p) {
      return replay_one(p, task, [&](int, int slot, float) { picks.push_back(slot); });
    });
    EXPECT_EQ(picks, (std::vector<int>{0, 1, 0, 1})) << "W " << window << " D " << delay;
  }
}

// The CPU engine (which steps undelayed seeds four at a time) gives every delayed seed the outcome
// of a plain replay_one, for every policy, and a delay of 0 is today's replay.
TEST(DelayedFeedback, CpuEngineEqualsReplayOneForEveryPolicyAndDelay) {
  const Sweep s = random_tiny_sweep(3, 6, true);
  struct Schedule {
    int delay, window, start;
  };
  for (const auto& [delay, window, start] : std::vector<Schedule>{
           {0, 1, 0}, {1, 1, 0}, {16, 1, 0}, {12, 8, 0}, {0, 5, 0}, {12, 8, 16}, {0, 1, 3}}) {
    ReplayJob job;
    job.sweep = &s;
    for (int c = 0; c < s.num_contexts(); ++c) job.contexts.push_back(c);
    for (const char* spec : {"greedy:n0=0|1", "egreedy:eps=0.2", "ucb1:c=0.3,n0=0|4", "thompson:n0=2",
                             "etc:m=2", "swucb:window=20", "ducb:gamma=0.9"})
      for (auto& p : parse_policy_grid(spec)) job.configs.push_back(p);
    job.seeds = 6;
    job.horizon = 120;
    job.delay = delay;
    job.window = window;
    job.policy_start = start;
    job.threads = 2;
    job.keep_per_seed = true;
    const ReplayResults r = run_cpu_replay(job);
    for (size_t cfg = 0; cfg < job.configs.size(); ++cfg)
      for (int seed = 0; seed < job.seeds; ++seed)
        for (int i = 0; i < s.num_contexts(); ++i) {
          ReplayTask task;
          task.sweep = s.view();
          task.context = i;
          task.seed = uint64_t(seed);
          task.stream_id = context_stream_id(s.context(i));
          task.horizon = job.horizon;
          task.delay = delay;
          task.window = window;
          task.policy_start = start;
          const ReplayOutcome o =
              visit_policy(job.configs[cfg].config, [&](auto& p) { return replay_one(p, task); });
          const size_t at = (cfg * size_t(job.seeds) + size_t(seed)) * size_t(s.num_contexts()) + size_t(i);
          ASSERT_TRUE(same_bits(r.online_per_seed[at], o.online_loss))
              << job.configs[cfg].text << " D " << delay;
          ASSERT_TRUE(same_bits(r.final_per_seed[at], o.final_loss))
              << job.configs[cfg].text << " D " << delay;
        }
  }
}

TEST(DelayedFeedback, DelayOutOfRangeIsAUsageError) {
  const Sweep s = three_arms_15_12_10();
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0};
  job.configs = parse_policy_grid("greedy");
  job.horizon = 10;
  job.delay = kMaxReplayDelay + 1;
  EXPECT_THROW(run_cpu_replay(job), UsageError);
  job.delay = -1;
  EXPECT_THROW(run_cpu_replay(job), UsageError);
  job.delay = 0;
  job.window = 0;
  EXPECT_THROW(run_cpu_replay(job), UsageError);
  job.window = 8;
  job.delay = kMaxReplayDelay - 7;  // W - 1 + D = kMaxReplayDelay: the most the ring holds
  EXPECT_NO_THROW(run_cpu_replay(job));
  job.delay = kMaxReplayDelay - 6;
  EXPECT_THROW(run_cpu_replay(job), UsageError);
}
