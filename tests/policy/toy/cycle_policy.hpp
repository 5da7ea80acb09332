#pragma once
// `cycle:stride`, a toy policy added the way docs/replay.md "Adding a policy" says: this header, with
// its registry lines at the end, and nothing else. It plays the valid arms in turn, `stride` arms
// apart: call t plays arm[(t * stride) mod K]. It learns nothing; it exists to show that the spec
// parser, the engines, the bench defaults and the registry test take a new policy from its lines.
// The test build tests/policy/toy (toy_registry_tests) compiles with NCCLBOT_EXTRA_POLICY_HEADER
// naming this file, which policy/policy.hpp includes before its registry.
#include "ncclbot/policy/arm_set.hpp"
#include "ncclbot/policy/policy_context.hpp"

namespace ncclbot {

template <int N>
struct CyclePolicyT {
  struct Params {
    int stride;
  };
  Params params;
  static constexpr bool kDeterministic = true;  // select() reads no random word: propensity 1
  ArmSetT<N> arms;
  int calls;  // latencies observed so far

  NCCLBOT_HD void reset(const PolicyContextT<N>& ctx) {
    arms.assign(ctx.mask);
    calls = 0;
  }
  NCCLBOT_HD int select(StepRandom&) const { return arms.k == 0 ? -1 : arms.slot[turn()]; }
  NCCLBOT_HD double propensity(int slot) const { return arms.k > 0 && slot == arms.slot[turn()] ? 1.0 : 0.0; }
  NCCLBOT_HD void update(int, double) { ++calls; }
  NCCLBOT_HD int commit(StepRandom& rng) const { return select(rng); }
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    f(&calls, 1, 0.0, 2147483647.0);
  }

 private:
  NCCLBOT_HD int turn() const { return int((int64_t(calls) * params.stride) % arms.k); }
};
using CyclePolicy = CyclePolicyT<kNumArms>;

}  // namespace ncclbot

// Its registry lines (in policy/policy.hpp itself for a policy of the project's own).
#define NCCLBOT_EXTRA_POLICY_KEYS(K) K(stride, int, 1, 1, 64) /* cycle: arms between turns */
#define NCCLBOT_EXTRA_POLICIES(X) X(kCycle, 15, CyclePolicyT, cycle, "cycle", kLive, stride)
