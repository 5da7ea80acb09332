#pragma once
// A knob context's arms and fresh policy (docs/plugin.md "Knob mode"), one rule for the rank-local
// learner, the leader's and the state file: the algorithm x protocol pairs the cost table leaves
// (by slot, < 0 = not usable) crossed with the lists (context_knob_arms), each arm with its slot's
// cost as the prior (NCCL's model does not see knobs); `@slots` keeps the arms in the list (indices
// as a knob sweep's) but out of the policy's choice.
#include <cstddef>
#include <vector>

#include "ncclbot/core/knob_spec.hpp"
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
  PolicyContextT<N> ctx;
  ctx.mask = ArmMaskT<N>{};
  for (int i = 0; i < N; ++i) prior[i] = -1.0f;
  for (size_t i = 0; i < arms.size(); ++i) {
    prior[i] = slot_prior[arms[i].slot()];
    if (!engine.slots_only() || arms[i].default_knobs()) ctx.mask.set(int(i));
  }
  mask = ctx.mask;
  ctx.prior_us = prior;
  ctx.arms = arms.data();
  engine.reset(policy, ctx);
  return crossing;
}

}  // namespace ncclbot::plugin
