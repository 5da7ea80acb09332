// The cost of watching (deployed/observation_cost.hpp, policy/watch_rule.hpp): the table's rows and
// errors, the charge on watched calls by closed form, and a watch rule's calls.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ncclbot/core/error.hpp"
#include "ncclbot/deployed/observation_cost.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay.hpp"
#include "support/same_bits.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

long line_of_error(const std::string& text) {
  try {
    parse_observation_costs(text, "obs.csv");
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "obs.csv");
    return e.line();
  }
  return -1;
}

const std::string kHeader = "nccl,collective,min_bytes,max_bytes,busbw_loss\n";

// Always plays arm 0 and counts the latencies it is given (a test's own policy type).
struct CountingPolicy {
  static constexpr bool kDeterministic = true;
  int updates = 0;
  void reset(const PolicyContext&) { updates = 0; }
  int select(StepRandom&) { return 0; }
  void update(int, double) { ++updates; }
  int commit(StepRandom&) { return 0; }
};

ReplayTask one_arm_task(const Sweep& s, double f, WatchRule rule, int horizon, int delay = 0) {
  ReplayTask task;
  task.sweep = s.view();
  task.horizon = horizon;
  task.delay = delay;
  task.observation_cost = f;
  task.watch = rule;
  task.seed = 11;
  task.stream_id = 5;
  return task;
}

}  // namespace

TEST(ObservationCost, TheCompiledTableReadsAndPricesAWatchedCallFromItsBandwidthLoss) {
  ASSERT_FALSE(compiled_observation_costs().empty());
  // NVIDIA/nccl #2355: 4.3-13.3% on 2.31.2 for 128 KB-4 MB AllReduce, midpoint 8.8% of bus bandwidth:
  // a call takes 1 / (1 - 0.088) of its time, 0.088 / 0.912 = 0.0964912... more (by hand).
  EXPECT_NEAR(observation_cost_fraction("2.31", tiny_context(2, 1 << 20)), 0.088 / 0.912, 1e-15);
  EXPECT_NEAR(observation_cost_fraction("2.31", tiny_context(2, 131072)), 0.088 / 0.912, 1e-15);
  EXPECT_NEAR(observation_cost_fraction("2.31", tiny_context(2, 4194304)), 0.088 / 0.912, 1e-15);
  EXPECT_NEAR(observation_cost_fraction("2.29", tiny_context(2, 1 << 20)), 0.006 / 0.994, 1e-15);
  // Nothing measured: outside the band, another collective, a version without rows.
  EXPECT_EQ(observation_cost_fraction("2.31", tiny_context(2, 131071)), 0.0);
  EXPECT_EQ(observation_cost_fraction("2.31", tiny_context(2, 4194305)), 0.0);
  EXPECT_EQ(observation_cost_fraction("2.31", tiny_context(2, 1 << 20, Collective::kAllGather)), 0.0);
  EXPECT_EQ(observation_cost_fraction("2.30", tiny_context(2, 1 << 20)), 0.0);
  EXPECT_TRUE(observation_cost_measured("2.32"));
  EXPECT_FALSE(observation_cost_measured("2.30"));
}

TEST(ObservationCost, ABadTableIsRefusedWithItsLine) {
  EXPECT_EQ(
      parse_observation_costs("# note\n" + kHeader + "2.31,allreduce,1,2,0.1\n2.31,allgather,1,2,0\n", "x")
          .size(),
      2u);
  EXPECT_EQ(line_of_error("nccl,collective\n"), 1);                     // another header
  EXPECT_EQ(line_of_error(kHeader + "2.31,allreduce,1,2\n"), 2);        // a field short
  EXPECT_EQ(line_of_error(kHeader + "2,allreduce,1,2,0.1\n"), 2);       // no minor version
  EXPECT_EQ(line_of_error(kHeader + "2.31.3,allreduce,1,2,0.1\n"), 2);  // a patch release
  EXPECT_EQ(line_of_error(kHeader + "2.31,allsum,1,2,0.1\n"), 2);       // no such collective
  EXPECT_EQ(line_of_error(kHeader + "2.31,allreduce,3,2,0.1\n"), 2);    // sizes out of order
  EXPECT_EQ(line_of_error(kHeader + "2.31,allreduce,1,2,1\n"), 2);      // all bandwidth lost
  EXPECT_EQ(line_of_error(kHeader + "2.31,allreduce,1,2,-0.1\n"), 2);   // negative
  EXPECT_EQ(line_of_error(kHeader + "\n2.31,allreduce,1,9,0.1\n2.31,allreduce,9,20,0.1\n"), 4);  // overlap
  EXPECT_EQ(line_of_error("# only a comment\n"), 0);
}

// What a study's checkpoints depend on is the rows, written out by hand here: comments and blank
// lines change nothing, a changed loss or band does.
TEST(ObservationCost, TheCheckpointsDependOnTheRowsNotTheComments) {
  const std::string rows = "2.31,allreduce,131072,4194304,0.088\n2.29,allgather,1,2,0.5\n";
  const std::string text =
      observation_costs_text(parse_observation_costs("# a note\n" + kHeader + "\n" + rows, "a"));
  EXPECT_EQ(text, "2.31,AllReduce,131072,4194304,0.088\n2.29,AllGather,1,2,0.5\n");
  EXPECT_EQ(observation_costs_text(parse_observation_costs(kHeader + rows + "# another\n", "b")), text);
  EXPECT_NE(observation_costs_text(parse_observation_costs(
                kHeader + "2.31,allreduce,131072,4194304,0.089\n2.29,allgather,1,2,0.5\n", "c")),
            text);
  EXPECT_NE(observation_costs_text(parse_observation_costs(
                kHeader + "2.31,allreduce,131072,4194305,0.088\n2.29,allgather,1,2,0.5\n", "d")),
            text);
}

TEST(ObservationCost, AnNcclVersionIsReadToItsMinorRelease) {
  EXPECT_EQ(nccl_minor_version("2.32", "--nccl-version"), "2.32");
  EXPECT_EQ(nccl_minor_version("2.32.3", "--nccl-version"), "2.32");
  EXPECT_EQ(nccl_minor_version("v2.31.2-1", "--nccl-version"), "2.31");
  for (const char* bad : {"", "2", "2.", ".31", "2.x", "2.32.", "2.32.x", "latest"})
    EXPECT_THROW(nccl_minor_version(bad, "--nccl-version"), UsageError) << bad;
}

// Cold greedy on 15, 12 and 10 us, T = 20 (call_cost_test.cpp): its plain losses sum to 0.7. With
// every call watched at f, call t costs l_t + f (l_t + 1): online = (0.7 (1 + f) + 20 f) / 20.
TEST(ObservationCost, EveryWatchedCallPaysItsOwnLatencyTimesF) {
  const Sweep s = three_arms_15_12_10();
  PolicyConfig greedy;
  greedy.kind = PolicyKind::kGreedy;
  greedy.n0 = 0.0;
  for (const double f : {0.0, 0.1, 0.25}) {
    ReplayTask task;
    task.sweep = s.view();
    task.horizon = 20;
    task.observation_cost = f;
    task.seed = 3;
    task.stream_id = 9;
    const ReplayOutcome o = visit_policy(greedy, [&](auto& p) { return replay_one(p, task); });
    EXPECT_NEAR(o.online_loss, (0.7 * (1 + f) + 20 * f) / 20, 1e-14) << f;
    EXPECT_EQ(o.observed, 20u);
    EXPECT_EQ(o.final_loss, 0.0);
  }
}

TEST(ObservationCost, TheEngineChargesOnlyThePoliciesThatWatch) {
  const Sweep s = three_arms_15_12_10();
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0};
  job.configs = {parse_policy_spec("ucb1:c=0.3,n0=0"), parse_policy_spec("random"),
                 parse_policy_spec("oracle")};
  job.seeds = 5;
  job.horizon = 40;
  const ReplayResults free = run_cpu_replay(job);
  job.observation_cost = {0.5};
  const ReplayResults charged = run_cpu_replay(job);
  // UCB1 watches: every call pays half of its own latency relative to the best, 0.5 (l_t + 1).
  EXPECT_NEAR(charged.online_at(0, 0), free.online_at(0, 0) * 1.5 + 0.5, 1e-12);
  EXPECT_TRUE(ncclbot::test::same_bits(charged.online_at(1, 0), free.online_at(1, 0)));
  EXPECT_TRUE(ncclbot::test::same_bits(charged.online_at(2, 0), free.online_at(2, 0)));
  EXPECT_EQ(charged.watched_at(0, 0), 1.0);
  // One fraction per sweep context, finite and >= 0.
  for (const std::vector<double>& bad :
       {std::vector<double>{0.1, 0.2}, std::vector<double>{-0.1}, std::vector<double>{std::nan("")}}) {
    job.observation_cost = bad;
    EXPECT_THROW(run_cpu_replay(job), UsageError);
  }
}

TEST(ObservationCost, ASweepIsChargedPerContextAndAFlatChargeReplacesTheTable) {
  const Sweep s = tiny_sweep({{tiny_context(2, 1 << 20), {{0, {10.0f}, {}}}},
                              {tiny_context(2, 64), {{0, {10.0f}, {}}}},
                              {tiny_context(2, 1 << 20, Collective::kAllGather), {{0, {10.0f}, {}}}}});
  // The sweep's contexts in its own order: find the 1 MiB all-reduce.
  ObservationCharge charge;
  charge.nccl = "2.31";
  const std::vector<double> f = observation_costs(s, charge);
  ASSERT_EQ(f.size(), 3u);
  for (int c = 0; c < 3; ++c) {
    const Context& ctx = s.context(c);
    const bool band = ctx.collective == Collective::kAllReduce && ctx.bytes == (1u << 20);
    EXPECT_NEAR(f[size_t(c)], band ? 0.088 / 0.912 : 0.0, 1e-15) << c;
  }
  charge.nccl = "2.30";  // nothing measured: nothing charged, and no list at all
  EXPECT_TRUE(observation_costs(s, charge).empty());
  charge.flat = 0.2;
  EXPECT_EQ(observation_costs(s, charge), (std::vector<double>{0.2, 0.2, 0.2}));
  charge.flat = 0.0;  // nothing charged: no list at all
  EXPECT_TRUE(observation_costs(s, charge).empty());
}

TEST(WatchRule, TheProbabilityFallsWithTheArmsLatenciesDownToTheFloor) {
  const WatchRule r{16, 0.02};
  EXPECT_EQ(watch_probability(r, 0), 1.0);
  EXPECT_EQ(watch_probability(r, 15), 1.0);
  EXPECT_EQ(watch_probability(r, 16), 1.0);
  EXPECT_EQ(watch_probability(r, 32), 0.5);
  EXPECT_EQ(watch_probability(r, 160), 0.1);
  EXPECT_EQ(watch_probability(r, 800), 0.02);
  EXPECT_EQ(watch_probability(r, 60000), 0.02);
  EXPECT_EQ(watch_probability(WatchRule{}, 60000), 1.0);         // no rule: every call
  EXPECT_EQ(watch_probability(WatchRule{16, 1.0}, 60000), 1.0);  // a floor of 1: every call
}

// One arm, f = 0.3, the best arm (loss 0): each watched call costs exactly 0.3, so the online loss
// is 0.3 * watched / T. K = 4, F = 0.5: after 8 latencies p = 0.5, so about half of 10,000 calls
// are watched (binomial sd 50: 5,000 +- 300 with the first few calls).
TEST(WatchRule, OnlyWatchedCallsPayAndReachThePolicyUndelayedOrDelayed) {
  const Sweep s = tiny_sweep({{tiny_context(1, 1024), {{0, {10.0f, 11.0f}, {}}}}});
  for (const int delay : {0, 3}) {
    CountingPolicy p;
    const ReplayOutcome o = replay_one(p, one_arm_task(s, 0.3, WatchRule{4, 0.5}, 10000, delay));
    EXPECT_GT(o.observed, 4700u) << delay;
    EXPECT_LT(o.observed, 5300u) << delay;
    // Delayed, the last `delay` calls' latencies would arrive after the horizon.
    EXPECT_LE(uint32_t(p.updates), o.observed) << delay;
    EXPECT_GE(uint32_t(p.updates) + uint32_t(delay), o.observed) << delay;
    EXPECT_NEAR(o.online_loss, 0.3 * o.observed / 10000.0, 1e-12) << delay;
  }
  // The coin has its own lane: the same seed watches the same calls whatever the delay.
  CountingPolicy a, b;
  EXPECT_EQ(replay_one(a, one_arm_task(s, 0.0, WatchRule{4, 0.5}, 500, 0)).observed,
            replay_one(b, one_arm_task(s, 0.0, WatchRule{4, 0.5}, 500, 3)).observed);
}

TEST(WatchRule, NoRuleWatchesEveryCallBitForBit) {
  const Sweep s = random_tiny_sweep(7, 6, true);
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0, 1, 2, 3, 4, 5};
  job.configs = {parse_policy_spec("ucb1:c=0.3,n0=1"),
                 parse_policy_spec("ucb1:c=0.3,n0=1@watch:full=1,floor=1")};
  job.seeds = 6;
  job.horizon = 300;
  const ReplayResults r = run_cpu_replay(job);
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(ncclbot::test::same_bits(r.online_at(0, i), r.online_at(1, i)));
    EXPECT_EQ(r.watched_at(0, i), 1.0);
    EXPECT_EQ(r.watched_at(1, i), 1.0);
  }
}

TEST(WatchRule, TheSpecModifierReadsItsOptionsAndRefusesBadOnes) {
  const PolicySpec d = parse_policy_spec("ucb1@watch");
  ASSERT_TRUE(d.watch);
  // The default docs/results.md "The cost of watching" chose: K = 4, F = 0.01.
  EXPECT_EQ(d.watch->full, 4u);
  EXPECT_EQ(d.watch->floor, 0.01);
  const PolicySpec p = parse_policy_spec("greedy@watch:floor=0.05,full=8");
  EXPECT_EQ(p.text, "greedy:n0=1@watch:full=8,floor=0.05");
  EXPECT_EQ(parse_policy_spec(p.text).text, p.text);
  EXPECT_FALSE(replay_only_modifier(p).empty());
  for (const char* bad :
       {"ucb1@watch:full=0", "ucb1@watch:full=1.5", "ucb1@watch:floor=0", "ucb1@watch:floor=2",
        "ucb1@watch:every=3", "ucb1@watch:full=4,full=5", "ucb1@watch@watch"})
    EXPECT_THROW(parse_policy_spec(bad), UsageError) << bad;
}
