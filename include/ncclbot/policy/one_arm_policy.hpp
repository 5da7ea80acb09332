#pragma once
// What the policies that never learn share (`auto`, `oracle`, a frozen per-context decision): one
// arm, chosen by the policy's reset() into `pick` and played at every step; no parameters, no
// random word, nothing learned. Each derives from this and adds its reset().
#include "ncclbot/core/hd.hpp"
#include "ncclbot/policy/policy_context.hpp"

namespace ncclbot {

struct OneArmPolicy {
  struct Params {};
  Params params;
  static constexpr bool kDeterministic = true;  // select() reads no random word: propensity 1
  int pick;

  NCCLBOT_HD int select(StepRandom&) { return pick; }
  NCCLBOT_HD void update(int, double) {}
  NCCLBOT_HD int commit(StepRandom&) const { return pick; }
  // Nothing learned: reset() rebuilds everything (tuner plugin state file).
  template <typename F>
  NCCLBOT_HD void visit_state(F&&) {}
};

}  // namespace ncclbot
