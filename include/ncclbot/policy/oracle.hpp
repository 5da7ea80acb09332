#pragma once
// `oracle`: the arm with the smallest measured mean (the sweep's best arm), every step. A
// reference line only (its loss is 0 by definition); it needs the true means, which exist in a
// replay and nowhere else. Without them it plays the lowest valid slot.
#include "ncclbot/core/argmin.hpp"
#include "ncclbot/policy/one_arm_policy.hpp"
#include "ncclbot/policy/policy_context.hpp"

namespace ncclbot {

template <int N>
struct OraclePolicyT : OneArmPolicy {
  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    pick = ctx.true_mean_us ? nccl_argmin(
                                  ctx.mask, [&](int s) { return ctx.true_mean_us[s]; }, N)
                            : -1;
    if (pick < 0)
      pick = nccl_argmin(
          ctx.mask, [](int) { return 0.0; }, N);
  }
};
using OraclePolicy = OraclePolicyT<kNumArms>;

}  // namespace ncclbot
