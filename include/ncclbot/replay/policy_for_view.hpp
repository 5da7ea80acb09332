#pragma once
// The policy objects a sweep view takes: every policy is a class template over its arm capacity
// (policy/policy_context.hpp), and a view's shape says which capacity replays it.
#include "ncclbot/core/sweep_view.hpp"
#include "ncclbot/policy/conservative.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/policy_spec.hpp"
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

// The same for a whole spec: with `@conservative`, f gets the policy inside the conservative wrapper
// (policy/conservative.hpp).
template <typename F>
auto visit_spec_policy_for(const SweepView& v, const PolicySpec& spec, F&& f) {
  return visit_policy_for(v, spec.config, [&](auto policy) {
    if (spec.conservative) {
      ConservativePolicyT<decltype(policy), kPolicyArms<decltype(policy)>> wrapped{};
      wrapped.base = policy;
      wrapped.params = *spec.conservative;
      return f(wrapped);
    }
    return f(policy);
  });
}

}  // namespace ncclbot
