// The on-device aggregation code (replay/replay_aggregate.hpp) run through Thrust's CPP backend by
// g++, against the CPU engine: the same header the CUDA engine runs with thrust::device must give
// the CPU engine's seed means and summarize_losses() bit for bit.
#include <gtest/gtest.h>
#include <thrust/system/cpp/execution_policy.h>

#include <cstring>
#include <random>

#include "gpu/random_sweep.hpp"
#include "ncclbot/replay/replay_aggregate.hpp"
#include "ncclbot/stats/bootstrap.hpp"
#include "support/same_bits.hpp"

using namespace ncclbot;

static_assert(THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CPP, "this test builds Thrust for the host");

namespace {

using ncclbot::test::same_bits;

std::vector<LossSummary> summarize_rows(const std::vector<double>& loss, int configs, int contexts) {
  std::vector<double> sorted(loss.size());
  std::vector<int> keys(loss.size());
  std::vector<LossSummary> out(static_cast<size_t>(configs));
  summarize_per_config(thrust::cpp::par, loss.data(), configs, contexts, sorted.data(), keys.data(),
                       out.data());
  return out;
}

}  // namespace

// Hand-computed: losses {0, 0.2, 0.05, 0.3}: mean 0.55 / 4 = 0.1375, max 0.3, two above 0.10;
// p99: sorted {0, 0.05, 0.2, 0.3}, position 0.99 * 3 = 2.97 -> 0.2 + (0.3 - 0.2) * 0.97 = 0.297.
// Second row {0.5}: every metric is 0.5, one above 0.10.
TEST(ReplayAggregateCpp, HandComputedSummaries) {
  const std::vector<double> loss = {0.0, 0.2, 0.05, 0.3};
  const auto s = summarize_rows(loss, 1, 4);
  EXPECT_DOUBLE_EQ(s[0].mean, 0.1375);
  EXPECT_DOUBLE_EQ(s[0].max, 0.3);
  EXPECT_EQ(s[0].above_10pct, 2);
  EXPECT_NEAR(s[0].p99, 0.297, 1e-15);
  const auto one = summarize_rows({0.5}, 1, 1);
  EXPECT_EQ(one[0].mean, 0.5);
  EXPECT_EQ(one[0].p99, 0.5);
  EXPECT_EQ(one[0].max, 0.5);
  EXPECT_EQ(one[0].above_10pct, 1);
}

// Rows are summarised independently: the segmented sort must not mix configs.
TEST(ReplayAggregateCpp, RowsDoNotMix) {
  const std::vector<double> loss = {0.9, 0.8, 0.7, 0.0, 0.01, 0.02};
  const auto s = summarize_rows(loss, 2, 3);
  EXPECT_EQ(s[0].max, 0.9);
  EXPECT_EQ(s[1].max, 0.02);
  EXPECT_NEAR(s[1].p99, 0.01 + 0.01 * 0.98, 1e-15);  // position 0.99 * 2 = 1.98
  EXPECT_EQ(s[1].above_10pct, 0);
}

// Random jobs: the CPU engine's per-seed losses aggregated by the Thrust code equal the CPU
// engine's own seed means and summarize_losses() of them, bit for bit.
TEST(ReplayAggregateCpp, MatchesCpuEngineBitForBit) {
  for (uint64_t seed : {11u, 12u, 13u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Sweep sweep = test::random_sweep(seed, 37, 5);
    ReplayJob job = test::random_job(sweep, test::every_policy(), seed, 7, 40);
    job.keep_per_seed = true;
    const ReplayResults cpu = run_cpu_replay(job);
    const int n_cfg = cpu.num_configs, n_ctx = cpu.num_contexts;
    std::vector<double> online(cpu.online.size()), fin(cpu.final_loss.size());
    mean_over_seeds(thrust::cpp::par, cpu.online_per_seed.data(), n_cfg, cpu.seeds, n_ctx, online.data());
    mean_over_seeds(thrust::cpp::par, cpu.final_per_seed.data(), n_cfg, cpu.seeds, n_ctx, fin.data());
    for (size_t k = 0; k < online.size(); ++k) {
      ASSERT_TRUE(same_bits(online[k], cpu.online[k])) << "online item " << k;
      ASSERT_TRUE(same_bits(fin[k], cpu.final_loss[k])) << "final item " << k;
    }
    const auto summaries = summarize_rows(online, n_cfg, n_ctx);
    for (int c = 0; c < n_cfg; ++c) {
      const LossSummary want = summarize_losses(cpu.online_of(c));
      EXPECT_TRUE(same_bits(summaries[size_t(c)].mean, want.mean)) << job.configs[size_t(c)].text;
      EXPECT_TRUE(same_bits(summaries[size_t(c)].p99, want.p99)) << job.configs[size_t(c)].text;
      EXPECT_TRUE(same_bits(summaries[size_t(c)].max, want.max)) << job.configs[size_t(c)].text;
      EXPECT_EQ(summaries[size_t(c)].above_10pct, want.above_10pct) << job.configs[size_t(c)].text;
    }
  }
}

namespace {

// The Thrust bootstrap (CPP backend) of every row of `loss`, resamples [first, first + count).
std::vector<double> bootstrap_rows(const std::vector<double>& loss, int configs, BootstrapStatistic stat,
                                   uint64_t seed, uint64_t first, uint64_t count) {
  const int n = int(loss.size()) / configs;
  std::vector<double> sorted(loss.size()), theta(size_t(configs) * count);
  std::vector<int> unit_at(loss.size()), keys(loss.size());
  std::vector<uint32_t> draws(size_t(configs) * count * size_t(n));
  sort_rows_with_units(thrust::cpp::par, loss.data(), configs, n, sorted.data(), unit_at.data(), keys.data());
  bootstrap_over_contexts(thrust::cpp::par, loss.data(), configs, n, stat, 0.10, seed, first, count,
                          sorted.data(), unit_at.data(), draws.data(), theta.data());
  return theta;
}

}  // namespace

// Hand-checked: one context, every resample draws it, so every statistic equals its value.
TEST(ReplayAggregateCpp, BootstrapOfOneContext) {
  for (auto stat : {BootstrapStatistic::mean, BootstrapStatistic::p99, BootstrapStatistic::max}) {
    const auto theta = bootstrap_rows({0.25}, 1, stat, 3, 0, 5);
    for (double t : theta) EXPECT_EQ(t, 0.25);
  }
  for (double t : bootstrap_rows({0.25}, 1, BootstrapStatistic::count_above, 3, 0, 5)) EXPECT_EQ(t, 1.0);
}

// Each config's theta is bootstrap_interval()'s distribution for the same seed, bit for bit, for
// every statistic, with ties among the losses, and for a window of resamples starting anywhere.
TEST(ReplayAggregateCpp, BootstrapMatchesStatsBootstrap) {
  std::mt19937_64 gen(99);
  std::uniform_real_distribution<double> u(0.0, 0.3);
  const int configs = 3, n = 53;
  std::vector<double> loss(size_t(configs) * n);
  for (double& l : loss) l = u(gen) < 0.2 ? 0.0 : u(gen);  // many exact ties at 0
  loss[7] = loss[8] = 0.2;
  for (auto stat : {BootstrapStatistic::mean, BootstrapStatistic::p99, BootstrapStatistic::max,
                    BootstrapStatistic::count_above}) {
    SCOPED_TRACE(to_string(stat));
    const uint64_t seed = 1234, resamples = 200;
    const auto theta = bootstrap_rows(loss, configs, stat, seed, 0, resamples);
    const auto tail = bootstrap_rows(loss, configs, stat, seed, 150, 50);
    for (int c = 0; c < configs; ++c) {
      BootstrapOptions opt;
      opt.statistic = stat;
      opt.resamples = resamples;
      opt.seed = seed;
      opt.method = IntervalMethod::percentile;
      opt.keep_distribution = true;
      const auto want =
          bootstrap_interval(std::span<const double>(loss.data() + size_t(c) * n, size_t(n)), opt)
              .distribution;
      for (uint64_t b = 0; b < resamples; ++b)
        ASSERT_TRUE(same_bits(theta[size_t(c) * resamples + b], want[b]))
            << "config " << c << " resample " << b;
      for (uint64_t b = 0; b < 50; ++b)
        ASSERT_TRUE(same_bits(tail[size_t(c) * 50 + b], want[150 + b]))
            << "config " << c << " resample " << 150 + b;
    }
  }
}
