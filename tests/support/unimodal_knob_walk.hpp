#pragma once
// A context whose latency is unimodal on the knob graph (policy/knob_lattice.hpp), for the policies
// that explore around a leader (OSUB, UTS): 64 channels x 8 chunks of Ring/Simple, latency
// 100 + 0.5 (c - 37)^2 + 3 (k - 5)^2 µs with one sample each (an observation is its arm's latency),
// smallest at (37, 5), index 8 * 36 + 4. check_knob_walk() recomputes the leader from what was
// observed (smallest latency, lowest index on ties) and expects every call to play it or one of its
// neighbours (one knob step).
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <vector>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot::test {

inline constexpr int kUnimodalBestArm = 8 * 36 + 4;

inline double unimodal_knob_latency(int c, int k) {
  return 100.0 + 0.5 * (c - 37) * (c - 37) + 3.0 * (k - 5) * (k - 5);
}

inline Sweep unimodal_knob_context() {
  SweepBuilder b("knobs.csv");
  const Context ctx{"h100", Collective::kAllReduce, 2, 8, 1 << 24};
  long line = 1;
  for (int c = 1; c <= 64; ++c)
    for (int k = 1; k <= 8; ++k)
      b.add(ctx, Arm{Algo::kRing, Proto::kSimple, uint16_t(c), uint32_t(512 * k)}, 0,
            float(unimodal_knob_latency(c, k)), 50.0f, line++);
  return b.build();
}

// Replays `policy` (params set) on the context for `horizon` calls, seed 3, stream 9; the slots it
// played go to `picks`.
template <typename Policy>
ReplayOutcome replay_knob_context(Policy& policy, const Sweep& s, int horizon, std::vector<int>& picks) {
  ReplayTask task;
  task.sweep = s.arm_view();
  task.context = 0;
  task.seed = 3;
  task.stream_id = 9;
  task.horizon = horizon;
  return replay_one(policy, task, [&](int, int slot, float) { picks.push_back(slot); });
}

// The arms tried; a call off the leader's neighbourhood fails the test.
inline size_t check_knob_walk(const std::vector<int>& picks) {
  // Index i is channels 1 + i / 8, chunk 512 (1 + i % 8).
  const auto channel = [](int i) { return 1 + i / 8; };
  const auto chunk = [](int i) { return 1 + i % 8; };
  std::vector<double> seen(512, -1.0);
  std::set<int> tried;
  for (size_t t = 0; t < picks.size(); ++t) {
    int leader = 0;
    for (int i = 0; i < 512; ++i)
      if (seen[i] >= 0.0 && (seen[leader] < 0.0 || seen[i] < seen[leader])) leader = i;
    const int p = picks[t];
    const int dc = std::abs(channel(p) - channel(leader)), dk = std::abs(chunk(p) - chunk(leader));
    EXPECT_TRUE(p == leader || (dc + dk == 1))
        << "call " << t << " played " << p << " next to leader " << leader;
    seen[p] = unimodal_knob_latency(channel(p), chunk(p));
    tried.insert(p);
  }
  return tried.size();
}

}  // namespace ncclbot::test
