#pragma once
// `greedy:n0`: deterministic, warm-started from the prior. With N_i and mean_i of arm_stats.hpp
// (n0 pseudo-pulls at the prior's value), it plays the lowest-slot arm with N_i = 0 if any, else
// argmin_i mean_i (ties: lowest slot). n0 = 0: play each arm once, then exploit. Committed arm:
// argmin of the means over the arms observed so far.
#include <cmath>

#include "ncclbot/policy/arm_stats.hpp"

namespace ncclbot {

struct GreedyPolicy {
  struct Params {
    double n0;
  };
  Params params;
  static constexpr bool kDeterministic = true;  // select() reads no random word: propensity 1
  ArmStats stats;

  NCCLBOT_HD void reset(const PolicyContext& ctx) { stats.reset(ctx, params.n0, ObsScale::kLinear); }
  NCCLBOT_HD int select(StepRandom&) {
    if (stats.arms.k == 0) return -1;
    const int j = stats.untried > 0 ? stats.first_untried() : stats.argmin_mean();
    return stats.arms.slot[j];
  }
  // With decisions pending (policy_context.hpp): a pull at an arm's current mean changes no mean, so
  // only the cold start differs: an arm with a pull pending is no longer untried. While every
  // unobserved arm has one pending, the best observed arm, or with none observed the fewest pulls
  // (lowest slot): the batch does not probe one arm over and over before its first latency.
  NCCLBOT_HD int select_pending(StepRandom& rng, const PendingPulls& pending) {
    if (stats.arms.k == 0 || stats.untried == 0) return select(rng);
    int fewest = 0;
    double fewest_pulls = HUGE_VAL;
    for (int j = 0; j < stats.arms.k; ++j) {
      const double pulls = stats.count[j] + double(pending.count[stats.arms.slot[j]]);
      if (pulls == 0.0) return stats.arms.slot[j];
      if (pulls < fewest_pulls) {
        fewest_pulls = pulls;
        fewest = j;
      }
    }
    const int best = stats.argmin_mean();
    return stats.arms.slot[best >= 0 ? best : fewest];
  }
  NCCLBOT_HD void update(int slot, double latency_us) { stats.add(stats.arms.index[slot], latency_us); }
  NCCLBOT_HD int commit(StepRandom&) const { return stats.committed_slot(); }
  template <typename F>
  NCCLBOT_HD void visit_state(F&& f) {
    stats.visit_state(f);
  }
};

}  // namespace ncclbot
