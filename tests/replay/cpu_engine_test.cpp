// The CPU engine: brute-force reference for online/final loss, determinism across thread counts and
// runs, independence from the sweep's other contexts, and the raw per-replay stream.
#include "ncclbot/replay/cpu_engine.hpp"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "ncclbot/core/philox.hpp"
#include "ncclbot/replay/stream_id.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

namespace {

Sweep random_sweep(unsigned seed, int contexts) {
  return random_tiny_sweep(seed, contexts, true);
}

ReplayJob job_for(const Sweep& s, std::vector<std::string> specs, int seeds, int horizon, int threads) {
  ReplayJob job;
  job.sweep = &s;
  for (int c = 0; c < s.num_contexts(); ++c) job.contexts.push_back(c);
  for (const auto& spec : specs)
    for (auto& p : parse_policy_grid(spec)) job.configs.push_back(p);
  job.seeds = seeds;
  job.horizon = horizon;
  job.threads = threads;
  return job;
}

}  // namespace

// Online and final loss recomputed from scratch for `random` (whose picks are a closed-form
// function of the Philox stream): a_t = arm[(w * K) >> 32] with w = word 0 of lane 1 of step t,
// means summed by hand from the samples, loss = mean / best - 1.
TEST(CpuEngine, BruteForceReferenceForOnlineAndFinalLoss) {
  const Sweep s = random_sweep(3, 6);
  const int seeds = 3, T = 50;
  const ReplayResults r = run_cpu_replay(job_for(s, {"random"}, seeds, T, 2));
  for (int c = 0; c < s.num_contexts(); ++c) {
    std::vector<int> slots;
    std::vector<double> mean;
    for (int slot = 0; slot < kNumArms; ++slot)
      if (s.view().mask(c).has(slot)) {
        slots.push_back(slot);
        double sum = 0;
        for (int k = 0; k < 3; ++k) sum += double(s.view().sample(c, slot, k));
        mean.push_back(sum / 3);
      }
    const double best = *std::min_element(mean.begin(), mean.end());
    const Context& ctx = s.context(c);
    const uint64_t id = replay_stream_id(int(ctx.collective), ctx.nodes, ctx.gpus_per_node, ctx.bytes);
    double online = 0, final_loss = 0;
    for (int seed = 0; seed < seeds; ++seed) {
      double sum = 0;
      for (int t = 0; t < T; ++t) {
        const uint32_t w = philox_block(uint64_t(seed), id, uint32_t(t), 1).v[0];
        sum += mean[size_t(uint64_t(w) * slots.size() >> 32)] / best - 1.0;
      }
      online += sum / T;
      const uint32_t w = philox_block(uint64_t(seed), id, uint32_t(T), 1).v[0];
      final_loss += mean[size_t(uint64_t(w) * slots.size() >> 32)] / best - 1.0;
    }
    EXPECT_NEAR(r.online_at(0, c), online / seeds, 1e-12) << c;
    EXPECT_NEAR(r.final_at(0, c), final_loss / seeds, 1e-12) << c;
  }
}

TEST(CpuEngine, BitIdenticalAcrossThreadCountsAndRuns) {
  const Sweep s = random_sweep(9, 40);
  const std::vector<std::string> specs = {"ucb1:c=0.1|0.3,n0=0|2",
                                          "thompson",
                                          "egreedy:eps=0.2",
                                          "swucb:window=16",
                                          "random",
                                          "etc:m=2",
                                          "greedy:n0=0"};
  ReplayJob one = job_for(s, specs, 5, 64, 1);
  ReplayJob two = job_for(s, specs, 5, 64, 2);
  one.keep_per_seed = two.keep_per_seed = true;
  std::ostringstream raw1, raw2;
  one.raw = &raw1;
  two.raw = &raw2;
  const ReplayResults a = run_cpu_replay(one), b = run_cpu_replay(two);
  two.raw = nullptr;
  const ReplayResults c = run_cpu_replay(two);
  EXPECT_EQ(a.online, b.online);  // exact equality of doubles
  EXPECT_EQ(a.final_loss, b.final_loss);
  EXPECT_EQ(a.online_per_seed, b.online_per_seed);
  EXPECT_EQ(b.online, c.online);
  const std::string rows = raw1.str();
  EXPECT_TRUE(rows == raw2.str());
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), long(a.num_configs) * 40 * 5);
}

// A context's result depends on what it is, not where it sits: replaying a subset gives the same
// numbers for the contexts it keeps.
TEST(CpuEngine, ResultsDoNotDependOnTheOtherContexts) {
  const Sweep s = random_sweep(4, 12);
  const ReplayResults all = run_cpu_replay(job_for(s, {"thompson:n0=0"}, 3, 40, 2));
  ReplayJob some = job_for(s, {"thompson:n0=0"}, 3, 40, 1);
  some.contexts = {7, 2};
  const ReplayResults part = run_cpu_replay(some);
  EXPECT_EQ(part.online_at(0, 0), all.online_at(0, 7));
  EXPECT_EQ(part.online_at(0, 1), all.online_at(0, 2));
}

TEST(CpuEngine, PerSeedMeansAverageToTheSeedMean) {
  const Sweep s = random_sweep(5, 5);
  ReplayJob job = job_for(s, {"egreedy:eps=0.3"}, 4, 30, 2);
  job.keep_per_seed = true;
  const ReplayResults r = run_cpu_replay(job);
  for (int c = 0; c < 5; ++c) {
    double sum = 0;
    for (int seed = 0; seed < 4; ++seed) sum += r.online_of(0, seed)[size_t(c)];
    EXPECT_EQ(r.online_at(0, c), sum / 4);
  }
}
