#pragma once
// `auto`: NCCL's own choice, the argmin of the model's prior with NCCL's tie rule (lowest
// algorithm, then lowest protocol; core/argmin.hpp). It never learns. Without a prior it plays
// the lowest valid slot.
#include "ncclbot/core/argmin.hpp"
#include "ncclbot/policy/policy_context.hpp"

namespace ncclbot {

struct AutoPolicy {
  struct Params {};
  Params params;
  int pick;

  NCCLBOT_HD void reset(const PolicyContext& ctx) {
    pick = ctx.prior_us ? nccl_argmin(ctx.mask, [&](int s) { return ctx.prior_us[s]; }) : -1;
    if (pick < 0) pick = nccl_argmin(ctx.mask, [](int) { return 0.0; });
  }
  NCCLBOT_HD int select(StepRandom&) { return pick; }
  NCCLBOT_HD void update(int, double) {}
  NCCLBOT_HD int commit(StepRandom&) const { return pick; }
};

}  // namespace ncclbot
