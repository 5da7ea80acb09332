#pragma once
// Hand-made sweeps for replay and policy tests: each context lists its arms with their samples and
// an optional prior, so a test states every number it relies on.
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ncclbot/core/sweep.hpp"

namespace ncclbot::test {

struct TinyArm {
  int slot;
  std::vector<float> samples;
  std::optional<float> prior = std::nullopt;
};

struct TinyContext {
  Context context;
  std::vector<TinyArm> arms;
};

inline Context tiny_context(int nodes, uint64_t bytes, Collective coll = Collective::kAllReduce,
                            int gpn = 8) {
  Context c;
  c.fabric = "test";
  c.collective = coll;
  c.nodes = nodes;
  c.gpus_per_node = gpn;
  c.bytes = bytes;
  return c;
}

inline Sweep tiny_sweep(const std::vector<TinyContext>& contexts) {
  SweepBuilder b("tiny");
  long line = 1;
  for (const auto& tc : contexts)
    for (const auto& arm : tc.arms)
      for (size_t r = 0; r < arm.samples.size(); ++r)
        b.add(tc.context, arm.slot, int(r), arm.samples[r], arm.prior, ++line);
  return b.build();
}

// `contexts` contexts with 2 to 5 arms (slots 0, 4, 8, 12, 16), 3 samples and a prior each, values
// from a fixed mt19937 in [1, 100); all-reduce, or all-reduce and all-gather alternating.
inline Sweep random_tiny_sweep(unsigned seed, int contexts, bool alternate_collectives) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(1.0f, 100.0f);
  std::vector<TinyContext> cs;
  for (int c = 0; c < contexts; ++c) {
    const Collective coll = alternate_collectives && c % 2 ? Collective::kAllGather : Collective::kAllReduce;
    TinyContext tc{tiny_context(1 + c % 4, (uint64_t(1) << (c % 20)) + uint64_t(c), coll), {}};
    for (int a = 0; a < 2 + c % 4; ++a) tc.arms.push_back({a * 4, {u(gen), u(gen), u(gen)}, u(gen)});
    cs.push_back(tc);
  }
  return tiny_sweep(cs);
}

// One context with three arms whose single samples are 15, 12 and 10 us (slot 2 is the best).
inline Sweep three_arms_15_12_10() {
  return tiny_sweep({{tiny_context(1, 1024), {{0, {15.0f}, {}}, {1, {12.0f}, {}}, {2, {10.0f}, {}}}}});
}

}  // namespace ncclbot::test
