#pragma once
// Seeded random sweeps and policy grids for comparing the CUDA engine with the CPU engine: uneven
// arm masks (1 to 22 arms, 12-arm contexts included), sample counts, latencies over four orders of
// magnitude (so summation order shows in the last bits), priors with missing entries.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ncclbot/core/knob_limits.hpp"
#include "ncclbot/core/sweep.hpp"
#include "ncclbot/replay/cpu_engine.hpp"
#include "ncclbot/replay/policy_spec.hpp"

namespace ncclbot::test {

inline Sweep random_sweep(uint64_t seed, int contexts, int samples, bool with_prior = true) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Context> ctx;
  std::vector<float> time(size_t(contexts) * kNumArms * samples, std::nanf(""));
  std::vector<uint32_t> valid(size_t(contexts), 0);
  std::vector<float> prior(size_t(contexts) * kNumArms, -1.0f);
  for (int c = 0; c < contexts; ++c) {
    Context x;
    x.fabric = "f";
    x.collective = Collective(c % 5);
    x.nodes = 1 << (c % 6);
    x.gpus_per_node = 8;
    x.bytes = uint64_t(1024) << (c / 30);  // distinct contexts (the sweep keeps them sorted)
    ctx.push_back(x);
  }
  std::sort(ctx.begin(), ctx.end());
  for (int c = 0; c < contexts; ++c) {
    const int kind = c % 4;  // 12 arms, one arm, all 22 (NCCL's 21 and HiPIPE), a random subset
    ArmMask mask;
    for (int s = 0; s < kNumArms; ++s) {
      const bool on = kind == 0 ? s < 12 : kind == 1 ? s == 7 : kind == 2 ? true : u(gen) < 0.4;
      if (on && is_arm_slot(s)) mask.set(s);  // slots 21 and 22 exist in no sweep
    }
    if (mask.empty()) mask.set(int(gen() % kNumNcclArms));
    valid[size_t(c)] = mask.bits;
    const double scale = std::pow(10.0, 4.0 * u(gen));
    for (int s = 0; s < kNumArms; ++s) {
      if (!mask.has(s)) continue;
      const double arm_mean = scale * (1.0 + 2.0 * u(gen));
      for (int r = 0; r < samples; ++r)
        time[(size_t(c) * kNumArms + size_t(s)) * size_t(samples) + size_t(r)] =
            float(arm_mean * (0.8 + 0.4 * u(gen)));
      if (u(gen) < 0.9) prior[size_t(c) * kNumArms + size_t(s)] = float(arm_mean * (0.5 + u(gen)));
    }
  }
  return Sweep(ctx, samples, time, valid,
               with_prior ? std::optional<std::vector<float>>(prior) : std::nullopt);
}

// A seeded knob sweep: four algorithm x protocol pairs x 8 channel counts (0 = NCCL's, 1, 2, 4, ...,
// 64) x 16 chunk sizes (0 = NCCL's, then 1 to 15 grains) = 512 arms; by context, every one of them,
// a single arm, the four at NCCL's own knobs, or a random subset; latencies over four orders of
// magnitude; a prior on every arm or on none.
inline Sweep random_knob_sweep(uint64_t seed, int contexts, int samples, bool with_prior = true) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::pair<Algo, Proto> pairs[] = {{Algo::kRing, Proto::kLL},
                                          {Algo::kRing, Proto::kSimple},
                                          {Algo::kTree, Proto::kLL128},
                                          {Algo::kTree, Proto::kSimple}};
  SweepBuilder b("random_knobs.csv");
  long line = 2;
  for (int c = 0; c < contexts; ++c) {
    const Context ctx{"f", Collective(c % 5), 1 << (c % 6), 8, uint64_t(1024) << (c / 30)};
    const double scale = std::pow(10.0, 4.0 * u(gen));
    const int kind = c % 4;
    bool any = false;
    for (const auto& [algo, proto] : pairs)
      for (int ch = 0; ch < 8; ++ch)
        for (int k = 0; k < 16; ++k) {
          const Arm arm{algo, proto, uint16_t(ch == 0 ? 0 : 1 << (ch - 1)),
                        uint32_t(k * chunk_grain_bytes(int(proto)))};
          const bool on = kind == 0   ? true
                          : kind == 1 ? (algo == Algo::kRing && proto == Proto::kSimple && ch == 3 && k == 5)
                          : kind == 2 ? arm.default_knobs()
                                      : u(gen) < 0.3 || (!any && algo == Algo::kTree &&
                                                         proto == Proto::kSimple && ch == 7 && k == 15);
          if (!on) continue;
          any = true;
          const double arm_mean = scale * (1.0 + 2.0 * u(gen));
          const std::optional<float> prior =
              with_prior ? std::optional<float>(float(arm_mean * (0.5 + u(gen)))) : std::nullopt;
          for (int r = 0; r < samples; ++r)
            b.add(ctx, arm, r, float(arm_mean * (0.8 + 0.4 * u(gen))), prior, line++);
        }
  }
  return b.build();
}

// The contexts of `sweep` that hold an arm at NCCL's own channels and chunk size (what a `@slots`
// policy needs).
inline std::vector<int> contexts_with_nccl_knobs(const Sweep& sweep) {
  std::vector<int> out;
  for (int c = 0; c < sweep.num_contexts(); ++c) {
    const auto arms = sweep.arms(c);
    if (std::any_of(arms.begin(), arms.end(), [](const Arm& a) { return a.default_knobs(); }))
      out.push_back(c);
  }
  return out;
}

// Every policy kind, with grids that exercise cold starts, priors and small windows.
inline std::vector<PolicySpec> every_policy() {
  std::vector<PolicySpec> out;
  for (const char* grid :
       {"auto", "oracle", "random", "greedy:n0=0|2", "egreedy:eps=0.1|0.3,decay=0|0.5,n0=1",
        "ucb1:c=0.1|0.7,n0=0|4", "thompson:n0=0|1,sigma=0.05|0.3", "etc:m=1|3",
        "swucb:c=0.2,window=4|50,n0=1", "ducb:c=0.2,gamma=0.5|0.99,n0=0|1", "knn:k=3", "tree:depth=2",
        "osub:c=0.2,n0=0|1", "autoccl", "uts:n0=0|1,sigma=0.05|0.3"})
    for (auto& p : parse_policy_grid(grid)) out.push_back(std::move(p));
  return out;
}

// A job over every context; supervised configs get random frozen decisions (any slot, valid or
// not, or -1 = none: FrozenArmPolicy falls back to AUTO on the last two).
inline ReplayJob random_job(const Sweep& sweep, const std::vector<PolicySpec>& configs, uint64_t seed,
                            int seeds, int horizon) {
  std::mt19937_64 gen(seed ^ 0x5eedu);
  ReplayJob job;
  job.sweep = &sweep;
  for (int c = 0; c < sweep.num_contexts(); ++c) job.contexts.push_back(c);
  job.configs = configs;
  for (const PolicySpec& p : configs) {
    std::vector<int> fixed;
    if (is_supervised(p.config.kind))
      for (int c = 0; c < sweep.num_contexts(); ++c) {
        fixed.push_back(int(gen() % (kNumArms + 1)) - 1);
      }
    job.fixed_slots.push_back(fixed);
  }
  job.seeds = seeds;
  job.seed_base = seed;
  job.horizon = horizon;
  job.threads = 2;
  return job;
}

}  // namespace ncclbot::test
