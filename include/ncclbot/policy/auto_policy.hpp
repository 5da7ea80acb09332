#pragma once
// `auto`: NCCL's own choice, the argmin of the model's prior with NCCL's tie rule (lowest
// algorithm, then lowest protocol; core/argmin.hpp). It never learns. Without a prior it plays
// the lowest valid slot. NCCL cannot run the simulated HiPIPE arm, so AUTO chooses among NCCL's 21
// slots only, even where HiPIPE's own prior (its analytic model, which warm-started bandits read) is
// lower; a context with no NCCL arm at all falls back to the lowest valid slot.
#include "ncclbot/core/argmin.hpp"
#include "ncclbot/policy/one_arm_policy.hpp"
#include "ncclbot/policy/policy_context.hpp"

namespace ncclbot {

struct AutoPolicy : OneArmPolicy {
  NCCLBOT_HD void reset(const PolicyContext& ctx) {
    const ArmMask nccl = ctx.mask.nccl_arms();
    pick = ctx.prior_us ? nccl_argmin(nccl, [&](int s) { return ctx.prior_us[s]; }) : -1;
    if (pick < 0) pick = nccl_argmin(nccl, [](int) { return 0.0; });
    if (pick < 0) pick = nccl_argmin(ctx.mask, [](int) { return 0.0; });
  }
};

}  // namespace ncclbot
