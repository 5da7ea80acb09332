#pragma once
// The policy context of one context's knob arms (core/context_knob_arms.hpp), one rule for the
// plugin's knob mode (docs/plugin.md "Knob mode") and for `ope`'s targets over a knob log
// (docs/ope.md "Knob logs"): each arm's prior is its algorithm and protocol's cost (NCCL's model does
// not see knobs), and `slots_only` (`@slots`) keeps the arms off NCCL's own knobs in the list
// (indices as a knob sweep's) but out of the policy's choice.
#include <cstddef>
#include <vector>

#include "ncclbot/core/arm.hpp"
#include "ncclbot/policy/policy_context.hpp"

namespace ncclbot {

// The context of `arms` (at most N, each of a slot `slot_prior` prices; < 0: none): fills `prior`
// (N entries, -1 past the arms), which the context and `arms` point at, so both must outlive it.
template <int N>
PolicyContextT<N> knob_policy_context(const std::vector<Arm>& arms, const float* slot_prior, bool slots_only,
                                      float* prior) {
  PolicyContextT<N> ctx;
  ctx.mask = ArmMaskT<N>{};
  for (int i = 0; i < N; ++i) prior[i] = -1.0f;
  for (size_t i = 0; i < arms.size(); ++i) {
    prior[i] = slot_prior[arms[i].slot()];
    if (!slots_only || arms[i].default_knobs()) ctx.mask.set(int(i));
  }
  ctx.prior_us = prior;
  ctx.arms = arms.data();
  return ctx;
}

}  // namespace ncclbot
