#pragma once
// Losses priced on the measured arms (docs/architecture.md "Losses"): mu[c][a] = mean of the samples,
// mu*[c] = min over valid arms, relative loss l(c,a) = mu[c][a] / mu*[c] - 1.
#include "ncclbot/core/argmin.hpp"
#include "ncclbot/core/sweep_view.hpp"

namespace ncclbot {

NCCLBOT_HD inline int best_slot(const SweepView& v, int c) {
  return nccl_argmin(
      v.valid_arms(c), [&](int s) { return v.mean(c, s); }, v.arms);
}

NCCLBOT_HD inline double relative_loss(const SweepView& v, int c, int slot) {
  return v.mean(c, slot) / v.mean(c, best_slot(v, c)) - 1.0;
}

// AUTO's pick: argmin of the model's prior over NCCL's arms (never the simulated HiPIPE arm) with
// NCCL's tie rule; -1 when the sweep has no prior.
NCCLBOT_HD inline int auto_slot(const SweepView& v, int c) {
  if (!v.has_prior()) return -1;
  return nccl_argmin(
      v.valid_arms(c),
      [&](int s) { return is_nccl_slot(v.arm(c, s).slot()) ? v.prior(c, s) : __builtin_nanf(""); }, v.arms);
}

}  // namespace ncclbot
