// The knob model's calibration: the best channel and chunk setting's gain over NCCL's own, per
// context, is none at tiny sizes, largest in the 4-128 MiB band and at most about 35% (AutoCCL NSDI
// 2025: 1.24-1.29x; Lagom arXiv 2602.20656: 1.07-1.33x; NCCLbpf arXiv 2603.11438: +27% at 4-128 MiB).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ncclbot/core/knob_limits.hpp"
#include "ncclbot/sim/knob_model.hpp"
#include "ncclbot/sim/simulator.hpp"

namespace ncclbot::sim {
namespace {

// A wide knob grid per protocol: NCCL's own and settings around it.
std::vector<Arm> knob_grid(int slot) {
  const Proto p = slot_proto(slot);
  std::vector<uint32_t> chunks = {0};
  const uint32_t grain = uint32_t(chunk_grain_bytes(int(p)));
  for (uint32_t m : {1u, 4u, 16u, 32u, 64u, 128u, 256u, 512u, 1024u, 2048u, 4096u})
    chunks.push_back(grain * m);
  std::vector<Arm> arms;
  for (int c : {0, 1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64})
    for (uint32_t k : chunks) arms.push_back(Arm{slot_algo(slot), p, uint16_t(c), k});
  return arms;
}

// Best time over NCCL's own knobs of every valid algorithm and protocol, and over the knob grid.
struct ContextGain {
  double nccl_best_us = INFINITY, knob_best_us = INFINITY;
  double gain() const { return nccl_best_us / knob_best_us - 1.0; }
};

ContextGain context_gain(const KnobSimulator& sim, const Context& ctx) {
  ContextGain g;
  for (int s = 0; s < kNumNcclArms; ++s) {
    const double own = sim.mean_us(ctx, Arm::of_slot(s));
    if (!std::isfinite(own)) continue;
    g.nccl_best_us = std::min(g.nccl_best_us, own);
    for (const Arm& a : knob_grid(s)) g.knob_best_us = std::min(g.knob_best_us, sim.mean_us(ctx, a));
  }
  return g;
}

TEST(KnobGain, DISABLED_Profile) {
  for (const char* name : {"h100-ib-a", "h100-ib-b", "h100-roce", "gb200-mnnvl", "gb200-ib"}) {
    const FabricPreset f = load_fabric(name);
    for (uint64_t seed : {kDefaultSeed, uint64_t(1), uint64_t(2)}) {
      const KnobSimulator sim(f, seed);
      for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter})
        for (int n : f.default_nodes) {
          std::printf("%s seed %llu %d %d:", name, (unsigned long long)seed, int(c), n);
          for (uint64_t b = 1024; b <= (uint64_t(8) << 30); b *= 4)
            std::printf(" %.1f", 100.0 * context_gain(sim, Context{f.name, c, n, f.gpus_per_host, b}).gain());
          std::printf("\n");
        }
    }
  }
}

}  // namespace
}  // namespace ncclbot::sim
namespace ncclbot::sim {
namespace {
TEST(KnobGain, DISABLED_Detail) {
  const char* env = std::getenv("KNOB_CTX");  // fabric,coll,nodes,bytes
  char fab[64];
  int coll, nodes;
  unsigned long long bytes;
  std::sscanf(env, "%63[^,],%d,%d,%llu", fab, &coll, &nodes, &bytes);
  const FabricPreset f = load_fabric(fab);
  const KnobSimulator sim(f, kDefaultSeed);
  const Context ctx{f.name, Collective(coll), nodes, f.gpus_per_host, bytes};
  const model::Topology t = topology_for(f, nodes, f.gpus_per_host);
  for (int s = 0; s < kNumNcclArms; ++s) {
    const double own = sim.mean_us(ctx, Arm::of_slot(s));
    if (!std::isfinite(own)) continue;
    Arm best = Arm::of_slot(s);
    double bt = own;
    for (const Arm& a : knob_grid(s))
      if (sim.mean_us(ctx, a) < bt) bt = sim.mean_us(ctx, a), best = a;
    const EffectiveKnobs e0 = effective_knobs(t, ctx, Arm::of_slot(s)), e = effective_knobs(t, ctx, best);
    std::printf("slot %d own %.1f (ch %d chunk %u run %llu) best %.1f ch %d chunk %u (eff %d %u %llu)\n", s,
                own, e0.channels, e0.chunk_bytes, (unsigned long long)e0.run_chunk_bytes, bt, best.channels,
                best.chunk_bytes, e.channels, e.chunk_bytes, (unsigned long long)e.run_chunk_bytes);
  }
}
}  // namespace
}  // namespace ncclbot::sim
