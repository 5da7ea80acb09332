#include "ncclbot/bench/bench_sweep.hpp"

#include <cmath>
#include <random>

#include "ncclbot/core/error.hpp"

namespace ncclbot {

Sweep make_bench_sweep(int arms, int contexts, int samples, uint64_t seed) {
  if (arms < 1 || arms > kMaxBenchArms || contexts < 1 || contexts > kMaxBenchContexts || samples < 1)
    throw UsageError("bench sweep: arms must be in 1.." + std::to_string(kMaxBenchArms) +
                     ", contexts in 1.." + std::to_string(kMaxBenchContexts) + ", samples positive");
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> base(1.0, 4.0);  // log10 of the arm's mean in µs
  std::normal_distribution<double> noise(0.0, 0.05), model_error(0.0, 0.3);
  SweepBuilder b("bench");
  long line = 0;
  for (int c = 0; c < contexts; ++c) {
    Context ctx;
    ctx.fabric = "bench";
    ctx.collective = Collective::kAllReduce;
    // 32 node counts x 30 sizes repeat after 480 contexts; each further 480 take 8 GPUs per node
    // more, so every context is a distinct (nodes, GPUs per node, bytes) however many are asked for.
    ctx.nodes = 1 + c % 32;
    ctx.gpus_per_node = 8 * (1 + c / 480);
    ctx.bytes = uint64_t(1) << (3 + c % 30);
    for (int a = 0; a < arms; ++a) {
      const double mean = std::pow(10.0, base(gen));
      const float prior = float(mean * std::exp(model_error(gen)));
      if (arms <= kNumNcclArms) {
        const int slot = a * kNumNcclArms / arms;  // spread the arms over NCCL's 21 slots
        for (int r = 0; r < samples; ++r)
          b.add(ctx, slot, r, float(mean * std::exp(noise(gen))), prior, ++line);
        continue;
      }
      // Knob arms: slot a mod 21, then channels 1, 2, ... and the protocol's chunk grain times 1, 2, ...
      const int slot = a % kNumNcclArms, j = a / kNumNcclArms;
      const Arm arm{slot_algo(slot), slot_proto(slot), uint16_t(1 + j % kMaxChannels),
                    uint32_t(chunk_grain_bytes(int(slot_proto(slot))) * (1 + j / kMaxChannels))};
      for (int r = 0; r < samples; ++r) b.add(ctx, arm, r, float(mean * std::exp(noise(gen))), prior, ++line);
    }
  }
  return b.build();
}

}  // namespace ncclbot
