#pragma once
// A knob context's arms and fresh policy (docs/plugin.md "Knob mode"), one rule for the rank-local
// learner, the leader's and the state file: the algorithm x protocol pairs the cost table leaves
// (by slot, < 0 = not usable) crossed with the lists (context_knob_arms), in the policy context
// knob_policy_context() makes of them (policy/knob_policy_context.hpp, as `ope` does).
#include <cstddef>
#include <vector>

#include "ncclbot/core/knob_spec.hpp"
#include "ncclbot/policy/knob_policy_context.hpp"
#include "plugin/cost_table.hpp"
#include "plugin/knob_choice.hpp"
#include "plugin/policy_engine.hpp"

namespace ncclbot::plugin {

// Fills `arms` (cleared when the crossing holds more than N: the context keeps NCCL's choices),
// `prior` (N entries, -1 past the arms) and `mask`, and resets `policy` on them. Returns how many
// arms the lists give the context, kept or not.
template <int N>
size_t seed_knob_policy(const PolicyEngine& engine, const KnobSpec& spec, const float* slot_prior,
                        std::vector<Arm>& arms, float* prior, ArmMaskT<N>& mask, AnyPolicyT<N>& policy) {
  arms = context_knob_arms(usable_prior_arms(slot_prior), spec);
  const size_t crossing = arms.size();
  if (arms.size() > size_t(N)) arms.clear();
  const PolicyContextT<N> ctx = knob_policy_context<N>(arms, slot_prior, engine.slots_only(), prior);
  mask = ctx.mask;
  engine.reset(policy, ctx);
  return crossing;
}

}  // namespace ncclbot::plugin
