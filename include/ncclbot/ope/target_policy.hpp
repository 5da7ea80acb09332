#pragma once
// What a target policy plays in each logged context, as probabilities pi(a | x), for the
// off-policy estimators (ope/off_policy.hpp):
//   auto           NCCL's pick from the logged cost table;
//   a policy spec  evaluated stationary: the distribution of its first decision on the context,
//                  warm-started from NCCL's costs as the plugin would (deterministic policies put
//                  probability 1 on one arm; random, egreedy and Thompson sampling spread it as
//                  their propensity() says).
// Learning targets over the whole log: ope/replay_method.hpp.
#include "ncclbot/ope/off_policy.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/policy_spec.hpp"

namespace ncclbot {

TargetProbabilities stationary_target(const PolicySpec& spec, const std::vector<OpeContext>& contexts);

// A live policy of `config` reset for logged context `c` as the plugin would: the context's usable
// arms, NCCL's logged costs as the prior.
AnyPolicy policy_for_context(const PolicyConfig& config, const OpeContext& c);

}  // namespace ncclbot
