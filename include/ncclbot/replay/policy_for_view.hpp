#pragma once
// The policy objects a sweep view takes: every policy is a class template over its arm capacity
// (policy/policy_context.hpp), and a view's shape says which capacity replays it.
#include "ncclbot/core/sweep_view.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {

// Calls f(policy) with a fresh policy of cfg.kind (visit_policy, policy/policy.hpp) whose arm
// capacity fits `v`: kNumArms for a slot sweep, kKnobReplayArms for a knob sweep (check_replay_job
// refuses a sweep with more arms in a context than that).
template <typename F>
auto visit_policy_for(const SweepView& v, const PolicyConfig& cfg, F&& f) {
  if (v.slot_shaped()) return visit_policy<kNumArms>(cfg, f);
  return visit_policy<kKnobReplayArms>(cfg, f);
}

}  // namespace ncclbot
