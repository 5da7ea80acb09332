#include "ncclbot/ope/target_policy.hpp"

#include <cmath>

#include "ncclbot/core/error.hpp"

namespace ncclbot {

AnyPolicy policy_for_context(const PolicyConfig& config, const OpeContext& c) {
  float prior[kNumArms];
  for (int s = 0; s < kNumArms; ++s) prior[s] = s < kNumNcclArms ? c.cost_us[s] : -1.0f;
  AnyPolicy state = make_policy(config);
  PolicyContext ctx;
  ctx.mask = c.mask;
  ctx.prior_us = prior;
  policy_reset(state, ctx);
  return state;
}

TargetProbabilities stationary_target(const PolicySpec& spec, const std::vector<OpeContext>& contexts) {
  if (policy_use(spec.config.kind) != PolicyUse::kLive)
    throw UsageError("--policy " + spec.text + ": only policies that can run inside NCCL are targets");
  TargetProbabilities pi(contexts.size());
  for (size_t x = 0; x < contexts.size(); ++x) {
    const OpeContext& c = contexts[x];
    AnyPolicy state = policy_for_context(spec.config, c);
    pi[x].fill(0.0);
    StepRandom rng(0, uint64_t(x), 0);
    const int chosen = policy_select(state, rng);
    const double p_chosen = policy_propensity(state, chosen);
    if (std::isnan(p_chosen))
      throw UsageError("--policy " + spec.text +
                       ": its decisions have no stated probabilities, so it cannot be a target");
    bool deterministic = false;
    with_policy(state, [&](auto& p) { deterministic = std::decay_t<decltype(p)>::kDeterministic; });
    if (deterministic) {
      if (chosen >= 0) pi[x][size_t(chosen)] = 1.0;
      continue;
    }
    for (int s = 0; s < kNumArms; ++s)
      if (c.mask.has(s)) pi[x][size_t(s)] = policy_propensity(state, s);
  }
  return pi;
}

}  // namespace ncclbot
