#pragma once
// Several replays of one (policy config, context) with different seeds, stepped side by side on
// one CPU thread. A single replay is one long dependency chain (select -> draw -> update -> the
// next select reads the updated mean), so a core mostly waits on latencies; B independent chains
// interleaved step by step give the out-of-order core work to overlap. Each replay's arithmetic is
// exactly replay_one()'s, in the same order, so every outcome is bit-identical to replay_one()'s.
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {

// Replays tasks[0..B) with policies[0..B) (params set; reset() happens here) into out[0..B).
// All tasks must have the same horizon and no feedback delay (delayed replays run replay_one).
template <int B, typename Policy>
inline void replay_batch(Policy* policies, const ReplayTask* tasks, ReplayOutcome* out) {
  static_assert(B >= 1, "a batch holds at least one replay");
  ReplayCursorT<0, kPolicyArms<Policy>> cursor[B];
  NoStepObserver observe;
  for (int b = 0; b < B; ++b) cursor[b].begin(policies[b], tasks[b]);
  const int horizon = tasks[0].horizon;
  for (int t = 0; t < horizon; ++t)
    for (int b = 0; b < B; ++b) cursor[b].step(policies[b], tasks[b], t, observe);
  for (int b = 0; b < B; ++b) out[b] = cursor[b].finish(policies[b], tasks[b]);
}

}  // namespace ncclbot
