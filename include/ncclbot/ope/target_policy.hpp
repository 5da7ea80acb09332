#pragma once
// What a target policy plays in each logged context, as probabilities pi(a | x), for the
// off-policy estimators (ope/off_policy.hpp):
//   auto           NCCL's pick from the logged cost table;
//   a policy spec  evaluated stationary: the distribution of its first decision on the context,
//                  warm-started from NCCL's costs as the plugin would (deterministic policies put
//                  probability 1 on one arm; random, egreedy and Thompson sampling spread it as
//                  their propensity() says).
// Learning targets over the whole log: ope/replay_method.hpp.
#include <memory>
#include <vector>

#include "ncclbot/ope/logged_arms.hpp"
#include "ncclbot/ope/off_policy.hpp"
#include "ncclbot/policy/policy.hpp"
#include "ncclbot/replay/policy_spec.hpp"
#include "ncclbot/replay/replay.hpp"

namespace ncclbot {

TargetProbabilities stationary_target(const PolicySpec& spec, const std::vector<OpeContext>& contexts,
                                      const LoggedArms& arms);

// A live policy of `spec` reset for logged context `c` as the plugin would: over the context's usable
// arms among the log's `arms`, each with NCCL's logged cost of its slot as the prior (NCCL's model
// does not see knobs). Over a slot log it holds the kNumArms slots; over a knob log the context's
// knob arms, as the plugin's knob mode does (`@slots` keeping it to NCCL's own knobs), at most
// kKnobReplayArms of them (UsageError naming the context past that). Arms are the log's indices.
class ContextPolicy {
 public:
  ContextPolicy(const PolicySpec& spec, const OpeContext& c, const LoggedArms& arms);
  int select(StepRandom& rng);  // -1: none
  void update(int arm, double latency_us);
  // The distribution of the policy's first decision in logged context `context` (its random stream),
  // by arm of the log; UsageError naming `name` when the policy states no probabilities.
  std::vector<double> first_decision(uint64_t context, const std::string& name);

 private:
  std::unique_ptr<AnyPolicy> slots_;                    // a slot log
  std::unique_ptr<AnyPolicyT<kKnobReplayArms>> knobs_;  // a knob log
  size_t logged_arms_ = 0;
  std::vector<int> logged_;    // a knob log: the policy's index -> the log's
  std::vector<int> position_;  // a knob log: the log's index -> the policy's (-1: not its arm)
  std::vector<Arm> arms_;      // what the policy's context points at
  std::vector<float> prior_;
  ArmMaskT<kKnobReplayArms> knob_mask_;
  ArmMask slot_mask_;
};

}  // namespace ncclbot
