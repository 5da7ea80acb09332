// The on-device aggregation code (replay/replay_aggregate.hpp) run through Thrust's CPP backend by
// g++, against the CPU engine: the same header the CUDA engine runs with thrust::device must give
// the CPU engine's seed means and summarize_losses() bit for bit.
#include <gtest/gtest.h>
#include <thrust/system/cpp/execution_policy.h>

#include <cstring>
#include <random>

#include "gpu/random_sweep.hpp"
#include "ncclbot/replay/replay_aggregate.hpp"

using namespace ncclbot;

static_assert(THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CPP, "this test builds Thrust for the host");

namespace {

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

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
