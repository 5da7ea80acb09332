#pragma once
// `auto`: NCCL's own choice, the argmin of the model's prior with NCCL's tie rule (lowest
// algorithm, then lowest protocol; core/argmin.hpp). It never learns. Without a prior it plays
// the lowest valid slot. NCCL cannot run the simulated HiPIPE arm, so AUTO chooses among NCCL's 21
// slots only, even where HiPIPE's own prior (its analytic model, which warm-started bandits read) is
// lower; a context with no NCCL arm at all falls back to the lowest valid slot. In a knob sweep
// (policy_context.hpp) every arm of AUTO's algorithm and protocol carries its prior, so the tie rule
// picks the first of them in Arm order: NCCL's own channels and chunk size.
#include "ncclbot/core/argmin.hpp"
#include "ncclbot/policy/one_arm_policy.hpp"
#include "ncclbot/policy/policy_context.hpp"

namespace ncclbot {

template <int N>
struct AutoPolicyT : OneArmPolicy {
  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    ArmMaskT<N> nccl = ctx.mask;
    for (int s = 0; s < N; ++s)
      if (nccl.has(s) && !ctx.nccl_runs(s)) nccl.clear(s);
    pick = ctx.prior_us ? nccl_argmin(
                              nccl, [&](int s) { return ctx.prior_us[s]; }, N)
                        : -1;
    if (pick < 0)
      pick = nccl_argmin(
          nccl, [](int) { return 0.0; }, N);
    if (pick < 0)
      pick = nccl_argmin(
          ctx.mask, [](int) { return 0.0; }, N);
  }
};
using AutoPolicy = AutoPolicyT<kNumArms>;

}  // namespace ncclbot
