// Shard slicing and sliced replay: the slices of any N tile the units once, in order, and the
// seed-averaged losses of a slice are bit-identical to the same units of the unsharded run.
#include "ncclbot/scale/shard.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ncclbot/core/error.hpp"
#include "support/same_bits.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

Sweep random_sweep(unsigned seed, int contexts) {
  return random_tiny_sweep(seed, contexts, false);
}

using ncclbot::test::same_bits;

}  // namespace

TEST(Shard, ParsesIndexOverCount) {
  const ShardSpec s = parse_shard("2/8");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 8);
  EXPECT_EQ(parse_shard("0/1").count, 1);
  for (const char* bad : {"", "3", "8/8", "-1/4", "1/0", "a/4", "1/4x", "1/", "/4", "1 /4"})
    EXPECT_THROW(parse_shard(bad), UsageError) << bad;
}

TEST(Shard, UnitsAreDealtLikeCardsAndCoverEachOnce) {
  // By hand: U = 10, N = 3 -> shard 0 = {0, 3, 6, 9}, shard 1 = {1, 4, 7}, shard 2 = {2, 5, 8}.
  EXPECT_EQ(shard_units(10, {0, 3}).size(), 4u);
  EXPECT_EQ(shard_units(10, {0, 3}).unit(3), 9u);
  EXPECT_EQ(shard_units(10, {1, 3}).size(), 3u);
  EXPECT_EQ(shard_units(10, {1, 3}).unit(2), 7u);
  EXPECT_EQ(shard_units(10, {2, 3}).size(), 3u);
  EXPECT_EQ(shard_units(10, {2, 3}).unit(0), 2u);
  // More shards than units: the last ones are empty.
  EXPECT_EQ(shard_units(2, {1, 5}).size(), 1u);
  EXPECT_EQ(shard_units(2, {2, 5}).size(), 0u);
  for (size_t u : {0, 1, 7, 100, 1001})
    for (int n : {1, 2, 3, 7, 64}) {
      std::vector<int> seen(u, 0);
      for (int i = 0; i < n; ++i) {
        const ShardUnits s = shard_units(u, {i, n});
        for (size_t k = 0; k < s.size(); ++k) {
          ASSERT_LT(s.unit(k), u);
          if (k) {
            EXPECT_LT(s.unit(k - 1), s.unit(k));
          }
          ++seen[s.unit(k)];
        }
      }
      for (size_t k = 0; k < u; ++k) EXPECT_EQ(seen[k], 1) << "U=" << u << " N=" << n << " unit " << k;
    }
}

TEST(Shard, SlicesReproduceTheUnshardedLossesBitForBit) {
  const Sweep s = random_sweep(11, 7);
  ReplayJob job;
  job.sweep = &s;
  for (int c = 0; c < s.num_contexts(); ++c) job.contexts.push_back(c);
  for (const char* spec : {"ucb1:c=0.05|0.2", "thompson", "egreedy"})
    for (auto& p : parse_policy_grid(spec)) job.configs.push_back(p);
  job.seeds = 4;
  job.seed_base = 9;
  job.horizon = 60;
  job.threads = 2;
  // Once as given, once with delayed feedback and per-config call costs, which a slice must keep.
  for (const bool deployed : {false, true}) {
    if (deployed) {
      job.delay = 3;
      job.call_cost_us = {0.0, 0.05, 0.2, 0.01};
    }
    const ReplayResults whole = run_cpu_replay(job);
    const size_t units = job.configs.size() * job.contexts.size();  // 4 x 7 = 28
    for (int n : {1, 2, 3, 5, 40}) {
      std::vector<double> online(units, -1.0), final_loss(units, -1.0);
      for (int i = 0; i < n; ++i) {
        const ReplaySlice slice = run_replay_units(job, {i, n}, ReplayBackend::kCpu);
        ASSERT_EQ(slice.online.size(), slice.units.size());
        for (size_t k = 0; k < slice.units.size(); ++k) {
          online[slice.units.unit(k)] = slice.online[k];
          final_loss[slice.units.unit(k)] = slice.final_loss[k];
        }
      }
      for (size_t k = 0; k < units; ++k) {
        EXPECT_TRUE(same_bits(online[k], whole.online[k])) << "N=" << n << " unit " << k;
        EXPECT_TRUE(same_bits(final_loss[k], whole.final_loss[k])) << "N=" << n << " unit " << k;
      }
    }
  }
}

TEST(Shard, EmptySliceStillRejectsBadJobs) {
  const Sweep s = random_sweep(1, 2);
  ReplayJob job;
  job.sweep = &s;
  job.contexts = {0, 1};
  job.configs = parse_policy_grid("random");
  job.horizon = 0;
  EXPECT_THROW(run_replay_units(job, {4, 5}, ReplayBackend::kCpu), UsageError);  // an empty shard
  job.horizon = 5;
  EXPECT_THROW(run_replay_units(job, {3, 3}, ReplayBackend::kCpu), UsageError);
  EXPECT_EQ(run_replay_units(job, {4, 5}, ReplayBackend::kCpu).online.size(), 0u);  // 2 units only
}

TEST(Shard, PerSeedLossesOfSlicesMatchTheUnshardedRun) {
  const Sweep s = random_sweep(5, 5);
  ReplayJob job;
  job.sweep = &s;
  for (int c = 0; c < s.num_contexts(); ++c) job.contexts.push_back(c);
  for (const char* spec : {"ucb1:c=0.1", "thompson", "egreedy"})
    for (auto& p : parse_policy_grid(spec)) job.configs.push_back(p);
  job.seeds = 3;
  job.horizon = 40;
  job.keep_per_seed = true;
  const ReplayResults whole = run_cpu_replay(job);
  const size_t n_ctx = job.contexts.size();
  for (int n : {2, 4}) {
    for (int shard = 0; shard < n; ++shard) {
      const ReplaySlice slice = run_replay_units(job, {shard, n}, ReplayBackend::kCpu);
      ASSERT_EQ(slice.seeds_kept, 3);
      ASSERT_EQ(slice.online_per_seed.size(), slice.units.size() * 3);
      for (size_t k = 0; k < slice.units.size(); ++k) {
        const size_t unit = slice.units.unit(k), cfg = unit / n_ctx, i = unit % n_ctx;
        for (size_t seed = 0; seed < 3; ++seed) {
          const size_t at = (cfg * 3 + seed) * n_ctx + i;
          EXPECT_TRUE(same_bits(slice.online_per_seed[k * 3 + seed], whole.online_per_seed[at]));
          EXPECT_TRUE(same_bits(slice.final_per_seed[k * 3 + seed], whole.final_per_seed[at]));
        }
      }
    }
  }
}
