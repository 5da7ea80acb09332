#include "ncclbot/ope/target_policy.hpp"

#include <cmath>

#include "ncclbot/core/error.hpp"
#include "ncclbot/policy/knob_policy_context.hpp"

namespace ncclbot {

ContextPolicy::ContextPolicy(const PolicySpec& spec, const OpeContext& c, const LoggedArms& arms)
    : logged_arms_(arms.size()) {
  if (!arms.knob_log()) {
    prior_.resize(kNumArms);
    for (int s = 0; s < kNumArms; ++s) prior_[size_t(s)] = s < kNumNcclArms ? c.cost_us[s] : -1.0f;
    slots_ = std::make_unique<AnyPolicy>(make_policy(spec.config));
    PolicyContext ctx;
    ctx.mask = slot_mask_ = c.mask;
    ctx.prior_us = prior_.data();
    policy_reset(*slots_, ctx);
    return;
  }
  position_.assign(arms.size(), -1);
  for (size_t i = 0; i < arms.size(); ++i)
    if (arm_usable(c, arms.arms[i])) {
      position_[i] = int(logged_.size());
      logged_.push_back(int(i));
      arms_.push_back(arms.arms[i]);
    }
  if (logged_.size() > size_t(kKnobReplayArms))
    throw UsageError("--policy " + spec.text + ": " + ope_context_text(c) + " has " +
                     std::to_string(logged_.size()) + " knob arms, more than a policy holds (" +
                     std::to_string(kKnobReplayArms) + ")");
  prior_.resize(size_t(kKnobReplayArms));
  const PolicyContextT<kKnobReplayArms> ctx =
      knob_policy_context<kKnobReplayArms>(arms_, c.cost_us, spec.slots_only, prior_.data());
  knob_mask_ = ctx.mask;
  knobs_ = std::make_unique<AnyPolicyT<kKnobReplayArms>>(make_policy<kKnobReplayArms>(spec.config));
  policy_reset(*knobs_, ctx);
}

int ContextPolicy::select(StepRandom& rng) {
  if (slots_) return policy_select(*slots_, rng);
  const int k = policy_select(*knobs_, rng);
  return k < 0 ? -1 : logged_[size_t(k)];
}

void ContextPolicy::update(int arm, double latency_us) {
  if (slots_) return policy_update(*slots_, arm, latency_us);
  policy_update(*knobs_, position_[size_t(arm)], latency_us);
}

std::vector<double> ContextPolicy::first_decision(uint64_t context, const std::string& name) {
  std::vector<double> pi(logged_arms_, 0.0);
  StepRandom rng(0, context, 0);
  const auto decide = [&](auto& policy, const auto& mask, int count, auto logged) {
    const int chosen = policy_select(policy, rng);
    if (std::isnan(policy_propensity(policy, chosen)))
      throw UsageError("--policy " + name +
                       ": its decisions have no stated probabilities, so it cannot be a target");
    bool deterministic = false;
    with_policy(policy, [&](auto& p) { deterministic = std::decay_t<decltype(p)>::kDeterministic; });
    if (deterministic) {
      if (chosen >= 0) pi[size_t(logged(chosen))] = 1.0;
      return;
    }
    for (int k = 0; k < count; ++k)
      if (mask.has(k)) pi[size_t(logged(k))] = policy_propensity(policy, k);
  };
  if (slots_)
    decide(*slots_, slot_mask_, kNumArms, [](int s) { return s; });
  else
    decide(*knobs_, knob_mask_, int(logged_.size()), [&](int k) { return logged_[size_t(k)]; });
  return pi;
}

TargetProbabilities stationary_target(const PolicySpec& spec, const std::vector<OpeContext>& contexts,
                                      const LoggedArms& arms) {
  if (policy_use(spec.config.kind) != PolicyUse::kLive)
    throw UsageError("--policy " + spec.text + ": only policies that can run inside NCCL are targets");
  TargetProbabilities pi(contexts.size());
  for (size_t x = 0; x < contexts.size(); ++x)
    pi[x] = ContextPolicy(spec, contexts[x], arms).first_decision(x, spec.text);
  return pi;
}

}  // namespace ncclbot
