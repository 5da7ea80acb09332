// Built at -O0 (tests/CMakeLists.txt), where inline functions are emitted out of line and the linker
// picks one definition per name. Two different ncclbot::normal_quantile(double) once existed (the
// policies' portable one and the statistics' Boost one), and at -O0 this file's Thompson sampling
// silently ran Boost's. Its replays must equal the CPU engine's (built optimised) bit for bit.
#include <gtest/gtest.h>

#include "ncclbot/core/portable_math.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay.hpp"
#include "ncclbot/replay/stream_id.hpp"
#include "support/same_bits.hpp"
#include "support/tiny_sweep.hpp"

using namespace ncclbot;
using namespace ncclbot::test;

TEST(ThompsonUnoptimised, ReplaysEqualTheOptimisedCpuEngineBitForBit) {
  const Sweep s = random_tiny_sweep(11, 12, true);
  ReplayJob job;
  job.sweep = &s;
  for (int c = 0; c < s.num_contexts(); ++c) job.contexts.push_back(c);
  job.configs = parse_policy_grid("thompson:n0=0|2,sigma=0.05|0.3");
  job.seeds = 5;
  job.seed_base = 100;
  job.horizon = 200;
  job.keep_per_seed = true;
  const ReplayResults engine = run_cpu_replay(job);
  for (size_t cfg = 0; cfg < job.configs.size(); ++cfg)
    for (int seed = 0; seed < job.seeds; ++seed)
      for (int i = 0; i < s.num_contexts(); ++i) {
        ThompsonPolicy p{};
        p.params = {job.configs[cfg].config.n0, job.configs[cfg].config.sigma};
        ReplayTask task;
        task.sweep = s.view();
        task.context = i;
        task.seed = job.seed_base + uint64_t(seed);
        task.stream_id = context_stream_id(s.context(i));
        task.horizon = job.horizon;
        const ReplayOutcome here = replay_one(p, task);
        const double there =
            engine.online_per_seed[(cfg * size_t(job.seeds) + size_t(seed)) * s.num_contexts() + i];
        ASSERT_TRUE(same_bits(here.online_loss, there))
            << job.configs[cfg].text << " seed " << seed << " context " << i;
      }
}

// The quantile Thompson sampling uses is the portable AS 241 one: Phi^-1(0.975) = 1.959963984540054
// (SciPy: scipy.stats.norm.ppf(0.975)); AS 241 is accurate to about 1e-16 relative.
TEST(ThompsonUnoptimised, PolicyQuantileIsThePortableOne) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-15);
  EXPECT_NEAR(normal_quantile(1e-10), -6.361340902404056, 1e-14);
}
