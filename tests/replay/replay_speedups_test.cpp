// The CPU engine's speed-ups must not change a bit: replays stepped side by side
// (replay_batch.hpp), UCB1's table of sqrt(2 ln t) and Thompson sampling's precomputed logs of the
// samples (exploration_table.hpp). Each is compared
// with the plain replay_one() path, step by step where a trace exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ncclbot/core/portable_math.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/exploration_table.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay_batch.hpp"
#include "support/same_bits.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

using ncclbot::test::same_bits;

// Contexts with 2..9 arms, 4 samples each, a prior on every arm (a sweep has one on all or on
// none; cold starts come from n0 = 0), latencies spanning two orders of magnitude.
Sweep mixed_sweep() {
  std::mt19937 gen(17);
  std::uniform_real_distribution<float> u(1.0f, 100.0f);
  std::vector<TinyContext> cs;
  for (int c = 0; c < 8; ++c) {
    TinyContext tc{tiny_context(1 + c % 4, uint64_t(1) << (4 + c)), {}};
    const int arms = 2 + c;
    for (int a = 0; a < arms; ++a) {
      const float scale = a % 2 ? 1.0f : 10.0f;
      TinyArm arm{a * 2, {scale * u(gen), scale * u(gen), scale * u(gen), scale * u(gen)}};
      arm.prior = scale * u(gen);
      tc.arms.push_back(arm);
    }
    cs.push_back(tc);
  }
  return tiny_sweep(cs);
}

ReplayTask task_of(const Sweep& s, int context, uint64_t seed, int horizon) {
  ReplayTask t;
  t.sweep = s.view();
  t.context = context;
  t.seed = seed;
  t.stream_id = 1000 + uint64_t(context);
  t.horizon = horizon;
  return t;
}

// Every pick and outcome of `plain`'s replays (each context, two seeds) are the same with the
// engine's aids (exploration_aids; `has_aids` says they were given) as without them.
template <typename Policy, typename HasAids>
void expect_aids_change_nothing(const Sweep& s, const Policy& plain, const std::string& what,
                                HasAids has_aids) {
  for (int c = 0; c < s.num_contexts(); ++c)
    for (uint64_t seed : {1u, 7u}) {
      const ReplayTask task = task_of(s, c, seed, 300);
      Policy a_policy = plain, b_policy = plain;
      ReplayTask aided = task;
      aided.aids = exploration_aids(b_policy, task);
      ASSERT_TRUE(has_aids(aided.aids)) << what;
      std::vector<int> picks_plain, picks_aided;
      const ReplayOutcome a =
          replay_one(a_policy, task, [&](int, int slot, float) { picks_plain.push_back(slot); });
      const ReplayOutcome b =
          replay_one(b_policy, aided, [&](int, int slot, float) { picks_aided.push_back(slot); });
      ASSERT_EQ(picks_plain, picks_aided) << what << " context " << c;
      EXPECT_TRUE(same_bits(a.online_loss, b.online_loss)) << what;
      EXPECT_EQ(a.final_slot, b.final_slot) << what;
    }
}

}  // namespace

TEST(ExplorationTable, EntriesAreSqrtTwoLogOfTheRunningTotal) {
  // total0 = 4 arms x n0 = 0.1: 0.4 (not exact in binary), then +1.0 per play, as ArmStats adds.
  const double total0 = 4 * 0.1;
  const double* table = exploration_bonus_table(total0, 50);
  double t = total0;
  for (int p = 0; p < 50; ++p) {
    EXPECT_TRUE(same_bits(table[p], exploration_bonus(t))) << p;
    if (t > 1.0) {
      EXPECT_TRUE(same_bits(table[p], std::sqrt(2.0 * portable_log(t)))) << p;
    }
    t += 1.0;
  }
  // Below one pull in total there is no exploration (ln t < 0 would make the root NaN).
  EXPECT_EQ(table[0], 0.0);
  // Independent check of the values themselves against libm: sqrt(2 ln 10.4) at p = 10.
  EXPECT_NEAR(table[10], std::sqrt(2.0 * std::log(10.4)), 1e-14);
  // The same start gives the cached table; another start another one.
  EXPECT_EQ(exploration_bonus_table(total0, 50), table);
  EXPECT_NE(exploration_bonus_table(total0 + 1.0, 50), table);
}

TEST(ExplorationTable, Ucb1PicksAreIdenticalWithAndWithoutTheTable) {
  const Sweep s = mixed_sweep();
  for (const PolicySpec& p : parse_policy_grid("ucb1:c=0.1|0.5|2,n0=0|0.3|4")) {
    Ucb1Policy plain{};
    plain.params = {p.config.c, p.config.n0};
    expect_aids_change_nothing(s, plain, p.text,
                               [](const SelectAids& a) { return a.exploration != nullptr; });
  }
}

// Thompson sampling learns on the log scale: with the engine's precomputed logs of the samples it
// picks exactly as when it takes each log itself.
TEST(SampleLogs, ThompsonPicksAreIdenticalWithAndWithoutThem) {
  const Sweep s = mixed_sweep();
  for (const PolicySpec& p : parse_policy_grid("thompson:n0=0|1|4,sigma=0.05|0.3")) {
    ThompsonPolicy plain{};
    plain.params = {p.config.n0, p.config.sigma};
    expect_aids_change_nothing(s, plain, p.text,
                               [](const SelectAids& a) { return a.sample_logs != nullptr; });
  }
}

TEST(SampleLogs, EntriesAreThePortableLogOfEachSample) {
  const Sweep s = mixed_sweep();
  const SweepView v = s.view();
  for (int c = 0; c < s.num_contexts(); ++c) {
    const double* logs = sample_log_table(v, c);
    for (int slot = 0; slot < kNumArms; ++slot)
      for (int r = 0; r < v.samples; ++r) {
        const double x = double(v.sample(c, slot, r));
        if (std::isnan(x)) continue;
        ASSERT_TRUE(same_bits(logs[slot * v.samples + r], portable_log(x))) << c << " " << slot << " " << r;
        ASSERT_NEAR(logs[slot * v.samples + r], std::log(x), 1e-15 * std::fabs(std::log(x)) + 1e-300);
      }
  }
}

TEST(ExplorationTable, ATableForAnotherStartIsDropped) {
  const Sweep s = mixed_sweep();
  const ReplayTask task = task_of(s, 5, 3, 200);
  Ucb1Policy plain{};
  plain.params = {0.5, 4.0};
  // A table whose entries are all 0 (no exploration at all), claimed for a start total of 1e9:
  // the policy must see that it does not belong to this context and compute the bonus itself.
  std::vector<double> zeros(200, 0.0);
  ReplayTask wrong = task;
  wrong.aids.exploration = zeros.data();
  wrong.aids.exploration_total0 = 1e9;
  std::vector<int> a, b;
  Ucb1Policy p1 = plain, p2 = plain, p3 = plain;
  replay_one(p1, task, [&](int, int slot, float) { a.push_back(slot); });
  replay_one(p2, wrong, [&](int, int slot, float) { b.push_back(slot); });
  EXPECT_EQ(a, b);
  // Sanity of the check itself: the same zero table claimed for the right start changes the picks.
  ReplayTask claimed = task;
  claimed.aids = exploration_aids(plain, task);
  claimed.aids.exploration = zeros.data();
  std::vector<int> z;
  replay_one(p3, claimed, [&](int, int slot, float) { z.push_back(slot); });
  EXPECT_NE(a, z);
}

TEST(ReplayBatch, EveryPolicyGivesReplayOnesOutcomesBitForBit) {
  const Sweep s = mixed_sweep();
  const char* specs[] = {"auto",
                         "oracle",
                         "random",
                         "greedy:n0=2",
                         "egreedy:eps=0.2,decay=0.01,n0=1",
                         "ucb1:c=0.3,n0=0|4",
                         "thompson:n0=0|2",
                         "etc:m=2",
                         "swucb:c=0.2,window=20,n0=1"};
  for (const char* spec : specs)
    for (const PolicySpec& p : parse_policy_grid(spec))
      for (int c = 0; c < s.num_contexts(); ++c) {
        visit_policy(p.config, [&](auto policy) {
          constexpr int B = 3;
          decltype(policy) group[B];
          ReplayTask tasks[B];
          ReplayOutcome batched[B];
          for (int b = 0; b < B; ++b) {
            group[b] = policy;
            tasks[b] = task_of(s, c, 11 + uint64_t(b), 97);
          }
          replay_batch<B>(group, tasks, batched);
          for (int b = 0; b < B; ++b) {
            auto alone = policy;
            const ReplayOutcome o = replay_one(alone, tasks[b]);
            EXPECT_TRUE(same_bits(o.online_loss, batched[b].online_loss)) << p.text << " context " << c;
            EXPECT_TRUE(same_bits(o.final_loss, batched[b].final_loss)) << p.text;
            EXPECT_EQ(o.final_slot, batched[b].final_slot) << p.text;
          }
          return 0;
        });
      }
}

// The engine as a whole (seed groups of four plus a remainder, the table attached per context):
// every per-seed loss equals a plain replay_one() of that seed.
TEST(ReplayBatch, EnginePerSeedLossesEqualPlainReplays) {
  const Sweep s = mixed_sweep();
  ReplayJob job;
  job.sweep = &s;
  for (int c = 0; c < s.num_contexts(); ++c) job.contexts.push_back(c);
  for (const char* spec : {"ucb1:c=0.2,n0=0|4", "thompson:n0=1", "egreedy:eps=0.1,decay=0,n0=1"})
    for (auto& p : parse_policy_grid(spec)) job.configs.push_back(p);
  job.seeds = 6;  // one group of four and a remainder of two
  job.seed_base = 40;
  job.horizon = 120;
  job.threads = 2;
  job.keep_per_seed = true;
  const ReplayResults r = run_cpu_replay(job);
  for (int cfg = 0; cfg < int(job.configs.size()); ++cfg)
    for (int seed = 0; seed < job.seeds; ++seed) {
      const std::vector<double> online = r.online_of(cfg, seed), final_loss = r.final_of(cfg, seed);
      for (int c = 0; c < s.num_contexts(); ++c) {
        ReplayTask task = task_of(s, c, job.seed_base + uint64_t(seed), job.horizon);
        task.stream_id = context_stream_id(s.context(c));
        const ReplayOutcome o = visit_policy(job.configs[size_t(cfg)].config,
                                             [&](auto policy) { return replay_one(policy, task); });
        EXPECT_TRUE(same_bits(online[size_t(c)], o.online_loss))
            << job.configs[size_t(cfg)].text << " seed " << seed;
        EXPECT_TRUE(same_bits(final_loss[size_t(c)], o.final_loss)) << job.configs[size_t(cfg)].text;
      }
    }
}

// Every way of the lower-confidence argmin (the scalar scan, the host's scan in pairs, the GPU's
// chains) against the two-pass definition (fill the index array, take the first index of the
// smallest value by a plain loop), on random states with many exact ties (means and counts from
// small sets) and every arm count; and min_of() against a plain loop on the same means.
TEST(LowerConfidenceArgmin, EveryWayEqualsTheTwoPassDefinition) {
  std::mt19937 gen(5);
  std::uniform_int_distribution<int> pick(0, 3);
  for (int trial = 0; trial < 20000; ++trial) {
    ArmStats stats{};
    double inv_sqrt_count[kNumArms];
    stats.arms.k = 1 + trial % kNumNcclArms;
    for (int j = 0; j < stats.arms.k; ++j) {
      stats.mean[j] = 10.0 + pick(gen);
      inv_sqrt_count[j] = 1.0 / std::sqrt(1.0 + pick(gen));
    }
    const double scale = trial % 3 == 0 ? 0.0 : 0.5 * pick(gen);
    double index[kNumArms];
    for (int j = 0; j < stats.arms.k; ++j) index[j] = stats.mean[j] - scale * inv_sqrt_count[j];
    int want = 0;
    double lowest_mean = stats.mean[0];
    for (int j = 1; j < stats.arms.k; ++j) {
      if (index[j] < index[want]) want = j;
      lowest_mean = std::min(lowest_mean, stats.mean[j]);
    }
    ASSERT_EQ(lower_confidence_argmin_scan(stats, inv_sqrt_count, scale), want) << "trial " << trial;
    ASSERT_EQ(lower_confidence_argmin_pairs(stats, inv_sqrt_count, scale), want) << "trial " << trial;
    ASSERT_EQ(lower_confidence_argmin_chains(stats, inv_sqrt_count, scale), want) << "trial " << trial;
    ASSERT_EQ(lower_confidence_argmin(stats, inv_sqrt_count, scale), want) << "trial " << trial;
    ASSERT_EQ(first_index_of_min(index, stats.arms.k), want) << "trial " << trial;
    ASSERT_EQ(min_of(stats.mean, stats.arms.k), lowest_mean) << "trial " << trial;
  }
}
