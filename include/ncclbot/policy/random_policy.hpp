#pragma once
// `random`: a uniformly random valid arm every step, a_t = arm[uniform_below(w, K)] with w the
// step's first policy word (lane 1, word 0). Its committed arm is drawn the same way at step T.
#include "ncclbot/policy/arm_set.hpp"
#include "ncclbot/policy/policy_context.hpp"

namespace ncclbot {

template <int N>
struct RandomPolicyT {
  struct Params {};
  Params params;
  ArmSetT<N> arms;
  static constexpr bool kDeterministic = false;

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) { arms.assign(ctx.mask); }
  NCCLBOT_HD int select(StepRandom& rng) {
    if (arms.k == 0) return -1;
    return arms.slot[uniform_below(rng.next_u32(), uint32_t(arms.k))];
  }
  // 1/K for every arm (uniform_below's bias is below K / 2^32).
  NCCLBOT_HD double propensity(int) const { return arms.k > 0 ? 1.0 / double(arms.k) : 0.0; }
  NCCLBOT_HD void update(int, double) {}
  NCCLBOT_HD int commit(StepRandom& rng) const {
    if (arms.k == 0) return -1;
    return arms.slot[uniform_below(rng.next_u32(), uint32_t(arms.k))];
  }
  // Nothing learned: reset() rebuilds everything (tuner plugin state file).
  template <typename F>
  NCCLBOT_HD void visit_state(F&&) {}
};
using RandomPolicy = RandomPolicyT<kNumArms>;

}  // namespace ncclbot
