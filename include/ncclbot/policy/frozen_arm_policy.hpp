#pragma once
// A frozen per-context decision: what the supervised selectors (`knn`, `tree`, fit once on the
// tune contexts) and an exported decision table play. The decision comes in as
// PolicyContext::fixed_slot; if it is not a valid arm of this context the policy falls back to
// AUTO's pick, then to the lowest valid slot, so it can never choose an arm that does not exist.
#include "ncclbot/policy/auto_policy.hpp"
#include "ncclbot/policy/one_arm_policy.hpp"

namespace ncclbot {

template <int N>
struct FrozenArmPolicyT : OneArmPolicy {
  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    if (ctx.fixed_slot >= 0 && ctx.fixed_slot < N && ctx.mask.has(ctx.fixed_slot)) {
      pick = ctx.fixed_slot;
    } else {
      AutoPolicyT<N> fallback;
      fallback.reset(ctx);
      pick = fallback.pick;
    }
  }
};
using FrozenArmPolicy = FrozenArmPolicyT<kNumArms>;

}  // namespace ncclbot
