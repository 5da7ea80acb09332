#pragma once
// Hand-made sweeps for replay and policy tests: each context lists its arms with their samples and
// an optional prior, so a test states every number it relies on.
#include <optional>
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

}  // namespace ncclbot::test
