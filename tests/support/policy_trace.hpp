#pragma once
// Replays one policy config on one context of a sweep and records what it played and observed.
#include <vector>

#include "ncclbot/core/sweep.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot::test {

struct Trace {
  std::vector<int> picks;
  std::vector<float> observed;
  ReplayOutcome outcome;
};

inline Trace trace_policy(const PolicyConfig& cfg, const Sweep& sweep, int context, int horizon,
                          uint64_t seed = 1, uint64_t stream_id = 42, int fixed_slot = -1) {
  Trace tr;
  ReplayTask task;
  task.sweep = sweep.view();
  task.context = context;
  task.seed = seed;
  task.stream_id = stream_id;
  task.horizon = horizon;
  task.fixed_slot = fixed_slot;
  tr.outcome = visit_policy(cfg, [&](auto& policy) {
    return replay_one(policy, task, [&](int, int slot, float x) {
      tr.picks.push_back(slot);
      tr.observed.push_back(x);
    });
  });
  return tr;
}

inline PolicyConfig config_of(PolicyKind kind) {
  PolicyConfig c;
  c.kind = kind;
  return c;
}

}  // namespace ncclbot::test
